#!/usr/bin/env python3
# Usage: huge-offsets-and-sizes.py MOUNT. Reads, writes, truncations and seeks at the largest
# offsets and of zero length, SEEK_DATA/SEEK_HOLE, and directory offsets never handed out,
# each call checked against Linux's answer.
import errno, os

from call_checks import Fails, expect, failures, finish
from request_helpers import getdents

fd = os.open("f", os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"hello world", 0)
top = 2**63 - 1
expect("pread past the largest offset", lambda: os.pread(fd, 10, top), Fails(errno.EINVAL))
expect("pread at 2^62", lambda: os.pread(fd, 10, 2**62), b"")
expect("pread at 2^63 - 4097", lambda: os.pread(fd, 4096, top - 4096), b"")
expect("pwrite at 2^63 - 2", lambda: os.pwrite(fd, b"x", top - 1), Fails(errno.EFBIG))
expect("pwrite at 2^63 - 8192", lambda: os.pwrite(fd, b"x" * 4096, top - 8192), Fails(errno.EFBIG))
expect("pwrite across 2^63", lambda: os.pwrite(fd, b"x" * 100, top - 50), Fails(errno.EINVAL))
expect("ftruncate to 2^63 - 1", lambda: os.ftruncate(fd, top), Fails(errno.EFBIG))
expect("ftruncate to -1", lambda: os.ftruncate(fd, -1), Fails(errno.EINVAL))
expect("pread of 0 bytes", lambda: os.pread(fd, 0, 5), b"")
expect("pwrite of 0 bytes", lambda: os.pwrite(fd, b"", 5), 0)
expect("pwrite of 0 bytes at 2^62", lambda: os.pwrite(fd, b"", 2**62), 0)
expect("the size after all that", lambda: os.fstat(fd).st_size, 11)
expect("the contents after all that", lambda: os.pread(fd, 100, 0), b"hello world")
# Far past the end: the backing filesystem's own limit (EFBIG on ext4), or a sparse
# file that reads back.
far = 2**44 + 5
try:
    os.pwrite(fd, b"far", far)
    expect("the far write reads back", lambda: os.pread(fd, 3, far), b"far")
    expect("the hole before it reads as zeros", lambda: os.pread(fd, 8, far - 8), b"\0" * 8)
    os.ftruncate(fd, 11)
except OSError as e:
    if e.errno != errno.EFBIG:
        failures.append("write at 2^44: %s" % errno.errorcode.get(e.errno, e.errno))
expect("SEEK_DATA at 0", lambda: os.lseek(fd, 0, os.SEEK_DATA), 0)
expect("SEEK_HOLE at 0", lambda: os.lseek(fd, 0, os.SEEK_HOLE), 11)
expect("SEEK_DATA past the end", lambda: os.lseek(fd, 100, os.SEEK_DATA), Fails(errno.ENXIO))
expect("SEEK_HOLE past the end", lambda: os.lseek(fd, 100, os.SEEK_HOLE), Fails(errno.ENXIO))
expect("SEEK_END to near 2^62", lambda: os.lseek(fd, 2**62, os.SEEK_END), 2**62 + 11)
expect("a read at that offset", lambda: os.read(fd, 10), b"")
os.close(fd)
for i in range(5):
    open("entry%d" % i, "w").close()
directory = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
# Directory offsets are the backing directory's own positions (on ext4, name hashes):
# one never handed out lists some of the entries, or none, and is never an error.
listed = set([b".", b"..", b"f"] + [b"entry%d" % i for i in range(5)])
for offset in [3, 8, 1000, 2**31, 2**62, 2**63 - 1]:
    expect("lseek the directory to %d" % offset, lambda: os.lseek(directory, offset, os.SEEK_SET), offset)
    expect("getdents at %d lists only entries" % offset, lambda: set(getdents(directory)) <= listed, True)
expect("lseek the directory to -1", lambda: os.lseek(directory, -1, os.SEEK_SET), Fails(errno.EINVAL))
os.lseek(directory, 0, os.SEEK_SET)
expect("a whole listing after all that", lambda: sorted(getdents(directory)), sorted([b".", b"..", b"f"] + [b"entry%d" % i for i in range(5)]))

finish()
