#!/usr/bin/env python3
# Usage: open-and-close-many.py MOUNT. 20,000 files created, written, closed and unlinked in
# turn (so the kernel forgets each inode and the daemon its descriptor).
import os, sys
os.chdir(sys.argv[1])
os.mkdir("churn")
for i in range(20000):
    name = "churn/%d" % i
    fd = os.open(name, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"x")
    os.close(fd)
    os.unlink(name)  # so the kernel forgets the inode and the daemon its descriptor
