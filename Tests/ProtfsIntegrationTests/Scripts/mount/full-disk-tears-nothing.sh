#!/usr/bin/env bash
# Usage: full-disk-tears-nothing.sh MOUNT SCRATCH (MOUNT on a backing filesystem of 4 MiB,
# SCRATCH off it). Fills the disk, then overwrites the middle of a file and tries to grow it:
# the bytes around the overwrite are unchanged and every file still reads (EIO would be a
# torn chunk). Exits with the check's status.
set -u
# No -e: the writes that fill the disk are meant to fail.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mnt=$1
scratch=$2
cd "$mnt"
head -c 1000000 /dev/urandom > kept
cp kept "$scratch/reference"
head -c 2500000 /dev/urandom > big 2>/dev/null
head -c 8000000 /dev/zero > filler 2>/dev/null
# On a full disk: overwrite the middle of 'kept' and try to grow it.
python3 "$here/overwrite-on-full-disk.py" "$scratch/reference"
