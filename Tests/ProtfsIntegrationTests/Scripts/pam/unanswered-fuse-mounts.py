"""Mounts FUSE file systems that nobody answers, as a user's fusermount3 would make them
(`user_id=UID,group_id=GID`, type fuse.protfs as `-o subtype=protfs` names it): decoys in the mount table,
and a mount that hangs whoever looks inside it. For pam_protfs's tests; needs root.

Usage: unanswered-fuse-mounts.py UID GID SECONDS MOUNTPOINT...
Mounts each, prints "ready", holds every connection unanswered until SECONDS pass, then ends
them (whatever waits on one gets ENOTCONN) and detaches the mounts. Killed sooner, it leaves
the mounts ended but attached: whoever killed it detaches them.
"""
import ctypes
import os
import sys
import time

MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2
libc = ctypes.CDLL(None, use_errno=True)
uid, gid, seconds, mountpoints = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
connections, mounted = [], []


def end(status=0):
    for fd in connections:
        os.close(fd)
    for path in mounted:
        libc.umount2(path.encode(), MNT_DETACH)
    sys.exit(status)

for path in mountpoints:
    fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
    connections.append(fd)
    data = "fd=%d,rootmode=40000,user_id=%d,group_id=%d" % (fd, uid, gid)
    if libc.mount(b"decoy", path.encode(), b"fuse.protfs", MS_NOSUID | MS_NODEV, data.encode()) != 0:
        print("cannot mount %s: %s" % (path, os.strerror(ctypes.get_errno())), file=sys.stderr)
        end(1)
    mounted.append(path)
print("ready", flush=True)
time.sleep(seconds)
end()
