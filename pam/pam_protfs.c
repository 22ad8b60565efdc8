/* pam_protfs: the login password is the protfs vault's passcode (pam_protfs(8),
 * docs/LOGIN.md). auth unlocks the user's vaults with PAM_AUTHTOK once the stack has
 * authenticated the user; session holds a reference for each session of the user and locks
 * the vaults when the last one closes; password changes the vaults' passcode with the login
 * password.
 *
 * It never decides a login: every stage returns PAM_IGNORE, so the stack's own result
 * stands; every wait is bounded by `timeout`; every failure is logged (syslog, the mount
 * point and why) and the module goes on. The password is read from PAM's items and written
 * from there to the daemon's socket: the module never copies it, so no copy of it outlives
 * the call. */
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>

#include "control_client.h"
#include "deadline.h"
#include "session_reference.h"
#include "vault_list.h"

#define EXPORTED __attribute__((visibility("default")))
#define DEFAULT_CONFIGURATION "/etc/protfs/pam.conf"
#define DEFAULT_TIMEOUT_SECONDS 5
#define MAXIMUM_TIMEOUT_SECONDS 30

struct options {
    const char *configuration;
    int timeout_seconds;
    bool lock_on_logout;
};

/* What the stage acts for: the user, their uid, and the configured vaults. */
struct stage {
    pam_handle_t *pamh;
    const char *user;
    uid_t uid;
    struct options options;
    struct pp_vault_list vaults;
};

/* The value of `argument` when it is `name=VALUE`, else NULL. */
static const char *value_of(const char *argument, const char *name)
{
    size_t length = strlen(name);
    return strncmp(argument, name, length) == 0 && argument[length] == '=' ? argument + length + 1 : NULL;
}

static struct options parse_options(pam_handle_t *pamh, int argc, const char **argv)
{
    struct options options = {DEFAULT_CONFIGURATION, DEFAULT_TIMEOUT_SECONDS, true};
    for (int i = 0; i < argc; i++) {
        const char *value;
        char *end = NULL;
        if ((value = value_of(argv[i], "lock_on_logout")) != NULL && (strcmp(value, "yes") == 0 || strcmp(value, "no") == 0)) {
            options.lock_on_logout = strcmp(value, "yes") == 0;
        } else if ((value = value_of(argv[i], "config")) != NULL && value[0] == '/') {
            options.configuration = value;
        } else if ((value = value_of(argv[i], "timeout")) != NULL && strtol(value, &end, 10) >= 1
                   && strtol(value, NULL, 10) <= MAXIMUM_TIMEOUT_SECONDS && *end == '\0') {
            options.timeout_seconds = (int)strtol(value, NULL, 10);
        } else {
            pam_syslog(pamh, LOG_ERR, "option '%s' ignored: expected lock_on_logout=yes|no, config=/PATH or timeout=1...%d",
                       argv[i], MAXIMUM_TIMEOUT_SECONDS);
        }
    }
    return options;
}

/* The user and, `with_vaults`, the vaults of the configuration for them; false (logged)
 * when there is nothing to do. */
static bool begin(struct stage *stage, pam_handle_t *pamh, int argc, const char **argv, bool with_vaults)
{
    stage->vaults.count = 0;
    stage->pamh = pamh;
    stage->options = parse_options(pamh, argc, argv);
    const void *user = NULL;
    if (pam_get_item(pamh, PAM_USER, &user) != PAM_SUCCESS || user == NULL || ((const char *)user)[0] == '\0') {
        pam_syslog(pamh, LOG_ERR, "no user name: nothing done");
        return false;
    }
    stage->user = user;
    struct passwd *entry = pam_modutil_getpwnam(pamh, stage->user);
    if (entry == NULL) {
        pam_syslog(pamh, LOG_ERR, "no account named %s: nothing done", stage->user);
        return false;
    }
    stage->uid = entry->pw_uid;
    if (with_vaults)
        pp_vault_list_read(pamh, stage->options.configuration, stage->user, stage->uid, &stage->vaults);
    return true;
}

/* The mount point, safe to log (a mount point may hold any byte but NUL). */
static const char *printable(const char *mountpoint, char *out, size_t size)
{
    size_t n = 0;
    for (; mountpoint[n] != '\0' && n + 1 < size; n++)
        out[n] = (unsigned char)mountpoint[n] < 0x20 || mountpoint[n] == 0x7f ? '?' : mountpoint[n];
    out[n] = '\0';
    return out;
}

static void log_vault(const struct stage *stage, int priority, const struct pp_vault *vault, const char *what,
                      const char *why)
{
    char name[PATH_MAX];
    pam_syslog(stage->pamh, priority, "%s: %s for %s%s%s", printable(vault->mountpoint, name, sizeof name), what,
               stage->user, why[0] ? ": " : "", why);
}

static bool in_state(const struct pp_reply *status, const char *const *states)
{
    for (; *states; states++)
        if (strcmp(status->state, *states) == 0)
            return true;
    return false;
}

/* Who a round's request to one vault goes from, if it goes. */
enum sender {
    NOBODY,
    MODULE, /* the module's process (root, in a login) */
    USER,   /* connected as the user: the daemon acts only if the user owns the vault */
};

/* One round: `header` (with `secrets`) to each vault as `senders` says, all at once, within
 * the stage's `timeout`. NULL (logged) when out of memory. */
static struct pp_call *round_of(const struct stage *stage, const enum sender *senders, const char *header,
                                const struct pp_secret *secrets, size_t secret_count)
{
    struct pp_call *calls = calloc(stage->vaults.count, sizeof *calls);
    if (calls == NULL) {
        pam_syslog(stage->pamh, LOG_ERR, "out of memory: the vaults of %s are left as they are", stage->user);
        return NULL;
    }
    for (size_t i = 0; i < stage->vaults.count; i++) {
        if (senders[i] == NOBODY) {
            pp_call_skip(&calls[i]);
            continue;
        }
        pp_call_prepare(&calls[i], stage->vaults.vaults[i].mountpoint, stage->uid, header, secrets, secret_count);
        if (senders[i] == USER)
            pp_call_as_user(&calls[i], stage->uid);
    }
    struct pp_deadline deadline = pp_deadline_after(stage->options.timeout_seconds * 1000);
    pp_call_all(calls, stage->vaults.count, &deadline);
    return calls;
}

/* Whether the call got the `expected` reply; if not, logs why as `what`. */
static bool replied(const struct stage *stage, size_t vault, const struct pp_call *call, const char *expected,
                    const char *what)
{
    if (call->outcome == PP_REPLIED && strcmp(call->reply.kind, expected) == 0)
        return true;
    char why[512];
    if (call->outcome == PP_REPLIED && strcmp(call->reply.kind, "failure") == 0)
        snprintf(why, sizeof why, "%s (exit code %d)", call->reply.message, call->reply.exit_code);
    else if (call->outcome == PP_REPLIED)
        snprintf(why, sizeof why, "unexpected reply '%s' from the daemon", call->reply.kind);
    else
        snprintf(why, sizeof why, "%s", call->why);
    log_vault(stage, call->outcome == PP_NO_DAEMON ? LOG_WARNING : LOG_ERR, &stage->vaults.vaults[vault], what, why);
    return false;
}

/* Asks every vault's state (one round), then sends `header` with `secrets` (a second
 * round) to those this stage acts on: named by the configuration, or (`*`) owned by the
 * user; in one of `states`; with a passcode when `needs_passcode`. `even_unanswered`: a vault
 * whose status did not come in time gets the request too (safe for a lock only), connected as
 * the user for `*`, so that its daemon locks only a vault the user owns. Logs each outcome:
 * `done` on success, `not_done` with the reason otherwise. At most two rounds of `timeout`. */
static void act_on_vaults(const struct stage *stage, const char *const *states, bool needs_passcode, bool even_unanswered,
                          const char *header, const struct pp_secret *secrets, size_t secret_count, const char *done,
                          const char *not_done)
{
    enum sender senders[PP_MAXIMUM_VAULTS];
    if (stage->vaults.count == 0)
        return;
    for (size_t i = 0; i < stage->vaults.count; i++)
        senders[i] = MODULE;
    struct pp_call *calls = round_of(stage, senders, "{\"request\":\"status\"}", NULL, 0);
    if (calls == NULL)
        return;
    size_t count = 0;
    for (size_t i = 0; i < stage->vaults.count; i++) {
        const struct pp_vault *vault = &stage->vaults.vaults[i];
        const struct pp_reply *status = &calls[i].reply;
        if (even_unanswered && calls[i].outcome == PP_TIMED_OUT) {
            log_vault(stage, LOG_WARNING, vault, "no status in time", "the request goes anyway");
            senders[i] = vault->only_if_owned ? USER : MODULE;
        } else {
            bool chosen = replied(stage, i, &calls[i], "status", not_done)
                          && (!vault->only_if_owned || status->owner == (long long)stage->uid) && in_state(status, states);
            if (chosen && needs_passcode && status->passcode_set != 1) {
                log_vault(stage, LOG_NOTICE, vault, not_done, "the vault has no passcode");
                chosen = false;
            }
            senders[i] = chosen ? MODULE : NOBODY;
        }
        count += senders[i] != NOBODY;
    }
    free(calls);
    if (count == 0 || (calls = round_of(stage, senders, header, secrets, secret_count)) == NULL)
        return;
    for (size_t i = 0; i < stage->vaults.count; i++)
        if (senders[i] != NOBODY && replied(stage, i, &calls[i], "done", not_done))
            log_vault(stage, LOG_INFO, &stage->vaults.vaults[i], done, "");
    free(calls);
}

/* auth: the stack has authenticated the user (this module comes after it); unlock the
 * user's vaults that are locked, not yet unlocked since mount, or in their grace. */
EXPORTED int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    (void)flags;
    struct stage stage;
    if (!begin(&stage, pamh, argc, argv, true))
        return PAM_IGNORE;
    const void *password = NULL;
    if (stage.vaults.count > 0 && (pam_get_item(pamh, PAM_AUTHTOK, &password) != PAM_SUCCESS || password == NULL))
        pam_syslog(pamh, LOG_NOTICE, "no password was given for %s (a key or a token?): no vault unlocked", stage.user);
    if (password != NULL) {
        const struct pp_secret secret = {password, strlen(password)};
        static const char *const unlockable[] = {"locked", "beforeFirstUnlock", "locking", NULL};
        act_on_vaults(&stage, unlockable, true, false, "{\"request\":\"unlock\"}", &secret, 1, "unlocked", "not unlocked");
    }
    pp_vault_list_free(&stage.vaults);
    return PAM_IGNORE;
}

EXPORTED int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    (void)pamh, (void)flags, (void)argc, (void)argv;
    return PAM_IGNORE;
}

/* The name of the session's reference in the PAM data (per uid: PAM_USER may change
 * between the stages of one handle). */
static void reference_name(const struct stage *stage, char *out, size_t size)
{
    snprintf(out, size, "pam_protfs-session-%u", (unsigned)stage->uid);
}

/* Closes the reference when the session closes, when pam_end ends a session whose opening
 * failed later in the stack, or when the data is replaced. A forked child closing its copy
 * (PAM_DATA_SILENT) gives nothing back: the share lasts until the last copy closes. */
static void release_reference(pam_handle_t *pamh, void *data, int error_status)
{
    (void)pamh, (void)error_status;
    close((int)(intptr_t)data - 1);
}

/* open_session: the session takes a share of the user's sessions and keeps it in its PAM
 * data, so the share lasts exactly as long as the session (pam_protfs(8)). */
EXPORTED int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    (void)flags;
    struct stage stage;
    if (!begin(&stage, pamh, argc, argv, false))
        return PAM_IGNORE;
    char name[64];
    reference_name(&stage, name, sizeof name);
    const void *held = NULL;
    if (pam_get_data(pamh, name, &held) == PAM_SUCCESS && held != NULL)
        return PAM_IGNORE; /* opened twice in one handle: one session */
    char why[256] = "";
    struct pp_deadline deadline = pp_deadline_after(stage.options.timeout_seconds * 1000);
    int fd = pp_session_hold(stage.uid, &deadline, why, sizeof why);
    if (fd < 0) {
        pam_syslog(pamh, LOG_ERR, "the session of %s is not counted: %s", stage.user, why);
        return PAM_IGNORE;
    }
    if (pam_set_data(pamh, name, (void *)(intptr_t)(fd + 1), release_reference) != PAM_SUCCESS) {
        close(fd);
        pam_syslog(pamh, LOG_ERR, "the session of %s is not counted: PAM cannot keep its reference", stage.user);
    }
    return PAM_IGNORE;
}

/* close_session: gives the session's share back; when no share of the user is left, this was
 * the last session: lock the user's vaults now (no grace: the user has gone), unless
 * lock_on_logout=no. A handle that holds no reference (its opening was not counted) locks
 * nothing. */
EXPORTED int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    (void)flags;
    struct stage stage;
    if (!begin(&stage, pamh, argc, argv, false))
        return PAM_IGNORE;
    char name[64];
    reference_name(&stage, name, sizeof name);
    const void *held = NULL;
    if (pam_get_data(pamh, name, &held) != PAM_SUCCESS || held == NULL) {
        pam_syslog(pamh, LOG_DEBUG, "no session of %s was counted here: its vaults are left as they are", stage.user);
        return PAM_IGNORE;
    }
    pam_set_data(pamh, name, NULL, NULL); /* releases the share (release_reference) */
    char why[256] = "";
    int last = pp_session_none_held(stage.uid, why, sizeof why);
    if (last < 0)
        pam_syslog(pamh, LOG_ERR, "cannot tell whether other sessions of %s are open, so its vaults are left as they are: %s",
                   stage.user, why);
    if (last == 1 && stage.options.lock_on_logout) {
        pp_vault_list_read(pamh, stage.options.configuration, stage.user, stage.uid, &stage.vaults);
        static const char *const lockable[] = {"unlocked", "locking", NULL};
        act_on_vaults(&stage, lockable, false, true, "{\"request\":\"lock\",\"mode\":\"now\"}", NULL, 0,
                      "locked at the last logout", "not locked");
        pp_vault_list_free(&stage.vaults);
    }
    return PAM_IGNORE;
}

/* passwd: once the stack has changed the password (PAM_UPDATE_AUTHTOK, after pam_unix),
 * change each vault's passcode from the old password to the new one. */
EXPORTED int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    if (!(flags & PAM_UPDATE_AUTHTOK))
        return PAM_IGNORE;
    struct stage stage;
    if (!begin(&stage, pamh, argc, argv, true))
        return PAM_IGNORE;
    const void *old_password = NULL, *new_password = NULL;
    pam_get_item(pamh, PAM_OLDAUTHTOK, &old_password);
    pam_get_item(pamh, PAM_AUTHTOK, &new_password);
    if (stage.vaults.count > 0 && (old_password == NULL || new_password == NULL)) {
        pam_syslog(pamh, LOG_WARNING,
                   "the vault passcodes of %s are unchanged: the %s password is unknown here (root setting a password "
                   "asks for no old one); change them with protfsctl passwd",
                   stage.user, old_password == NULL ? "old" : "new");
    } else if (old_password != NULL && new_password != NULL) {
        const struct pp_secret secrets[2] = {{old_password, strlen(old_password)}, {new_password, strlen(new_password)}};
        static const char *const any[] = {"beforeFirstUnlock", "unlocked", "locking", "locked", NULL};
        act_on_vaults(&stage, any, true, false, "{\"request\":\"passwd\"}", secrets, 2,
                      "passcode changed with the login password", "passcode not changed");
    }
    pp_vault_list_free(&stage.vaults);
    return PAM_IGNORE;
}
