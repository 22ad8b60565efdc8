#!/usr/bin/env python3
# Usage: direct-io-offsets.py MOUNT. O_DIRECT reads and writes at aligned and odd offsets
# and lengths, across chunk boundaries and the end, agreeing with the page cache.
import errno, mmap, os

from call_checks import Fails, expect, finish

fd = os.open("direct", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
aligned = mmap.mmap(-1, 65536)
aligned.write(os.urandom(65536))
expect("aligned O_DIRECT write", lambda: os.pwritev(fd, [aligned], 0), 65536)
expect("odd O_DIRECT write across a chunk boundary", lambda: os.pwrite(fd, b"abcdefg", 4093), 7)
expect("odd O_DIRECT write of odd length", lambda: os.pwrite(fd, b"z" * 5000, 12345), 5000)
expect("O_DIRECT write past the end", lambda: os.pwrite(fd, b"tail", 70001), 4)
back = mmap.mmap(-1, 8192)
expect("aligned O_DIRECT read", lambda: os.preadv(fd, [back], 4096), 8192)
expect("odd O_DIRECT read", lambda: os.pread(fd, 7, 4093), b"abcdefg")
expect("odd O_DIRECT read of odd length", lambda: os.pread(fd, 5000, 12345), b"z" * 5000)
expect("O_DIRECT read across the end", lambda: os.pread(fd, 100, 70000), b"\0tail")
expect("O_DIRECT read past the end", lambda: os.pread(fd, 100, 10**9), b"")
expect("O_DIRECT read of 0 bytes", lambda: os.pread(fd, 0, 3), b"")
expect("O_DIRECT read at 2^62", lambda: os.pread(fd, 10, 2**62), b"")
expect("O_DIRECT write at 2^63 - 2", lambda: os.pwrite(fd, b"x", 2**63 - 2), Fails(errno.EFBIG))
os.close(fd)
expected = bytearray(aligned[:])
expected[4093:4100] = b"abcdefg"
expected[12345:17345] = b"z" * 5000
expected += b"\0" * (70001 - len(expected)) + b"tail"
with open("direct", "rb") as cached:
    expect("the same bytes through the page cache", lambda: cached.read(), bytes(expected))

finish()
