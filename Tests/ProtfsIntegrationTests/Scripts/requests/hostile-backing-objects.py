#!/usr/bin/env python3
# Usage: hostile-backing-objects.py MOUNT LONG_NAME (after plant-hostile-objects.sh). Through
# the mount, each planted object is what its backing entry is, reads as damage (EIO) where it
# could lead outside, is never opened raw, and the listing shows no dot or slash names.
import errno, os, stat, sys

from call_checks import Fails, expect, finish

LONG = sys.argv[2]
EIO, EACCES, ENXIO, EPERM, ENODATA = Fails(errno.EIO), Fails(errno.EACCES), Fails(errno.ENXIO), Fails(errno.EPERM), Fails(errno.ENODATA)
is_kind = lambda check: (lambda st: check(st.st_mode))
for link in ["symfile", "relsym"]:
    expect(link + " is a symlink", lambda: os.lstat(link), is_kind(stat.S_ISLNK))
    expect(link + ": readlink", lambda: os.readlink(link), EIO)
    expect(link + ": open", lambda: os.open(link, os.O_RDONLY), EIO)
    expect(link + ": open for writing", lambda: os.open(link, os.O_WRONLY | os.O_CREAT), EIO)
    expect(link + ": chmod (follows)", lambda: os.chmod(link, 0o777), EIO)
    expect(link + ": chown -h", lambda: os.lchown(link, 65534, 65534))
    expect(link + ": touch -h", lambda: os.utime(link, (1, 1), follow_symlinks=False))
    expect(link + ": user xattr on a symlink", lambda: os.setxattr(link, "user.x", b"x", follow_symlinks=False), EPERM)
expect("fifo is a FIFO", lambda: os.lstat("fifo"), is_kind(stat.S_ISFIFO))
expect("fifo: open to read (the kernel's pipe, no writer)", lambda: os.read(os.open("fifo", os.O_RDONLY | os.O_NONBLOCK), 10), b"")
expect("fifo: open to write with no reader", lambda: os.open("fifo", os.O_WRONLY | os.O_NONBLOCK), ENXIO)
expect("fifo: no class", lambda: os.getxattr("fifo", "user.protfs.class"), ENODATA)
expect("fifo: chmod", lambda: os.chmod("fifo", 0o600))
expect("device is a character device", lambda: os.lstat("device"), lambda st: stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 5))
expect("device: open (the mount is nodev)", lambda: os.open("device", os.O_RDONLY), EACCES)
expect("device: chown", lambda: os.chown("device", 65534, 65534))
expect("hardlink is a regular file", lambda: os.lstat("hardlink"), is_kind(stat.S_ISREG))
for label, call in [("open", lambda: os.open("hardlink", os.O_RDONLY)), ("open for writing", lambda: os.open("hardlink", os.O_WRONLY)),
                    ("truncate", lambda: os.truncate("hardlink", 0)), ("chmod", lambda: os.chmod("hardlink", 0o777)),
                    ("chown", lambda: os.chown("hardlink", 65534, 65534)), ("touch", lambda: os.utime("hardlink", (1, 1))),
                    ("link", lambda: os.link("hardlink", "hardlink2")), ("set xattr", lambda: os.setxattr("hardlink", "user.x", b"x")),
                    ("class", lambda: os.getxattr("hardlink", "user.protfs.class"))]:
    expect("hardlink: " + label, call, EIO)
expect("hardlink: rename (inside the backing directory)", lambda: os.rename("hardlink", "hardlink3"))
expect("hardlink: unlink", lambda: os.unlink("hardlink3"))
expect("symdir is a symlink", lambda: os.lstat("symdir"), is_kind(stat.S_ISLNK))
expect("symdir: list", lambda: os.listdir("symdir"), EIO)
expect("symdir: create in it", lambda: os.open("symdir/new", os.O_WRONLY | os.O_CREAT), EIO)
expect("symdir: mkdir in it", lambda: os.mkdir("symdir/sub"), EIO)
expect("metadir is still a directory", lambda: os.lstat("metadir"), is_kind(stat.S_ISDIR))
expect("metadir: list", lambda: os.listdir("metadir"), EIO)
expect("metadir: look up", lambda: os.stat("metadir/kept"), EIO)
expect("metadir: create in it", lambda: os.open("metadir/new", os.O_WRONLY | os.O_CREAT), EIO)
expect("metadir: class", lambda: os.getxattr("metadir", "user.protfs.class"), EIO)
expect("the long name with a FIFO sidecar reads", lambda: open(LONG, "rb").read(), b"long")
expect("longlink with the link store planted", lambda: os.readlink("longlink"), EIO)
expect("a new long symlink with the link store planted", lambda: os.symlink("t" * 4000, "newlong"), EIO)
expect("the listing shows no dot or slash names and skips the long one",
       lambda: sorted(os.listdir(".")), sorted(["symfile", "relsym", "fifo", "device", "symdir", "metadir", "plain", "longlink"]))
expect("plain still reads", lambda: open("plain", "rb").read(), b"inside plain")

finish()
