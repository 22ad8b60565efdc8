#!/usr/bin/env bash
# Usage: appends-direct-io-and-mmap.sh MOUNT. O_APPEND from several writers (through the page
# cache and O_DIRECT, interleaved) loses no line; O_DIRECT round trips; a shared writable
# mapping across a page boundary reaches the file (read again after a remount by the test).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mnt=$1
cd "$mnt"
for i in 1 2 3 4; do (for j in $(seq 1 200); do echo "writer $i line $j" >> log; done) & done; wait
[ "$(wc -l < log)" = 800 ]
[ "$(grep -c 'writer 3 line' log)" = 200 ]
# Appends through direct I/O (O_DIRECT) and the page cache (read-write), interleaved.
for how in direct direct cached; do python3 "$here/append-lines.py" $how & done; wait
[ "$(wc -l < mixed)" = 900 ]; [ "$(grep -cE '^(direct|cached) [0-9]+ [0-9]{4} x{40}$' mixed)" = 900 ]
head -c 1048576 /dev/urandom > src
dd if=src of=direct bs=4096 oflag=direct status=none
dd if=direct of=back bs=4096 iflag=direct status=none
cmp src back
python3 "$here/map-across-page-boundary.py"
