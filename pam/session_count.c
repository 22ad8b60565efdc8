#include "session_count.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A count beyond this is damage, not sessions. */
#define MAXIMUM_COUNT 1000000L

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

/* flock without blocking, retried until the deadline. */
static bool lock_within(int fd, const struct pp_deadline *deadline)
{
    const struct timespec pause = {.tv_sec = 0, .tv_nsec = 10 * 1000000L};
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return true;
        if ((errno != EWOULDBLOCK && errno != EINTR) || pp_deadline_left(deadline) == 0)
            return false;
        nanosleep(&pause, NULL);
    }
}

long pp_sessions_change(uid_t uid, int change, const struct pp_deadline *deadline, char *why, size_t why_size)
{
    if (geteuid() != 0) {
        snprintf(why, why_size, "sessions are counted only when the session is opened as root");
        return -1;
    }
    if (!safe_directory("/run/protfs", 0755, why, why_size) || !safe_directory(PP_SESSIONS_DIRECTORY, 0700, why, why_size))
        return -1;
    char path[64];
    snprintf(path, sizeof path, "%s/%u", PP_SESSIONS_DIRECTORY, (unsigned)uid);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (!lock_within(fd, deadline)) {
        snprintf(why, why_size, "cannot lock %s in time: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    char text[32] = {0};
    ssize_t got = pread(fd, text, sizeof text - 1, 0);
    long count = got > 0 ? strtol(text, NULL, 10) : 0;
    if (count < 0 || count > MAXIMUM_COUNT)
        count = 0;
    count += change;
    if (count < 0)
        count = 0;
    int length = snprintf(text, sizeof text, "%ld\n", count);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)length, 0) != length) {
        snprintf(why, why_size, "cannot write %s: %s", path, strerror(errno));
        count = -1;
    }
    close(fd); /* releases the lock */
    return count;
}
