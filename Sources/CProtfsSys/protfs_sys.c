#define _GNU_SOURCE
#include "protfs_sys.h"
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

// The same number on every architecture: it came after the tables were unified.
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

const int protfs_O_PATH = O_PATH;
const int protfs_O_DIRECT = O_DIRECT;
const int protfs_O_NOATIME = O_NOATIME;
const int protfs_AT_EMPTY_PATH = AT_EMPTY_PATH;
const unsigned protfs_RENAME_NOREPLACE = RENAME_NOREPLACE;
const unsigned protfs_RENAME_EXCHANGE = RENAME_EXCHANGE;
const unsigned protfs_RENAME_WHITEOUT = RENAME_WHITEOUT;
const int protfs_FALLOC_FL_KEEP_SIZE = FALLOC_FL_KEEP_SIZE;
const int protfs_FALLOC_FL_PUNCH_HOLE = FALLOC_FL_PUNCH_HOLE;
const int protfs_FALLOC_FL_ZERO_RANGE = FALLOC_FL_ZERO_RANGE;
const long protfs_UTIME_NOW = UTIME_NOW;
const long protfs_UTIME_OMIT = UTIME_OMIT;
const unsigned long protfs_ST_NOEXEC = ST_NOEXEC;
const int protfs_SEEK_DATA = SEEK_DATA;
const int protfs_SEEK_HOLE = SEEK_HOLE;

int protfs_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

int protfs_fallocate(int fd, int mode, off_t offset, off_t len) {
    return fallocate(fd, mode, offset, len);
}

int protfs_syncfs(int fd) { return syncfs(fd); }

int protfs_mlock_on_fault(void *address, size_t length) { return mlock2(address, length, MLOCK_ONFAULT); }

int protfs_exclude_from_core_dumps(void *address, size_t length) { return madvise(address, length, MADV_DONTDUMP); }

void protfs_wipe(void *address, size_t length) { explicit_bzero(address, length); }

int protfs_fchmodat2(int dirfd, const char *path, mode_t mode, int flags) {
    return (int)syscall(SYS_fchmodat2, dirfd, path, mode, flags);
}

int protfs_peer_credentials(int fd, uid_t *uid, gid_t *gid, pid_t *pid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *uid = cred.uid;
    *gid = cred.gid;
    *pid = cred.pid;
    return 0;
}

int protfs_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC); }

int protfs_open_tmpfile(const char *directory, mode_t mode) {
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
}

int protfs_link_tmpfile(int fd, const char *path) {
    char procPath[64];
    snprintf(procPath, sizeof procPath, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, procPath, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

int protfs_send_descriptor(int socket, int passed) {
    char byte = 0;
    struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(int))]; } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space,
                              .msg_controllen = sizeof control.space };
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &passed, sizeof(int));
    return (int)sendmsg(socket, &message, MSG_NOSIGNAL);
}

long protfs_receive_descriptor(int socket, int *passed) {
    *passed = -1;
    char byte;
    struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
    // Room for several, so that extra descriptors a client sends along arrive and are closed
    // here rather than truncated away unseen.
    union { struct cmsghdr header; char space[CMSG_SPACE(16 * sizeof(int))]; } control;
    struct msghdr message = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space,
                              .msg_controllen = sizeof control.space };
    ssize_t n = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (n <= 0) return n;
    for (struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message); cmsg; cmsg = CMSG_NXTHDR(&message, cmsg)) {
        if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
            if (*passed == -1) *passed = fd; else close(fd);
        }
    }
    return n;
}

int protfs_set_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
int protfs_is_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
int protfs_limit_malloc_arenas(int count) { return mallopt(M_ARENA_MAX, count); }

int protfs_spawn_in_new_session(const char *path, char *const argv[], char *const envp[], int passed, int target,
                                pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) return error;
    error = posix_spawnattr_init(&attributes);
    if (error == 0) {
        error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
        // dup2 onto itself clears close-on-exec (glibc 2.29 and later), so `passed` may be `target`.
        if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, passed, target);
        if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, target + 1);
        if (error == 0) error = posix_spawn(pid, path, &actions, &attributes, argv, envp);
        posix_spawnattr_destroy(&attributes);
    }
    posix_spawn_file_actions_destroy(&actions);
    return error;
}

int protfs_spawn_with_output(const char *file, char *const argv[], char *const envp[], int output, int null_input,
                             pid_t *pid) {
    posix_spawn_file_actions_t actions;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) return error;
    if (null_input) error = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, output, STDOUT_FILENO);
    if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    if (error == 0) error = posix_spawnp(pid, file, &actions, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    return error;
}

int protfs_pipe_cloexec(int ends[2]) { return pipe2(ends, O_CLOEXEC); }
int protfs_socketpair_cloexec(int ends[2]) { return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends); }

int protfs_errno(void) { return errno; }
void protfs_set_errno(int value) { errno = value; }

void protfs_write_all(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t n = write(fd, bytes, count);
        if (n < 0) { if (errno == EINTR) continue; return; }
        bytes += n;
        count -= (size_t)n;
    }
}

int protfs_rwlock_init_writer_preferring(pthread_rwlock_t *lock) {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    int rc = pthread_rwlock_init(lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    return rc;
}

static cpu_set_t unpinned_cpus;
static int unpinned_cpus_known;
static pthread_once_t unpinned_cpus_once = PTHREAD_ONCE_INIT;
static __thread int pinned_on_purpose;
static __thread int inherited_pinning_checked;

static void remember_unpinned_cpus(void) {
    if (sched_getaffinity(0, sizeof(unpinned_cpus), &unpinned_cpus) == 0)
        __atomic_store_n(&unpinned_cpus_known, 1, __ATOMIC_RELEASE);
}

int protfs_pin_thread_to_cpu(int cpu) {
    pthread_once(&unpinned_cpus_once, remember_unpinned_cpus);
    pinned_on_purpose = 1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void protfs_undo_inherited_pinning(void) {
    if (pinned_on_purpose || inherited_pinning_checked) return;
    inherited_pinning_checked = 1;
    // Nothing pinned yet: this thread was not created by a pinned one. (One created later
    // is a new thread, and checks for itself.)
    if (!__atomic_load_n(&unpinned_cpus_known, __ATOMIC_ACQUIRE)) return;
    pthread_setaffinity_np(pthread_self(), sizeof(unpinned_cpus), &unpinned_cpus);
}
