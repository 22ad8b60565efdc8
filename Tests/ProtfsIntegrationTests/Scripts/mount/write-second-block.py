#!/usr/bin/env python3
# Usage: write-second-block.py PATH cached|writeonly|direct. Writes the second 4 KiB block of
# PATH with one pwritev, through a read-write, write-only or O_DIRECT descriptor.
import mmap, os, sys
flags = {"cached": os.O_RDWR, "writeonly": os.O_WRONLY, "direct": os.O_WRONLY | os.O_DIRECT}[sys.argv[2]]
fd = os.open(sys.argv[1], flags)
block = mmap.mmap(-1, 4096)
block.write(b"w" * 4096)
assert os.pwritev(fd, [block], 4096) == 4096
os.close(fd)
