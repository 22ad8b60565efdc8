#!/usr/bin/env bash
# Usage: listing-tree-attributes.sh MOUNT. In the tree make-listing-tree.sh made: the
# inode numbers, types and sizes a bare listing (readdir's d_ino, d_type) gives agree with
# lstat; ls -l, cat, readlink and du are right.
set -euo pipefail
mnt=$1
cd "$mnt/top"
python3 - <<'PY'
import os
entries = list(os.scandir("."))
assert len(entries) == 206, len(entries)
for entry in entries:
    status = os.lstat(entry.name)
    assert entry.inode() == status.st_ino, (entry.name, entry.inode(), status.st_ino)
    assert entry.is_dir(follow_symlinks=False) == (entry.name.startswith("sub")), entry.name
    assert entry.is_symlink() == (entry.name == "link"), entry.name
    if entry.name.startswith("file"):
        assert status.st_size == int(entry.name[4:]), (entry.name, status.st_size)
PY
[ "$(ls -l sub3 | grep -c '^-')" = 3 ]
[ "$(ls -l | awk '$NF == "file150" { print $5 }')" = 150 ]
[ "$(cat sub4/f2)" = 42 ]
[ "$(readlink link)" = file7 ]
du -s . > /dev/null
