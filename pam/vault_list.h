/* Which vaults a user's password is for: /etc/protfs/pam.conf (pam_protfs(8)), one
 * `USER MOUNTPOINT` a line, `*` as USER for "every user, for the vaults they own" and as
 * MOUNTPOINT for "the vaults this user owns", matched against the protfs mounts the kernel lists that root or the user
 * made. */
#ifndef PROTFS_PAM_VAULT_LIST_H
#define PROTFS_PAM_VAULT_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <security/pam_modules.h>

/* At most this many vaults per user and stage, among the protfs mounts made by root or by
 * the user (more are logged and left alone): no other user can fill it. */
#define PP_MAXIMUM_VAULTS 128

struct pp_vault {
    char *mountpoint;
    /* From `*` (as USER or MOUNTPOINT): acted on only when its daemon says the user owns it. */
    bool only_if_owned;
};

struct pp_vault_list {
    size_t count;
    struct pp_vault vaults[PP_MAXIMUM_VAULTS];
};

/* Fills `list` for `user` (whose uid is `uid`) from the configuration at `path`; problems are
 * logged through `pamh` and leave the list with what could be read. */
void pp_vault_list_read(pam_handle_t *pamh, const char *path, const char *user, uid_t uid, struct pp_vault_list *list);

void pp_vault_list_free(struct pp_vault_list *list);

#endif
