/* Where a daemon's control socket is found without crossing a mount. A user may mount a FUSE
 * file system over their own runtime directory (or its protfs/ directory); looking inside it
 * is a request to that file system's daemon, which may never answer and would hold the login
 * in uninterruptible sleep. So the directory is opened without looking inside it (O_PATH),
 * refused when it is on a FUSE mount, and the socket below it is reached one component at a
 * time, each on the same mount (the kernel's mount ids, /proc/self/fdinfo and mountinfo): a
 * mount in the way is an error, never a request. (openat2's RESOLVE_NO_XDEV would do the
 * same, but valgrind, which checks the module, does not know that system call.) */
#ifndef PROTFS_PAM_SOCKET_PLACE_H
#define PROTFS_PAM_SOCKET_PLACE_H

/* An O_PATH descriptor of `relative` (names without "..") below the directory `base`
 * (absolute), crossing no mount and following no symlink below `base`, with `base` on no
 * FUSE mount; -1 with errno otherwise (EXDEV: a mount is in the way). */
int pp_socket_place_open(const char *base, const char *relative);

#endif
