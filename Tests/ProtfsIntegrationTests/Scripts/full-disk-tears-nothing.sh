#!/usr/bin/env bash
# Usage: full-disk-tears-nothing.sh MOUNT SCRATCH (MOUNT on a backing filesystem of 4 MiB,
# SCRATCH off it). Fills the disk, then overwrites the middle of a file and tries to grow it:
# the bytes around the overwrite are unchanged and every file still reads (EIO would be a
# torn chunk). Exits with the check's status.
set -u
# No -e: the writes that fill the disk are meant to fail.
mnt=$1
scratch=$2
cd "$mnt"
head -c 1000000 /dev/urandom > kept
cp kept "$scratch/reference"
head -c 2500000 /dev/urandom > big 2>/dev/null
head -c 8000000 /dev/zero > filler 2>/dev/null
# On a full disk: overwrite the middle of 'kept' and try to grow it.
python3 - "$scratch/reference" <<'PY'
import os, sys
fd = os.open("kept", os.O_WRONLY)
for offset in range(300000, 350000, 5000):
    try:
        os.pwrite(fd, os.urandom(5000), offset)
    except OSError:
        pass
try:
    os.pwrite(fd, b"grow" * 50000, 1000000)
except OSError:
    pass
os.close(fd)
data = open("kept", "rb").read()   # EIO here would be a torn chunk
ref = open(sys.argv[1], "rb").read()
assert data[:300000 - 4096] == ref[:300000 - 4096], "bytes before the overwrite changed"
assert data[350000 + 4096:1000000] == ref[350000 + 4096:], "bytes after the overwrite changed"
open("big", "rb").read(); open("filler", "rb").read()
PY
