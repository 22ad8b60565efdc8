#!/usr/bin/env python3
# Usage: unless-open-handle-across-lock.py PROTFSCTL MOUNT PATH. A completeUnlessOpen file
# opened before the lock: prints what reads, writes and new opens do until it is closed.
import os, sys

from lock_client import attempt, lock, reads

path = sys.argv[3]
fd = os.open(path, os.O_RDWR)
lock("--now")
print("read after", reads(fd, b"unless open\n"))
print("write after", attempt(lambda: os.pwrite(fd, b"written while locked\n", 12)))
print("read back", reads(fd, b"unless open\nwritten while locked\n"))
print("open anew", attempt(lambda: os.close(os.open(path, os.O_RDONLY))))
print("open anew to write", attempt(lambda: os.close(os.open(path, os.O_WRONLY))))
print("read still", reads(fd, b"unless open\nwritten while locked\n"))
print("close", attempt(lambda: os.close(fd)))
print("open after close", attempt(lambda: os.close(os.open(path, os.O_RDONLY))))
