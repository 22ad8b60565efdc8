#!/usr/bin/env bash
# Usage: hard-links-symlinks-fifos-renames.sh MOUNT. Hard link counts, a 4095-byte symlink
# target, FIFOs, renameat2 with RENAME_NOREPLACE and RENAME_EXCHANGE, 255-byte names,
# directory renames.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mnt=$1
cd "$mnt"
echo one > f
ln f g
ln f h
[ "$(stat -c %h f)" = 3 ]
rm g
[ "$(stat -c %h f)" = 2 ]
long_target=$(printf 'd/%.0s' $(seq 2047))x
ln -s "$long_target" longlink
[ "$(readlink longlink)" = "$long_target" ]
[ "$(stat -c %s longlink)" = 4095 ]
ln -s short shortlink
[ "$(readlink shortlink)" = short ]
mkfifo pipe
[ "$(stat -c %F pipe)" = fifo ]
(echo through > pipe &) ; [ "$(cat pipe)" = through ]
echo A > a; echo B > b
python3 "$here/renameat2-flags.py"
name=$(printf 'n%.0s' $(seq 1 255))
echo long > "$name"
[ "$(cat "$name")" = long ]
mv "$name" renamed-long
[ "$(cat renamed-long)" = long ]
mkdir -p d1/d2; mv d1 d3; [ -d d3/d2 ]
rmdir d3/d2 d3
