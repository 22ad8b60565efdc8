/* A session's reference: while a session lives, it holds a shared lock (flock) on
 * /run/protfs/sessions/UID through a descriptor kept in the session's PAM data. The kernel
 * drops the lock when the last copy of that descriptor closes: at close_session, at pam_end
 * when a later module failed the session's opening, and when the process holding the session
 * dies, even by SIGKILL. So a session that never closes cleanly gives its share back by
 * itself, and the closing session that finds no share left is the user's last. */
#ifndef PROTFS_PAM_SESSION_REFERENCE_H
#define PROTFS_PAM_SESSION_REFERENCE_H

#include <stddef.h>
#include <sys/types.h>

#include "deadline.h"

#define PP_SESSIONS_DIRECTORY "/run/protfs/sessions"

/* A descriptor (close-on-exec) holding a share of `uid`'s sessions, or -1 with `why` filled
 * (not root, an unsafe directory, the share not taken before `deadline`). */
int pp_session_hold(uid_t uid, const struct pp_deadline *deadline, char *why, size_t why_size);

/* Whether no session of `uid` holds a share now: 1 when none does, 0 when one does, -1 with
 * `why` filled when it cannot be told. */
int pp_session_none_held(uid_t uid, char *why, size_t why_size);

#endif
