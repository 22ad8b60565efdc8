#!/usr/bin/env bash
# Usage: make-fsck-tree.sh MOUNT SIZE. The tree FsckTests checks: docs/report.txt of SIZE
# random bytes, docs/old/kept.txt with a user xattr, open.txt of class none, docs/link.
set -euo pipefail
mnt=$1
size=$2
cd "$mnt"
mkdir -p docs/old
head -c "$size" /dev/urandom > docs/report.txt
echo kept > docs/old/kept.txt
echo open > open.txt
setfattr -n user.protfs.class -v none open.txt
setfattr -n user.note -v hello docs/old/kept.txt
ln -s old/kept.txt docs/link
