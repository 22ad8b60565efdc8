// A small allocator over locked (as their pages are first touched), undumpable mappings for
// OpenSSL's own allocations.
// Blocks of power-of-two size classes (32 bytes to 64 KiB, a 16-byte header each) are cut
// from 256 KiB regions and kept on free lists, wiped when freed; larger blocks get a mapping
// of their own, wiped and unmapped when freed. Regions are never returned: the heap's size
// is its peak, which for the daemon is its open files' cipher contexts.
#define _GNU_SOURCE
#include "protfs_crypto.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { class_count = 12, smallest_shift = 5, region_bytes = 256 * 1024, large_class = 0xffff };

struct region {
    struct region *previous, *next;
    size_t bytes;
    size_t used; // how far blocks have been cut (small-block regions)
};

struct block {
    uint32_t size_class;
    uint32_t magic;
    size_t region_bytes; // large blocks: the mapping's size
};

#define BLOCK_MAGIC 0x70667368u
#define HEADER_BYTES (sizeof(struct block))
#define REGION_HEADER_BYTES ((sizeof(struct region) + 15) & ~(size_t)15)

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct region *regions;        // every mapping, small-block and large
static struct region *cutting;        // the small-block region blocks are cut from
static struct block *free_blocks[class_count];
static int installed, lock_failed;
static size_t region_count, mapped_bytes, live_allocations;

static size_t class_bytes(unsigned size_class) { return (size_t)1 << (size_class + smallest_shift); }

static void *user_pointer(struct block *b) { return (char *)b + HEADER_BYTES; }
static struct block *block_of(void *p) { return (struct block *)((char *)p - HEADER_BYTES); }

// Called with the lock held.
static struct region *map_region(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    // Locked as each page is first touched: only the pages blocks were cut from count
    // against RLIMIT_MEMLOCK's use, and every page that ever holds a context is locked.
    if (mlock2(p, bytes, MLOCK_ONFAULT) != 0) lock_failed = 1;
    (void)madvise(p, bytes, MADV_DONTDUMP);
    struct region *r = p;
    r->previous = NULL;
    r->next = regions;
    if (regions) regions->previous = r;
    regions = r;
    r->bytes = bytes;
    r->used = REGION_HEADER_BYTES;
    region_count += 1;
    mapped_bytes += bytes;
    return r;
}

static void unmap_region(struct region *r) {
    if (r->previous) r->previous->next = r->next; else regions = r->next;
    if (r->next) r->next->previous = r->previous;
    region_count -= 1;
    mapped_bytes -= r->bytes;
    size_t bytes = r->bytes;
    explicit_bzero(r, bytes);
    munlock(r, bytes);
    munmap(r, bytes);
}

static unsigned size_class_for(size_t bytes) {
    unsigned c = 0;
    while (c < class_count && class_bytes(c) < bytes + HEADER_BYTES) c += 1;
    return c;
}

static void *heap_malloc(size_t bytes, const char *file, int line) {
    (void)file;
    (void)line;
    if (bytes == 0) bytes = 1;
    unsigned c = size_class_for(bytes);
    pthread_mutex_lock(&heap_lock);
    struct block *b = NULL;
    if (c == class_count) {
        size_t page = 4096, want = REGION_HEADER_BYTES + HEADER_BYTES + bytes;
        if (want < bytes || want > SIZE_MAX - page) goto done; // overflow
        struct region *r = map_region((want + page - 1) / page * page);
        if (!r) goto done;
        b = (struct block *)((char *)r + REGION_HEADER_BYTES);
        b->size_class = large_class;
        b->region_bytes = r->bytes;
    } else if (free_blocks[c]) {
        b = free_blocks[c];
        free_blocks[c] = *(struct block **)user_pointer(b);
        *(struct block **)user_pointer(b) = NULL;
    } else {
        if (!cutting || cutting->bytes - cutting->used < class_bytes(c)) {
            cutting = map_region(region_bytes);
            if (!cutting) goto done;
        }
        b = (struct block *)((char *)cutting + cutting->used);
        cutting->used += class_bytes(c);
        b->size_class = c;
        b->region_bytes = 0;
    }
    b->magic = BLOCK_MAGIC;
    live_allocations += 1;
done:
    pthread_mutex_unlock(&heap_lock);
    return b ? user_pointer(b) : NULL;
}

static size_t capacity_of(struct block *b) {
    if (b->size_class == large_class) return b->region_bytes - REGION_HEADER_BYTES - HEADER_BYTES;
    return class_bytes(b->size_class) - HEADER_BYTES;
}

static void heap_free(void *p, const char *file, int line) {
    (void)file;
    (void)line;
    if (!p) return;
    struct block *b = block_of(p);
    if (b->magic != BLOCK_MAGIC) abort(); // not ours: a double free or a foreign pointer
    explicit_bzero(p, capacity_of(b));
    pthread_mutex_lock(&heap_lock);
    b->magic = 0;
    live_allocations -= 1;
    if (b->size_class == large_class) {
        unmap_region((struct region *)((char *)b - REGION_HEADER_BYTES));
    } else {
        *(struct block **)p = free_blocks[b->size_class];
        free_blocks[b->size_class] = b;
    }
    pthread_mutex_unlock(&heap_lock);
}

static void *heap_realloc(void *p, size_t bytes, const char *file, int line) {
    if (!p) return heap_malloc(bytes, file, line);
    if (bytes == 0) {
        heap_free(p, file, line);
        return NULL;
    }
    size_t capacity = capacity_of(block_of(p));
    if (bytes <= capacity) return p;
    void *moved = heap_malloc(bytes, file, line);
    if (!moved) return NULL;
    memcpy(moved, p, capacity);
    heap_free(p, file, line);
    return moved;
}

int protfs_locked_heap_install(void) {
    pthread_mutex_lock(&heap_lock);
    if (!installed) installed = CRYPTO_set_mem_functions(heap_malloc, heap_realloc, heap_free);
    int result = installed;
    pthread_mutex_unlock(&heap_lock);
    return result;
}

struct protfs_locked_heap_usage protfs_locked_heap_usage(void) {
    pthread_mutex_lock(&heap_lock);
    struct protfs_locked_heap_usage usage = {installed, lock_failed, region_count, mapped_bytes, live_allocations};
    pthread_mutex_unlock(&heap_lock);
    return usage;
}

int protfs_locked_heap_contains(const void *address) {
    int found = 0;
    pthread_mutex_lock(&heap_lock);
    for (struct region *r = regions; r && !found; r = r->next) {
        found = (const char *)address >= (const char *)r && (const char *)address < (const char *)r + r->bytes;
    }
    pthread_mutex_unlock(&heap_lock);
    return found;
}
