#!/usr/bin/env bash
# Usage: appends-direct-io-and-mmap.sh MOUNT. O_APPEND from several writers (through the page
# cache and O_DIRECT, interleaved) loses no line; O_DIRECT round trips; a shared writable
# mapping across a page boundary reaches the file (read again after a remount by the test).
set -euo pipefail
mnt=$1
cd "$mnt"
for i in 1 2 3 4; do (for j in $(seq 1 200); do echo "writer $i line $j" >> log; done) & done; wait
[ "$(wc -l < log)" = 800 ]
[ "$(grep -c 'writer 3 line' log)" = 200 ]
# Appends through direct I/O (O_DIRECT) and the page cache (read-write), interleaved.
for how in direct direct cached; do python3 -c '
import os, sys
access = os.O_WRONLY | os.O_DIRECT if sys.argv[1] == "direct" else os.O_RDWR
fd = os.open("mixed", access | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(300):
    os.write(fd, b"%s %d %04d %s\n" % (sys.argv[1].encode(), os.getpid(), i, b"x" * 40))
os.close(fd)' $how & done; wait
[ "$(wc -l < mixed)" = 900 ]; [ "$(grep -cE '^(direct|cached) [0-9]+ [0-9]{4} x{40}$' mixed)" = 900 ]
head -c 1048576 /dev/urandom > src
dd if=src of=direct bs=4096 oflag=direct status=none
dd if=direct of=back bs=4096 iflag=direct status=none
cmp src back
python3 - <<'PY'
import mmap, os
fd = os.open("mapped", os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 3 * 4096 + 17)
m = mmap.mmap(fd, 3 * 4096 + 17)
m[4090:4110] = b"across-the-boundary!"
m.flush(); m.close(); os.close(fd)
data = open("mapped", "rb").read()
assert data[4090:4110] == b"across-the-boundary!" and len(data) == 3 * 4096 + 17
PY
