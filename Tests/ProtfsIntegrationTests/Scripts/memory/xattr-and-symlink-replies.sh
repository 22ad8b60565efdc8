#!/usr/bin/env bash
# Usage: xattr-and-symlink-replies.sh MOUNT NAME VALUE TARGET. The xattr user.NAME=VALUE and a
# symlink to TARGET go in and come back out in replies (getxattr, listxattr, readlink)
# three times.
set -euo pipefail
mnt=$1
name=$2
value=$3
target=$4
cd "$mnt"
echo data > f
setfattr -n "user.$name" -v "$value" f
ln -s "$target" link
for i in 1 2 3; do
    [ "$(getfattr --only-values -n "user.$name" f)" = "$value" ]
    grep -q "$name" <<<"$(getfattr -d f)"
    [ "$(readlink link)" = "$target" ]
    ls -l > /dev/null
done
