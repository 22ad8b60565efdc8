/* A point in time a login will not wait past: every wait of the module (connect, send,
 * reply, the session counter's lock) polls against one, so a hung daemon costs at most
 * the stage's bound (pam_protfs(8), "timeout"). */
#ifndef PROTFS_PAM_DEADLINE_H
#define PROTFS_PAM_DEADLINE_H

#include <time.h>

struct pp_deadline {
    struct timespec at; /* CLOCK_MONOTONIC */
};

static inline struct pp_deadline pp_deadline_after(int milliseconds)
{
    struct pp_deadline deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline.at);
    deadline.at.tv_sec += milliseconds / 1000;
    deadline.at.tv_nsec += (long)(milliseconds % 1000) * 1000000L;
    if (deadline.at.tv_nsec >= 1000000000L) {
        deadline.at.tv_sec += 1;
        deadline.at.tv_nsec -= 1000000000L;
    }
    return deadline;
}

/* Milliseconds left, 0 once passed. */
static inline int pp_deadline_left(const struct pp_deadline *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long left = (long long)(deadline->at.tv_sec - now.tv_sec) * 1000
                     + (deadline->at.tv_nsec - now.tv_nsec) / 1000000L;
    if (left <= 0)
        return 0;
    return left > 3600000 ? 3600000 : (int)left;
}

#endif
