# A file opened with O_DIRECT maps shared and private, and what goes through the mapping,
# through direct read(2)/write(2) and through another (cached) descriptor agrees, as fsx
# mixing direct I/O and mapped reads and writes expects.
import mmap, os

size = 3 * 4096 + 100
fd = os.open("direct-mapped", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
os.ftruncate(fd, size)
shared = mmap.mmap(fd, size)
block = mmap.mmap(-1, 4096)

shared[100:110] = b"by-mapping"
assert os.preadv(fd, [block], 0) == 4096 and block[100:110] == b"by-mapping", "direct read misses the mapping's write"
shared.flush()

block[:] = b"d" * 4096
assert os.pwritev(fd, [block], 4096) == 4096
assert shared[4096:8192] == b"d" * 4096, "the mapping misses a direct write"

cached = os.open("direct-mapped", os.O_RDONLY)
assert os.pread(cached, 10, 100) == b"by-mapping" and os.pread(cached, 4096, 4096) == b"d" * 4096

private = mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE)
assert private[4096:4100] == b"dddd"
private[0:4] = b"mine"
assert shared[0:4] == b"\0\0\0\0", "a private mapping's write reached the file"

shared.close()
private.close()
os.close(fd)
os.close(cached)
with open("direct-mapped", "rb") as f:
    data = f.read()
assert len(data) == size and data[100:110] == b"by-mapping" and data[4096:8192] == b"d" * 4096
