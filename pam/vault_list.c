#include "vault_list.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_ext.h>

#define PROTFS_TYPE "fuse.protfs"
#define MAXIMUM_CONFIGURATION_LINES 4096

/* The kernel writes space, tab, newline and backslash in a mount point as \ooo. */
static void unescape(char *field)
{
    char *out = field;
    for (char *in = field; *in; out++) {
        if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0'
            && in[3] <= '7') {
            *out = (char)((in[1] - '0') << 6 | (in[2] - '0') << 3 | (in[3] - '0'));
            in += 4;
        } else {
            *out = *in++;
        }
    }
    *out = '\0';
}

/* The uid that made a FUSE mount, from its super options (`user_id=N`, which the kernel
 * sets from fusermount's real uid: no user can claim another's); -1 when absent. */
static long long mounting_uid(char *options)
{
    char *save = NULL;
    for (char *option = strtok_r(options, ",\n", &save); option; option = strtok_r(NULL, ",\n", &save))
        if (strncmp(option, "user_id=", 8) == 0 && option[8] >= '0' && option[8] <= '9')
            return strtoll(option + 8, NULL, 10);
    return -1;
}

/* The mount point of a /proc/self/mountinfo line when it is a protfs mount made by root or
 * by `user`, else NULL: `id parent major:minor root MOUNTPOINT options [optional...] - TYPE
 * source super-options`. A `fuse.protfs` mount any other user made (`-o subtype=protfs`) is
 * a decoy: no daemon this user may trust serves it. */
static char *protfs_mountpoint(char *line, uid_t user)
{
    char *fields[5];
    char *save = NULL;
    for (int i = 0; i < 5; i++) {
        fields[i] = strtok_r(i == 0 ? line : NULL, " \n", &save);
        if (fields[i] == NULL)
            return NULL;
    }
    char *field;
    while ((field = strtok_r(NULL, " \n", &save)) != NULL && strcmp(field, "-") != 0)
        ;
    char *type = field ? strtok_r(NULL, " \n", &save) : NULL;
    if (type == NULL || strcmp(type, PROTFS_TYPE) != 0 || strtok_r(NULL, " \n", &save) == NULL)
        return NULL;
    char *options = strtok_r(NULL, " \n", &save);
    long long made_by = options ? mounting_uid(options) : -1;
    if (made_by != 0 && made_by != (long long)user)
        return NULL;
    unescape(fields[4]);
    return fields[4];
}

static void add(pam_handle_t *pamh, struct pp_vault_list *list, const char *mountpoint, bool only_if_owned)
{
    for (size_t i = 0; i < list->count; i++) {
        if (strcmp(list->vaults[i].mountpoint, mountpoint) == 0) {
            list->vaults[i].only_if_owned &= only_if_owned;
            return;
        }
    }
    if (list->count == PP_MAXIMUM_VAULTS) {
        pam_syslog(pamh, LOG_WARNING, "more than %d vaults for one user: the others are left alone", PP_MAXIMUM_VAULTS);
        return;
    }
    char *copy = strdup(mountpoint);
    if (copy == NULL)
        return;
    list->vaults[list->count].mountpoint = copy;
    list->vaults[list->count].only_if_owned = only_if_owned;
    list->count++;
}

void pp_vault_list_free(struct pp_vault_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->vaults[i].mountpoint);
    list->count = 0;
}

/* Every protfs mount made by root or `user` (`*`), or the one at `wanted` (canonical), from
 * the kernel's table:
 * nothing here touches a mount itself, which would be a request to its daemon and could
 * hang on a stopped one. */
static void add_mounts(pam_handle_t *pamh, struct pp_vault_list *list, uid_t user, const char *wanted, bool only_if_owned)
{
    FILE *table = fopen("/proc/self/mountinfo", "re");
    if (table == NULL) {
        pam_syslog(pamh, LOG_ERR, "cannot read /proc/self/mountinfo: %s", strerror(errno));
        return;
    }
    char *line = NULL;
    size_t capacity = 0;
    bool found = false;
    while (getline(&line, &capacity, table) > 0) {
        const char *mountpoint = protfs_mountpoint(line, user);
        if (mountpoint == NULL || (wanted != NULL && strcmp(mountpoint, wanted) != 0))
            continue;
        found = true;
        add(pamh, list, mountpoint, only_if_owned);
    }
    free(line);
    fclose(table);
    if (wanted != NULL && !found)
        pam_syslog(pamh, LOG_WARNING, "%s: left alone: not a protfs mount now", wanted);
}

/* The mount point as its daemon names it: the parent resolved, the last component as it
 * is (resolving the mount point itself would ask its daemon). */
static bool canonical(const char *path, char *out)
{
    char parent_copy[PATH_MAX], base_copy[PATH_MAX], parent[PATH_MAX];
    if (path[0] != '/' || strlen(path) >= PATH_MAX)
        return false;
    strcpy(parent_copy, path);
    strcpy(base_copy, path);
    const char *base = basename(base_copy);
    if (strcmp(base, "/") == 0) {
        strcpy(out, "/");
        return true;
    }
    if (realpath(dirname(parent_copy), parent) == NULL)
        return false;
    int written = snprintf(out, PATH_MAX, "%s/%s", strcmp(parent, "/") == 0 ? "" : parent, base);
    return written > 0 && written < PATH_MAX;
}

/* Only root may say whose password unlocks what. */
static FILE *open_configuration(pam_handle_t *pamh, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT)
            pam_syslog(pamh, LOG_DEBUG, "no %s: no vault to act on", path);
        else
            pam_syslog(pamh, LOG_ERR, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) != 0) {
        pam_syslog(pamh, LOG_ERR, "%s ignored: it must be a regular file owned by root and writable by root only", path);
        close(fd);
        return NULL;
    }
    FILE *file = fdopen(fd, "r");
    if (file == NULL)
        close(fd);
    return file;
}

void pp_vault_list_read(pam_handle_t *pamh, const char *path, const char *user, uid_t uid, struct pp_vault_list *list)
{
    list->count = 0;
    FILE *file = open_configuration(pamh, path);
    if (file == NULL)
        return;
    char *line = NULL;
    size_t capacity = 0;
    for (int number = 1; number <= MAXIMUM_CONFIGURATION_LINES && getline(&line, &capacity, file) > 0; number++) {
        char *save = NULL;
        char *who = strtok_r(line, " \t\n", &save);
        if (who == NULL || who[0] == '#')
            continue;
        char *where = strtok_r(NULL, " \t\n", &save);
        if (where == NULL || strtok_r(NULL, " \t\n", &save) != NULL || (where[0] != '/' && strcmp(where, "*") != 0)) {
            pam_syslog(pamh, LOG_ERR, "%s:%d ignored: expected USER MOUNTPOINT", path, number);
            continue;
        }
        bool everyone = strcmp(who, "*") == 0;
        if (!everyone && strcmp(who, user) != 0)
            continue;
        if (strcmp(where, "*") == 0) {
            add_mounts(pamh, list, uid, NULL, true);
            continue;
        }
        char mountpoint[PATH_MAX];
        if (!canonical(where, mountpoint)) {
            pam_syslog(pamh, LOG_WARNING, "%s: left alone: its parent directory cannot be resolved", where);
            continue;
        }
        /* `* /MOUNTPOINT`: that vault for its owner only. Every other user's password would
         * count as a wrong passcode there, and their logins would give the owner the delays. */
        add_mounts(pamh, list, uid, mountpoint, everyone);
    }
    free(line);
    fclose(file);
}
