#!/usr/bin/env python3
# Usage: complete-handle-across-lock.py PROTFSCTL MOUNT PATH now|graceEnds cached|direct.
# A complete file opened (through the page cache or O_DIRECT) before a lock, immediate or at
# the end of the grace: prints what each call on the handle does before, in and after it.
import os, sys

from lock_client import attempt, lock, reads, wait_for

path, kind, access = sys.argv[3], sys.argv[4], sys.argv[5]
fd = os.open(path, os.O_RDWR | (os.O_DIRECT if access == "direct" else 0))
print("read before", reads(fd, b"complete\n"))
print("write before", attempt(lambda: os.pwrite(fd, b"C", 0)))
if kind == "now":
    lock("--now")
else:
    lock()
    print("read in the grace", reads(fd, b"Complete\n"))
print("state", wait_for("locked"))
print("read after", reads(fd, b"Complete\n"))
print("write after", attempt(lambda: os.pwrite(fd, b"X", 0)))
print("fsync after", attempt(lambda: os.fsync(fd)))
print("close", attempt(lambda: os.close(fd)))
print("open anew", attempt(lambda: os.close(os.open(path, os.O_RDONLY))))
