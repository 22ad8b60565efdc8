#!/usr/bin/env python3
# Usage: overwrite-on-full-disk.py REFERENCE (in a mount whose backing filesystem is full).
# Overwrites the middle of "kept" and tries to grow it, errors ignored; then "kept" equals
# REFERENCE around the overwrite and every file reads (EIO would be a torn chunk).
import os, sys
fd = os.open("kept", os.O_WRONLY)
for offset in range(300000, 350000, 5000):
    try:
        os.pwrite(fd, os.urandom(5000), offset)
    except OSError:
        pass
try:
    os.pwrite(fd, b"grow" * 50000, 1000000)
except OSError:
    pass
os.close(fd)
data = open("kept", "rb").read()   # EIO here would be a torn chunk
ref = open(sys.argv[1], "rb").read()
assert data[:300000 - 4096] == ref[:300000 - 4096], "bytes before the overwrite changed"
assert data[350000 + 4096:1000000] == ref[350000 + 4096:], "bytes after the overwrite changed"
open("big", "rb").read(); open("filler", "rb").read()
