#!/usr/bin/env bash
# Usage: make-listing-tree.sh MOUNT. top/: five subdirectories of three files, 200 files
# of 1 to 200 bytes and a symlink, for listing-tree-attributes.sh to read on a fresh mount.
set -euo pipefail
mnt=$1
cd "$mnt"
mkdir top
for d in 1 2 3 4 5; do mkdir "top/sub$d"; for f in 1 2 3; do echo "$d$f" > "top/sub$d/f$f"; done; done
for i in $(seq 200); do head -c "$i" /dev/zero > "top/file$i"; done
ln -s file7 top/link
