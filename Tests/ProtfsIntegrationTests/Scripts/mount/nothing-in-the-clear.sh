#!/usr/bin/env bash
# Usage: nothing-in-the-clear.sh MOUNT BACKING MARKER. A directory, file, content, xattr and
# symlink target all named with MARKER are made on the mount; MARKER then appears nowhere in
# BACKING: not in contents, names, xattrs or symlink targets.
set -eu
# No pipefail: in `! producer | grep -q`, grep's early exit may kill the producer with
# SIGPIPE, which pipefail would turn into a pass.
mnt=$1
backing=$2
marker=$3
cd "$mnt"
mkdir dir-$marker
echo content-$marker > dir-$marker/file-$marker
setfattr -n user.$marker -v value-$marker dir-$marker/file-$marker
ln -s target-$marker link-$marker
sync
! grep -r -a -l "$marker" "$backing" || exit 1
! ls -R "$backing" | grep -q "$marker" || exit 1
! getfattr -R -d -m - "$backing" 2>/dev/null | grep -q "$marker" || exit 1
! find "$backing" -type l -printf '%l\n' | grep -q "$marker" || exit 1
