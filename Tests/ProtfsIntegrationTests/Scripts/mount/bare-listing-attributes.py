#!/usr/bin/env python3
# Usage: bare-listing-attributes.py (in top/ of the tree make-listing-tree.sh made). The inode
# numbers and types a bare listing (readdir) gives agree with lstat; sizes are right.
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
