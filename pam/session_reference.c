#include "session_reference.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Creates `path` as a root-owned directory of `mode` if missing; true when it is one,
 * closed to others' writes. */
static bool safe_directory(const char *path, mode_t mode, char *why, size_t why_size)
{
    if (mkdir(path, mode) != 0 && errno != EEXIST) {
        snprintf(why, why_size, "cannot create %s: %s", path, strerror(errno));
        return false;
    }
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) != 0) {
        snprintf(why, why_size, "%s is not a directory owned by root and closed to others", path);
        return false;
    }
    return true;
}

/* The uid's file, opened (created if missing) as root in root's directory; -1 with `why`. */
static int open_share_file(uid_t uid, char *why, size_t why_size)
{
    if (geteuid() != 0) {
        snprintf(why, why_size, "sessions are counted only when the session is opened as root");
        return -1;
    }
    if (!safe_directory("/run/protfs", 0755, why, why_size) || !safe_directory(PP_SESSIONS_DIRECTORY, 0700, why, why_size))
        return -1;
    char path[64];
    snprintf(path, sizeof path, "%s/%u", PP_SESSIONS_DIRECTORY, (unsigned)uid);
    int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
    if (fd < 0)
        snprintf(why, why_size, "cannot open %s: %s", path, strerror(errno));
    return fd;
}

int pp_session_hold(uid_t uid, const struct pp_deadline *deadline, char *why, size_t why_size)
{
    int fd = open_share_file(uid, why, why_size);
    if (fd < 0)
        return -1;
    /* Without blocking, retried: a closing session holds the lock alone for a moment while
     * it looks for shares. */
    const struct timespec pause = {.tv_sec = 0, .tv_nsec = 10 * 1000000L};
    while (flock(fd, LOCK_SH | LOCK_NB) != 0) {
        if ((errno != EWOULDBLOCK && errno != EINTR) || pp_deadline_left(deadline) == 0) {
            snprintf(why, why_size, "cannot take a share of %s/%u in time: %s", PP_SESSIONS_DIRECTORY, (unsigned)uid,
                     strerror(errno));
            close(fd);
            return -1;
        }
        nanosleep(&pause, NULL);
    }
    return fd;
}

int pp_session_none_held(uid_t uid, char *why, size_t why_size)
{
    int fd = open_share_file(uid, why, why_size);
    if (fd < 0)
        return -1;
    int none = 1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        /* Held by a session, or by another closing session, which then finds none and locks. */
        none = errno == EWOULDBLOCK ? 0 : -1;
        if (none < 0)
            snprintf(why, why_size, "cannot look for shares in %s/%u: %s", PP_SESSIONS_DIRECTORY, (unsigned)uid,
                     strerror(errno));
    }
    close(fd); /* releases the lock */
    return none;
}
