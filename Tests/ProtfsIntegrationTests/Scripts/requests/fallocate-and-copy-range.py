#!/usr/bin/env python3
# Usage: fallocate-and-copy-range.py MOUNT. fallocate in every mode (only mode 0 is
# supported) and copy_file_range at odd and huge offsets, each call checked.
import errno, os

from call_checks import Fails, expect, failures, finish
from request_helpers import fallocate

fd = os.open("f", os.O_RDWR | os.O_CREAT, 0o644)
data = os.urandom(20000)
os.pwrite(fd, data, 0)
KEEP_SIZE, PUNCH_HOLE, COLLAPSE, ZERO, INSERT, UNSHARE = 1, 2, 8, 16, 32, 64
expect("fallocate mode 0 inside", lambda: fallocate(fd, 0, 100, 4096))
expect("the contents survive it", lambda: os.pread(fd, 20000, 0), data)
expect("fallocate mode 0 past the end", lambda: fallocate(fd, 0, 19000, 10000))
expect("the size grows to it", lambda: os.fstat(fd).st_size, 29000)
expect("and the new range reads as zeros", lambda: os.pread(fd, 9000, 20000), b"\0" * 9000)
for mode, name in [(KEEP_SIZE, "KEEP_SIZE"), (PUNCH_HOLE | KEEP_SIZE, "PUNCH_HOLE"), (ZERO, "ZERO_RANGE"),
                   (COLLAPSE, "COLLAPSE_RANGE"), (INSERT, "INSERT_RANGE"), (UNSHARE, "UNSHARE_RANGE")]:
    expect("fallocate " + name, lambda: fallocate(fd, mode, 0, 4096), Fails(errno.EOPNOTSUPP))
expect("fallocate of length 0", lambda: fallocate(fd, 0, 0, 0), Fails(errno.EINVAL))
expect("fallocate past 2^63", lambda: fallocate(fd, 0, 2**63 - 4096, 8192), Fails(errno.EFBIG))
expect("the contents after every refused mode", lambda: os.pread(fd, 20000, 0), data)
os.ftruncate(fd, 20000)
out = os.open("g", os.O_RDWR | os.O_CREAT, 0o644)
expect("copy_file_range of the whole file", lambda: os.copy_file_range(fd, out, 20000, 0, 0), 20000)
expect("copy_file_range at odd offsets", lambda: os.copy_file_range(fd, out, 5000, 4097, 30001), 5000)
expect("copy_file_range from past the end", lambda: os.copy_file_range(fd, out, 10, 30000, 0), 0)
expect("copy_file_range of 0 bytes", lambda: os.copy_file_range(fd, out, 0, 0, 0), 0)
expect("copy_file_range to 2^63 - 5", lambda: os.copy_file_range(fd, out, 10, 0, 2**63 - 5), Fails(errno.EFBIG))
copied = expect("the copy", lambda: os.pread(out, 40000, 0))
if copied is not None and (copied[:20000] != data or copied[30001:35001] != data[4097:9097] or len(copied) != 35001):
    failures.append("copy_file_range copied the wrong bytes")

finish()
