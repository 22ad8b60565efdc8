#!/usr/bin/env python3
# Usage: map-across-page-boundary.py (in the mount). Writes across a page boundary of "mapped"
# through a shared writable mapping; the file reads it back.
import mmap, os
fd = os.open("mapped", os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 3 * 4096 + 17)
m = mmap.mmap(fd, 3 * 4096 + 17)
m[4090:4110] = b"across-the-boundary!"
m.flush(); m.close(); os.close(fd)
data = open("mapped", "rb").read()
assert data[4090:4110] == b"across-the-boundary!" and len(data) == 3 * 4096 + 17
