// GNU names that Swift's prebuilt Glibc module leaves out (it is built without
// _GNU_SOURCE), exported as plain constants and functions.
#ifndef PROTFS_SYS_H
#define PROTFS_SYS_H
#include <sys/types.h>
#include <stdint.h>
#include <sys/xattr.h>

extern const int protfs_O_PATH;
extern const int protfs_O_DIRECT;
extern const int protfs_O_NOATIME;
extern const int protfs_AT_EMPTY_PATH;
extern const unsigned protfs_RENAME_NOREPLACE;
extern const unsigned protfs_RENAME_EXCHANGE;
extern const unsigned protfs_RENAME_WHITEOUT;
extern const int protfs_FALLOC_FL_KEEP_SIZE;
extern const int protfs_FALLOC_FL_PUNCH_HOLE;
extern const int protfs_FALLOC_FL_ZERO_RANGE;
extern const long protfs_UTIME_NOW;
extern const long protfs_UTIME_OMIT;
extern const unsigned long protfs_ST_NOEXEC;
extern const int protfs_SEEK_DATA;
extern const int protfs_SEEK_HOLE;

int protfs_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags);
int protfs_fallocate(int fd, int mode, off_t offset, off_t len);
int protfs_syncfs(int fd);
// mlock2(MLOCK_ONFAULT): pages are locked as they are first touched, none allocated before.
int protfs_mlock_on_fault(void *address, size_t length);
// madvise(MADV_DONTDUMP).
int protfs_exclude_from_core_dumps(void *address, size_t length);
// explicit_bzero: zeroes memory in a way the compiler cannot elide.
void protfs_wipe(void *address, size_t length);
/// fchmodat2(2) (Linux 6.6), which takes AT_EMPTY_PATH; -1 with ENOSYS on older kernels.
int protfs_fchmodat2(int dirfd, const char *path, mode_t mode, int flags);
/// Credentials of the peer of a connected Unix socket (SO_PEERCRED).
int protfs_peer_credentials(int fd, uid_t *uid, gid_t *gid, pid_t *pid);
/// accept4(fd, NULL, NULL, SOCK_CLOEXEC): the accepted descriptor never leaks into a child.
int protfs_accept_cloexec(int fd);
/// open(directory, O_TMPFILE|O_WRONLY|O_CLOEXEC, mode): a file without a name, which goes
/// away with its last descriptor unless `protfs_link_tmpfile` names it.
int protfs_open_tmpfile(const char *directory, mode_t mode);
/// Gives the unnamed file `fd` the name `path` (linkat through /proc/self/fd); EEXIST when
/// the name is taken, which it never replaces.
int protfs_link_tmpfile(int fd, const char *path);
/// Sends one byte 0 carrying `passed` (SCM_RIGHTS) on a connected Unix socket, without SIGPIPE.
int protfs_send_descriptor(int socket, int passed);
/// Receives one byte and the descriptor it carries (close-on-exec) into `*passed`, -1 when
/// none came; any other descriptor sent along is closed. Returns recvmsg's result.
long protfs_receive_descriptor(int socket, int *passed);
/// Makes the process undumpable (no core, no ptrace by others, /proc/PID/mem root-only).
int protfs_set_undumpable(void);
int protfs_is_dumpable(void);
/// mallopt(M_ARENA_MAX, count): at most `count` malloc arenas, whatever the thread count.
int protfs_limit_malloc_arenas(int count);
/// posix_spawn of `path` in a session of its own (setsid), with `passed` as descriptor `target`
/// and every descriptor above `target` closed; 0, or the error number.
int protfs_spawn_in_new_session(const char *path, char *const argv[], char *const envp[], int passed, int target,
                                pid_t *pid);
/// posix_spawnp of `file` (searched in PATH) with `output` as its standard output and every
/// descriptor above 2 closed; standard error is the caller's, standard input too unless
/// `null_input` (then /dev/null). 0, or the error number.
int protfs_spawn_with_output(const char *file, char *const argv[], char *const envp[], int output, int null_input,
                             pid_t *pid);
/// pipe2(ends, O_CLOEXEC) (Swift's Glibc module hides pipe2): both ends close on exec, with no
/// moment in which a concurrent spawn could inherit them.
int protfs_pipe_cloexec(int ends[2]);
/// socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends).
int protfs_socketpair_cloexec(int ends[2]);
int protfs_errno(void);
void protfs_set_errno(int value);
/// Writes all of `bytes` to `fd`, retrying on EINTR and short writes; used for stderr without
/// touching the `stderr` global (mutable state Swift 6 rejects).
void protfs_write_all(int fd, const char *bytes, size_t count);
#include <pthread.h>
/// Binds the calling thread to `cpu` (0 or an errno). A thread it creates inherits that:
/// `protfs_undo_inherited_pinning` lets such a thread run anywhere again.
int protfs_pin_thread_to_cpu(int cpu);
/// Gives the calling thread back the CPUs the process had before any thread was pinned,
/// unless it pinned itself: for pool threads created by a pinned thread. Checks once per thread.
void protfs_undo_inherited_pinning(void);
/// Initialises a rwlock that prefers writers, so a lock transition is not starved by a
/// steady stream of readers (glibc's default prefers readers).
int protfs_rwlock_init_writer_preferring(pthread_rwlock_t *lock);
#endif
