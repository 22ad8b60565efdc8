// The C side of ProtfsCrypto: OpenSSL's allocator routed to locked memory (so the content
// ciphers' key schedules, which OpenSSL allocates itself, are never swapped or dumped and
// are wiped when freed), and whether the CPU computes AES-GCM in hardware.
#ifndef PROTFS_CRYPTO_H
#define PROTFS_CRYPTO_H
#include <stddef.h>

// Routes OpenSSL's malloc, realloc and free to the locked heap. Must run before any other
// OpenSSL call of the process (OpenSSL refuses once it has allocated); returns 1 when the
// routing is in place (this call or an earlier one made it), 0 when OpenSSL refused.
int protfs_locked_heap_install(void);

struct protfs_locked_heap_usage {
    int installed;           // OpenSSL allocates here
    int lock_failed;         // the kernel refused to lock some region (RLIMIT_MEMLOCK)
    size_t regions;          // mapped regions
    size_t mapped_bytes;     // bytes mapped for the heap
    size_t live_allocations; // blocks handed out and not yet freed
};
struct protfs_locked_heap_usage protfs_locked_heap_usage(void);

// True when `address` lies in memory the locked heap mapped (for tests).
int protfs_locked_heap_contains(const void *address);

// 1 when the CPU has AES and carry-less multiply instructions (x86-64: AES-NI and
// PCLMULQDQ; arm64: the AES and PMULL extensions), 0 otherwise.
int protfs_cpu_has_aes_gcm(void);

#endif
