// FUSE over io_uring (Linux 6.14+), by raw system calls: one io_uring per queue, its shared
// rings mapped, commands written straight into 128-byte SQEs. Debian 12's headers are Linux
// 6.1's, which know io_uring but not FUSE's ring protocol: its structures are declared here,
// checked against the kernel's sizes (include/uapi/linux/fuse.h).
#ifndef PROTFS_URING_H
#define PROTFS_URING_H
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/// FUSE_OVER_IO_URING, INIT flag bit 41: bit 9 of `flags2`.
#define PROTFS_FUSE_OVER_IO_URING_FLAGS2 (1u << 9)
/// The SQE's command: register an entry's buffers, or commit its reply and fetch the next.
#define PROTFS_FUSE_IO_URING_CMD_REGISTER 1u
#define PROTFS_FUSE_IO_URING_CMD_COMMIT_AND_FETCH 2u

/// struct fuse_uring_ent_in_out
struct protfs_fuse_uring_ent_in_out {
    uint64_t flags;
    /// The request's id, given back with its reply.
    uint64_t commit_id;
    /// Bytes of payload in the entry's payload buffer (the kernel's, then the reply's).
    uint32_t payload_sz;
    uint32_t padding;
    uint64_t reserved;
};

/// struct fuse_uring_req_header: what the kernel writes into an entry's first buffer.
struct protfs_fuse_uring_req_header {
    /// fuse_in_header on the way in, fuse_out_header on the way out.
    char in_out[128];
    /// The request's first argument (its per-opcode header), when it has one.
    char op_in[128];
    struct protfs_fuse_uring_ent_in_out ring_ent_in_out;
};

/// The kernel's io_uring and the parts of its rings this process mapped.
struct protfs_ring {
    int fd;
    unsigned sq_entries, cq_entries;
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    void *sqes;            // 128-byte SQEs
    void *cqes;            // struct io_uring_cqe
    void *sq_map, *cq_map;
    size_t sq_map_size, cq_map_size, sqes_size;
    /// SQEs written since the last submission.
    unsigned unsubmitted;
};

/// A ring of `entries` SQEs for one thread (single issuer, task work run only when that
/// thread waits), with `device` (/dev/fuse) as its fixed file 0. 0 or a negative errno.
int protfs_ring_open(struct protfs_ring *ring, unsigned entries, int device);
void protfs_ring_close(struct protfs_ring *ring);
/// Queues FUSE_IO_URING_CMD_REGISTER of an entry's two buffers (`buffers[0]` the header,
/// `buffers[1]` the payload; they must outlive the ring). 0, or -EBUSY with the SQ full.
int protfs_ring_queue_register(struct protfs_ring *ring, uint16_t queue, const struct iovec *buffers, uint64_t user_data);
/// Queues FUSE_IO_URING_CMD_COMMIT_AND_FETCH of request `commit_id`'s reply.
int protfs_ring_queue_commit(struct protfs_ring *ring, uint16_t queue, uint64_t commit_id, uint64_t user_data);
/// Queues a one-shot poll for `fd` becoming readable.
int protfs_ring_queue_poll(struct protfs_ring *ring, int fd, uint64_t user_data);
/// Submits what was queued, runs the ring's pending work (which posts completions), and
/// waits until `wait_for` completions are there (0: does not wait), for at most
/// `timeout_ns` nanoseconds if that is not negative. Returns 0 or a negative errno (-EINTR:
/// interrupted, -ETIME: timed out; nothing lost either way).
int protfs_ring_enter(struct protfs_ring *ring, unsigned wait_for, int64_t timeout_ns);
/// Takes the oldest completion, if any: 1 with `user_data` and `result` set, else 0.
int protfs_ring_take_completion(struct protfs_ring *ring, uint64_t *user_data, int32_t *result);
/// Whether a completion is waiting (a look at shared memory, no system call).
int protfs_ring_has_completion(const struct protfs_ring *ring);

/// How many queues the kernel's ring has: one per possible CPU (the highest index in
/// /sys/devices/system/cpu/possible, plus one); 0 if unknown.
int protfs_possible_cpus(void);
#endif
