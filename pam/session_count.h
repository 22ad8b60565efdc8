/* The user's open sessions, counted per uid in /run/protfs/sessions/UID under an
 * exclusive lock (flock), so that the last session to close locks the user's vaults. The
 * count starts over at boot (/run is a tmpfs); a session whose process was killed before
 * it closed is never subtracted, and then no close is the last one until the next boot. */
#ifndef PROTFS_PAM_SESSION_COUNT_H
#define PROTFS_PAM_SESSION_COUNT_H

#include <stddef.h>
#include <sys/types.h>

#include "deadline.h"

#define PP_SESSIONS_DIRECTORY "/run/protfs/sessions"

/* Adds `change` (+1 at open, -1 at close; never below 0) to the count of `uid` and
 * returns the new count, or -1 with `why` filled when the count cannot be kept (not root,
 * the lock not taken before `deadline`, an unsafe directory). */
long pp_sessions_change(uid_t uid, int change, const struct pp_deadline *deadline, char *why, size_t why_size);

#endif
