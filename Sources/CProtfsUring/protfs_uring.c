#define _GNU_SOURCE
#include "protfs_uring.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

// The FUSE ring protocol's sizes, as the kernel declares them (a mismatch would have the
// kernel refuse the header buffer, or read the command from the wrong place).
_Static_assert(sizeof(struct protfs_fuse_uring_ent_in_out) == 32, "fuse_uring_ent_in_out");
_Static_assert(sizeof(struct protfs_fuse_uring_req_header) == 288, "fuse_uring_req_header");
_Static_assert(offsetof(struct protfs_fuse_uring_req_header, ring_ent_in_out) == 256, "ring_ent_in_out");

/// struct fuse_uring_cmd_req, in the SQE's command area.
struct fuse_uring_cmd_req {
    uint64_t flags;
    uint64_t commit_id;
    uint16_t qid;
    uint8_t padding[6];
};
_Static_assert(sizeof(struct fuse_uring_cmd_req) == 24, "fuse_uring_cmd_req");
// With IORING_SETUP_SQE128 the command area is 80 bytes from `cmd`.
_Static_assert(offsetof(struct io_uring_sqe, cmd) + 80 == 128, "SQE128 command area");

int protfs_ring_open(struct protfs_ring *ring, unsigned entries, int device) {
    memset(ring, 0, sizeof(*ring));
    ring->fd = -1;
    struct io_uring_params params;
    memset(&params, 0, sizeof(params));
    params.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    params.cq_entries = entries * 2;
    int fd = (int)syscall(__NR_io_uring_setup, entries, &params);
    if (fd < 0) return -errno;
    ring->fd = fd;
    ring->sq_entries = params.sq_entries;
    ring->cq_entries = params.cq_entries;
    ring->sq_map_size = params.sq_off.array + params.sq_entries * sizeof(unsigned);
    ring->cq_map_size = params.cq_off.cqes + params.cq_entries * sizeof(struct io_uring_cqe);
    if (params.features & IORING_FEAT_SINGLE_MMAP) {
        if (ring->cq_map_size > ring->sq_map_size) ring->sq_map_size = ring->cq_map_size;
        ring->cq_map_size = ring->sq_map_size;
    }
    ring->sq_map = mmap(NULL, ring->sq_map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
    if (ring->sq_map == MAP_FAILED) goto failed;
    if (params.features & IORING_FEAT_SINGLE_MMAP) {
        ring->cq_map = ring->sq_map;
    } else {
        ring->cq_map = mmap(NULL, ring->cq_map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
        if (ring->cq_map == MAP_FAILED) goto failed;
    }
    ring->sqes_size = params.sq_entries * 128;
    ring->sqes = mmap(NULL, ring->sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
    if (ring->sqes == MAP_FAILED) goto failed;
    char *sq = ring->sq_map, *cq = ring->cq_map;
    ring->sq_head = (unsigned *)(sq + params.sq_off.head);
    ring->sq_tail = (unsigned *)(sq + params.sq_off.tail);
    ring->sq_mask = (unsigned *)(sq + params.sq_off.ring_mask);
    ring->sq_array = (unsigned *)(sq + params.sq_off.array);
    ring->cq_head = (unsigned *)(cq + params.cq_off.head);
    ring->cq_tail = (unsigned *)(cq + params.cq_off.tail);
    ring->cq_mask = (unsigned *)(cq + params.cq_off.ring_mask);
    ring->cqes = cq + params.cq_off.cqes;
    // Each SQE slot is used in order: the array maps slot i to SQE i once and for all.
    for (unsigned i = 0; i < ring->sq_entries; i++) ring->sq_array[i] = i;
    int files[1] = {device};
    if (syscall(__NR_io_uring_register, fd, IORING_REGISTER_FILES, files, 1) < 0) goto failed;
    return 0;
failed:;
    int error = errno ? errno : ENOMEM;
    if (ring->sq_map == MAP_FAILED) ring->sq_map = NULL;
    if (ring->cq_map == MAP_FAILED) ring->cq_map = NULL;
    if (ring->sqes == MAP_FAILED) ring->sqes = NULL;
    protfs_ring_close(ring);
    return -error;
}

void protfs_ring_close(struct protfs_ring *ring) {
    if (ring->sqes) munmap(ring->sqes, ring->sqes_size);
    if (ring->cq_map && ring->cq_map != ring->sq_map) munmap(ring->cq_map, ring->cq_map_size);
    if (ring->sq_map) munmap(ring->sq_map, ring->sq_map_size);
    if (ring->fd >= 0) close(ring->fd);
    memset(ring, 0, sizeof(*ring));
    ring->fd = -1;
}

/// The next free SQE, zeroed, or NULL with the submission queue full.
static struct io_uring_sqe *next_sqe(struct protfs_ring *ring) {
    unsigned head = __atomic_load_n(ring->sq_head, __ATOMIC_ACQUIRE);
    unsigned tail = *ring->sq_tail;
    if (tail - head >= ring->sq_entries) return NULL;
    struct io_uring_sqe *sqe = (struct io_uring_sqe *)((char *)ring->sqes + (size_t)(tail & *ring->sq_mask) * 128);
    memset(sqe, 0, 128);
    return sqe;
}

static void publish(struct protfs_ring *ring) {
    __atomic_store_n(ring->sq_tail, *ring->sq_tail + 1, __ATOMIC_RELEASE);
    ring->unsubmitted++;
}

static int queue_command(struct protfs_ring *ring, uint32_t command, uint16_t queue, uint64_t commit_id,
                         const struct iovec *buffers, uint64_t user_data) {
    struct io_uring_sqe *sqe = next_sqe(ring);
    if (!sqe) return -EBUSY;
    sqe->opcode = IORING_OP_URING_CMD;
    sqe->flags = IOSQE_FIXED_FILE;
    sqe->fd = 0;
    sqe->cmd_op = command;
    sqe->user_data = user_data;
    if (buffers) {
        sqe->addr = (uint64_t)(uintptr_t)buffers;
        sqe->len = 2;
    }
    struct fuse_uring_cmd_req *request = (struct fuse_uring_cmd_req *)sqe->cmd;
    request->qid = queue;
    request->commit_id = commit_id;
    publish(ring);
    return 0;
}

int protfs_ring_queue_register(struct protfs_ring *ring, uint16_t queue, const struct iovec *buffers, uint64_t user_data) {
    return queue_command(ring, PROTFS_FUSE_IO_URING_CMD_REGISTER, queue, 0, buffers, user_data);
}

int protfs_ring_queue_commit(struct protfs_ring *ring, uint16_t queue, uint64_t commit_id, uint64_t user_data) {
    return queue_command(ring, PROTFS_FUSE_IO_URING_CMD_COMMIT_AND_FETCH, queue, commit_id, NULL, user_data);
}

int protfs_ring_queue_poll(struct protfs_ring *ring, int fd, uint64_t user_data) {
    struct io_uring_sqe *sqe = next_sqe(ring);
    if (!sqe) return -EBUSY;
    sqe->opcode = IORING_OP_POLL_ADD;
    sqe->fd = fd;
    sqe->poll32_events = POLLIN;
    sqe->user_data = user_data;
    publish(ring);
    return 0;
}

int protfs_ring_enter(struct protfs_ring *ring, unsigned wait_for, int64_t timeout_ns) {
    unsigned submit = ring->unsubmitted;
    long done;
    if (timeout_ns >= 0) {
        struct __kernel_timespec time = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
        struct io_uring_getevents_arg argument;
        memset(&argument, 0, sizeof(argument));
        argument.ts = (uint64_t)(uintptr_t)&time;
        done = syscall(__NR_io_uring_enter, ring->fd, submit, wait_for, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
                       &argument, sizeof(argument));
    } else {
        done = syscall(__NR_io_uring_enter, ring->fd, submit, wait_for, IORING_ENTER_GETEVENTS, NULL, 0);
    }
    if (done < 0) return -errno;
    ring->unsubmitted -= (unsigned)done < submit ? (unsigned)done : submit;
    return 0;
}

int protfs_ring_has_completion(const struct protfs_ring *ring) {
    return __atomic_load_n(ring->cq_tail, __ATOMIC_ACQUIRE) != *ring->cq_head;
}

int protfs_ring_take_completion(struct protfs_ring *ring, uint64_t *user_data, int32_t *result) {
    unsigned head = *ring->cq_head;
    if (__atomic_load_n(ring->cq_tail, __ATOMIC_ACQUIRE) == head) return 0;
    const struct io_uring_cqe *cqe = (const struct io_uring_cqe *)ring->cqes + (head & *ring->cq_mask);
    *user_data = cqe->user_data;
    *result = cqe->res;
    __atomic_store_n(ring->cq_head, head + 1, __ATOMIC_RELEASE);
    return 1;
}

int protfs_possible_cpus(void) {
    FILE *file = fopen("/sys/devices/system/cpu/possible", "re");
    if (!file) return 0;
    char line[256];
    int highest = -1;
    if (fgets(line, sizeof(line), file)) {
        // "0-3", "0,2-5": the highest number is what counts.
        for (char *p = line; *p;) {
            if (*p >= '0' && *p <= '9') {
                long value = strtol(p, &p, 10);
                if (value > highest) highest = (int)value;
            } else {
                p++;
            }
        }
    }
    fclose(file);
    return highest + 1;
}
