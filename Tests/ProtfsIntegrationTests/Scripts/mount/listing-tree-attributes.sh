#!/usr/bin/env bash
# Usage: listing-tree-attributes.sh MOUNT. In the tree make-listing-tree.sh made: the
# inode numbers, types and sizes a bare listing (readdir's d_ino, d_type) gives agree with
# lstat; ls -l, cat, readlink and du are right.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mnt=$1
cd "$mnt/top"
python3 "$here/bare-listing-attributes.py"
[ "$(ls -l sub3 | grep -c '^-')" = 3 ]
[ "$(ls -l | awk '$NF == "file150" { print $5 }')" = 150 ]
[ "$(cat sub4/f2)" = 42 ]
[ "$(readlink link)" = file7 ]
du -s . > /dev/null
