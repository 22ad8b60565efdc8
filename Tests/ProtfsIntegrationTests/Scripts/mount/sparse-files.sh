#!/usr/bin/env bash
# Usage: sparse-files.sh MOUNT. Sparse files past 4 GiB, truncation down and up and fallocate:
# sizes as set, holes read as zeros, the kept prefix intact.
set -euo pipefail
mnt=$1
cd "$mnt"
printf 'tail' | dd of=big bs=1 seek=5000000000 conv=notrunc status=none
[ "$(stat -c %s big)" = 5000000004 ]
[ "$(dd if=big bs=1 skip=5000000000 count=4 status=none)" = tail ]
[ "$(dd if=big bs=1 skip=4294967296 count=4 status=none | od -v -An -tx1 | tr -d ' ')" = 00000000 ]
[ "$(du -k big | cut -f1)" -lt 1024 ]
head -c 10000 /dev/urandom > t
cp t t.orig
truncate -s 5000 t; cmp t <(head -c 5000 t.orig)
truncate -s 9000 t; [ "$(stat -c %s t)" = 9000 ]
cmp <(head -c 5000 t) <(head -c 5000 t.orig)
[ "$(tail -c 4000 t | od -v -An -tx1 | tr -d ' \n' | tr -d 0)" = "" ]
truncate -s 0 t; [ "$(stat -c %s t)" = 0 ]
fallocate -l 1000000 f; [ "$(stat -c %s f)" = 1000000 ]
[ "$(od -v -An -tx1 f | tr -d ' \n' | tr -d 0)" = "" ]
