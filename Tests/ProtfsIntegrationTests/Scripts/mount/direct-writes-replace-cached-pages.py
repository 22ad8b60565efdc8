#!/usr/bin/env python3
# Usage: direct-writes-replace-cached-pages.py MOUNT. O_DIRECT and write-only writes (both
# bypass the page cache) replace what a reader cached before, kept or opened again; so does
# the size an append grows.
import mmap, os, sys

os.chdir(sys.argv[1])
with open("f", "wb") as f:
    f.write(b"a" * 65536)
cached = os.open("f", os.O_RDONLY)
assert os.pread(cached, 65536, 0) == b"a" * 65536
direct = os.open("f", os.O_RDWR | os.O_DIRECT)
block = mmap.mmap(-1, 8192)
block.write(b"b" * 8192)
assert os.pwritev(direct, [block], 4096) == 8192
back = mmap.mmap(-1, 65536)
assert os.preadv(direct, [back], 0) == 65536 and back[4096:12288] == b"b" * 8192
seen = os.pread(cached, 65536, 0)
assert seen == b"a" * 4096 + b"b" * 8192 + b"a" * (65536 - 12288), "stale pages after O_DIRECT"
writer = os.open("f", os.O_WRONLY)
assert os.pwrite(writer, b"c" * 5000, 30000) == 5000
expected = seen[:30000] + b"c" * 5000 + seen[35000:]
assert os.pread(cached, 65536, 0) == expected, "stale pages after a write-only write"
with open("f", "rb") as again:
    assert again.read() == expected, "stale pages for a new reader"
with open("f", "ab") as appender:
    appender.write(b"d" * 100)
assert os.pread(cached, 70000, 0) == expected + b"d" * 100, "stale size after an append"
