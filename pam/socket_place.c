#include "socket_place.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The mount id of `fd`, from /proc/self/fdinfo (the kernel's record: no request to the file
 * system); -1 when unknown. */
static long mount_id(int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    FILE *info = fopen(path, "re");
    if (info == NULL)
        return -1;
    char line[128];
    long id = -1;
    while (id < 0 && fgets(line, sizeof line, info) != NULL)
        if (strncmp(line, "mnt_id:", 7) == 0)
            id = strtol(line + 7, NULL, 10);
    fclose(info);
    return id;
}

/* Whether the mount numbered `id` is a FUSE one (`fuse`, `fuse.*`, `fuseblk`), from
 * /proc/self/mountinfo; true when it cannot be told. */
static bool is_fuse_mount(long id)
{
    FILE *table = fopen("/proc/self/mountinfo", "re");
    if (table == NULL)
        return true;
    char *line = NULL;
    size_t capacity = 0;
    bool fuse = true;
    while (getline(&line, &capacity, table) > 0) {
        if (strtol(line, NULL, 10) != id)
            continue;
        const char *separator = strstr(line, " - ");
        fuse = separator == NULL || strncmp(separator + 3, "fuse", 4) == 0;
        break;
    }
    free(line);
    fclose(table);
    return fuse;
}

int pp_socket_place_open(const char *base, const char *relative)
{
    /* O_PATH: opening a directory, even the root of a FUSE mount or a directory a mount
     * covers, asks its file system nothing. */
    int fd = open(base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long id = mount_id(fd);
    if (id < 0 || is_fuse_mount(id)) {
        close(fd);
        errno = EXDEV;
        return -1;
    }
    /* One component at a time, each on the base's mount: a component a mount covers is
     * opened as that mount's root (which asks nothing) and refused before anything looks
     * inside it. */
    char path[128];
    if (snprintf(path, sizeof path, "%s", relative) >= (int)sizeof path) {
        close(fd);
        errno = ENAMETOOLONG;
        return -1;
    }
    char *save = NULL;
    for (char *name = strtok_r(path, "/", &save); name != NULL; name = strtok_r(NULL, "/", &save)) {
        int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        int error = errno;
        close(fd);
        if (next >= 0 && mount_id(next) != id) {
            close(next);
            next = -1;
            error = EXDEV;
        }
        if (next < 0) {
            errno = error;
            return -1;
        }
        fd = next;
    }
    return fd;
}
