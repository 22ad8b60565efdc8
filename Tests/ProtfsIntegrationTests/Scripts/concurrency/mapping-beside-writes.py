#!/usr/bin/env python3
# Usage: mapping-beside-writes.py MOUNT. One process writes the first half of MOUNT/mapped
# through a shared mapping (written back by the kernel as it likes), another the second half
# with pwrite, version after version. Prints the processes' exit statuses.
import mmap, os, random

from concurrent_clients import CHUNK, MNT, in_processes, pattern

path, HALF = os.path.join(MNT, "mapped"), 32 * CHUNK
with open(path, "wb") as f:
    f.write(pattern(0, 2 * HALF, 0))

def mapper(_):
    fd = os.open(path, os.O_RDWR)
    m = mmap.mmap(fd, 2 * HALF, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    rng = random.Random(1)
    for version in range(1, 41):
        for start in sorted(rng.sample(range(0, HALF, 1000), 8)) + [0]:
            end = min(start + 1000, HALF)
            m[start:end] = pattern(start, end - start, version)
        m[0:HALF] = pattern(0, HALF, version)
        if version % 10 == 0:
            m.flush()
    m.flush()
    m.close()
    os.close(fd)

def writer(_):
    fd = os.open(path, os.O_WRONLY)
    for version in range(1, 41):
        for start in range(HALF, 2 * HALF, 5000):
            end = min(start + 5000, 2 * HALF)
            os.pwrite(fd, pattern(start, end - start, version), start)
    os.close(fd)

print("processes", in_processes(2, lambda i: (mapper, writer)[i](i)))
