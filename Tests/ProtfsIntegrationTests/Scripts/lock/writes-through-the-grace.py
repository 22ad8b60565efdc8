#!/usr/bin/env python3
# Usage: writes-through-the-grace.py PROTFSCTL MOUNT RECORDS MAPPED. After a lock with a
# grace, dirties a shared mapping of MAPPED and writes 4 KiB records to RECORDS until refused:
# prints the states and how the writes stopped, and the number written on stderr.
import errno, mmap, os, sys, time

from lock_client import attempt, lock, state

path, mapped = sys.argv[3], sys.argv[4]
fd = os.open(path, os.O_WRONLY)
mfd = os.open(mapped, os.O_RDWR)
m = mmap.mmap(mfd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
lock()
print("state", state())
m[0:21] = b"dirtied in the grace\n"
written, outcome, deadline = 0, "nothing", time.time() + 20
while time.time() < deadline:
    record = ("record %08d\n" % written).encode().ljust(4096, b".")
    try:
        os.pwrite(fd, record, written * 4096)
    except OSError as e:
        outcome = errno.errorcode.get(e.errno, str(e.errno))
        break
    written += 1
    time.sleep(0.002)
print("writes stopped by", outcome)
print("state", state())
m.close()
print("close", attempt(lambda: os.close(mfd)), attempt(lambda: os.close(fd)))
print("written", written, file=sys.stderr)
