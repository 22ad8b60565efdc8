#!/usr/bin/env python3
# Usage: copy-with-kernel-calls.py SOURCE (in the mount). Copies SOURCE into write-only
# descriptors with sendfile ("sent") and splice through a pipe ("spliced"), then "sent" with
# copy_file_range ("copied").
import os, sys
source = sys.argv[1]
def into(name):
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
src, dst = os.open(source, os.O_RDONLY), into("sent")
while os.sendfile(dst, src, None, 1 << 20):
    pass
os.close(dst)
read_end, write_end = os.pipe()
src, dst = os.open(source, os.O_RDONLY), into("spliced")
while True:
    moved = os.splice(src, write_end, 65536)
    if not moved:
        break
    while moved:
        moved -= os.splice(read_end, dst, moved)
os.close(dst)
src, dst = os.open("sent", os.O_RDONLY), into("copied")
left = os.fstat(src).st_size
while left:
    left -= os.copy_file_range(src, dst, left)
os.close(dst)
