#!/usr/bin/env python3
# Usage: append-lines.py direct|cached (in the mount). Appends 300 lines to "mixed" through
# O_DIRECT or the page cache (read-write), each naming the way and this process.
import os, sys
access = os.O_WRONLY | os.O_DIRECT if sys.argv[1] == "direct" else os.O_RDWR
fd = os.open("mixed", access | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(300):
    os.write(fd, b"%s %d %04d %s\n" % (sys.argv[1].encode(), os.getpid(), i, b"x" * 40))
os.close(fd)
