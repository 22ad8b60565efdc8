/* The client side of the control protocol (docs/CONTROL.md), in C, for the PAM module: no
 * other process and no language runtime inside login, sshd, sudo or a screen locker, and
 * the password goes from PAM's own item straight to the daemons' sockets.
 *
 * One round asks every vault at once (non-blocking sockets, one poll loop), so a hung
 * daemon costs the round's deadline once, however many vaults there are, and never
 * starves the others. */
#ifndef PROTFS_PAM_CONTROL_CLIENT_H
#define PROTFS_PAM_CONTROL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "deadline.h"

#define PP_SYSTEM_SOCKET_DIRECTORY "/run/protfs"
#define PP_MAXIMUM_SECRETS 2

struct pp_secret {
    const char *bytes;
    size_t length;
};

/* What a reply said: `kind` is "done", "status", "failure"...; the rest as it applies. Every
 * string holds printable ASCII only (pp_json_scalar). */
struct pp_reply {
    char kind[32];
    char state[32];    /* status: the lock state */
    long long owner;   /* status: the owner's uid, -1 when absent */
    int passcode_set;  /* status: 1, 0, or -1 when absent */
    int exit_code;     /* failure */
    char message[256]; /* failure */
};

enum pp_outcome {
    PP_REPLIED,   /* `reply` holds the answer (which may be a failure) */
    PP_NO_DAEMON, /* nothing serves that mount point for this user */
    PP_TIMED_OUT, /* no complete reply before the deadline */
    PP_BROKEN,    /* anything else; `why` says what */
    PP_NOT_ASKED, /* left out of this round (pp_call_skip) */
};

/* One request to one vault's daemon, and what came of it. */
struct pp_call {
    enum pp_outcome outcome;
    struct pp_reply reply;
    char why[384];

    /* The request, from pp_call_prepare to pp_call_all. */
    char socket_path[108];
    uid_t allowed[2]; /* the uids the daemon's process may run as */
    uid_t connect_as; /* the uid the daemon sees as the caller (0: the module's own) */
    int socket_fd;    /* O_PATH descriptor of the socket found */
    bool in_system_directory;
    struct iovec iov[2 + 2 * PP_MAXIMUM_SECRETS];
    int iov_count;
    unsigned char prefix[8];
    unsigned char lengths[PP_MAXIMUM_SECRETS][4];
    int fd;
    int phase;
    unsigned char length_bytes[4];
    size_t have;
    uint32_t json_length;
    char *json;
};

/* Finds the daemon of `mountpoint` (canonical) for `user`, the system directory first,
 * then /run/user/UID/protfs, and readies the request (`header`: its JSON; the secrets are
 * sent from where they are, never copied, and must live until pp_call_all returns). When
 * no daemon serves it, the call is already finished with PP_NO_DAEMON. */
void pp_call_prepare(struct pp_call *call, const char *mountpoint, uid_t user, const char *header,
                     const struct pp_secret *secrets, size_t secret_count);

/* Connects as `user` rather than as the module's process, so that the daemon answers the
 * request as it answers the user: a privileged request only if the user owns the vault.
 * (A daemon in the user's runtime directory is the user's own: it is asked as before.) */
void pp_call_as_user(struct pp_call *call, uid_t user);

/* Leaves the call out of its round. */
void pp_call_skip(struct pp_call *call);

/* Runs every prepared call at once, until each has its reply or `deadline` passes. */
void pp_call_all(struct pp_call *calls, size_t count, const struct pp_deadline *deadline);

#endif
