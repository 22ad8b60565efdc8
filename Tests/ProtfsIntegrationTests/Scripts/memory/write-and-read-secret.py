#!/usr/bin/env python3
# Usage: write-and-read-secret.py MOUNT MARKER_HEX. c/ (complete) and c/secret holding the
# marker: written whole, at odd offsets across chunk boundaries, appended and through a shared
# mapping; read back buffered, with O_DIRECT and through the mapping.
import mmap, os, sys
os.chdir(sys.argv[1])
marker = bytes.fromhex(sys.argv[2])
os.mkdir("c")
os.setxattr("c", "user.protfs.class", b"complete")
with open("c/secret", "wb") as f:
    f.write(os.urandom(5000) + marker + os.urandom(70000) + marker)
fd = os.open("c/secret", os.O_RDWR)
os.pwrite(fd, marker, 4090)
os.pwrite(fd, marker * 200, 12345)
with open("c/secret", "ab") as f:
    f.write(marker)
mapping = mmap.mmap(fd, 8192)
mapping[100:132] = marker
mapping.flush()
for _ in range(3):
    assert open("c/secret", "rb").read().count(marker) >= 204
direct = os.open("c/secret", os.O_RDONLY | os.O_DIRECT)
buffer = mmap.mmap(-1, 1 << 18)
os.preadv(direct, [buffer], 0)
assert marker in buffer[:]
assert mapping[100:132] == marker
