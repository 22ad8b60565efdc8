#!/usr/bin/env bash
# Usage: hard-links-symlinks-fifos-renames.sh MOUNT. Hard link counts, a 4095-byte symlink
# target, FIFOs, renameat2 with RENAME_NOREPLACE and RENAME_EXCHANGE, 255-byte names,
# directory renames.
set -euo pipefail
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
python3 - <<'PY'
import ctypes, os, errno
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
def renameat2(a, b, flags):
    r = libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags)
    return 0 if r == 0 else ctypes.get_errno()
assert renameat2("a", "b", 1) == errno.EEXIST          # RENAME_NOREPLACE
assert renameat2("a", "b", 2) == 0                     # RENAME_EXCHANGE
assert open("a").read() == "B\n" and open("b").read() == "A\n"
assert renameat2("a", "c", 1) == 0
assert not os.path.exists("a") and open("c").read() == "B\n"
PY
name=$(printf 'n%.0s' $(seq 1 255))
echo long > "$name"
[ "$(cat "$name")" = long ]
mv "$name" renamed-long
[ "$(cat renamed-long)" = long ]
mkdir -p d1/d2; mv d1 d3; [ -d d3/d2 ]
rmdir d3/d2 d3
