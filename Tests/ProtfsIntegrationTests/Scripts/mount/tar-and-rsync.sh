#!/usr/bin/env bash
# Usage: tar-and-rsync.sh SOURCE MOUNT SCRATCH. A tree with a hard link, a symlink and a user
# xattr made in SOURCE (new, off the mount) goes onto the mount with tar and rsync -aHX, back
# out to SCRATCH/back and across the mount again; each copy diff -r equal to SOURCE, with the
# link count and the xattr kept.
set -euo pipefail
source=$1
mnt=$2
scratch=$3
mkdir -p "$source/a/b"
head -c 100000 /dev/urandom > "$source/a/b/random"
echo hello > "$source/a/hello"
ln "$source/a/hello" "$source/a/hardlink"
ln -s b/random "$source/a/symlink"
setfattr -n user.note -v remembered "$source/a/hello"
tar -C "$source" -cf - . | tar -C "$mnt" -xf -
diff -r "$source" "$mnt"
# The class cannot be removed (docs/CLASSES.md: EPERM), so rsync -X from a plain directory is
# told not to try; the README says so.
rsync -aHX --filter='-x user.protfs.class' "$source/" "$mnt/rsynced/"
diff -r "$source" "$mnt/rsynced"
[ "$(stat -c %h "$mnt/rsynced/a/hello")" = 2 ]
[ "$(getfattr --only-values -n user.note "$mnt/rsynced/a/hello")" = remembered ]
mkdir "$scratch/back"
rsync -aHX "$mnt/rsynced/" "$scratch/back/"
diff -r "$source" "$scratch/back"
[ "$(getfattr --only-values -n user.note "$scratch/back/a/hello")" = remembered ]
rsync -aHX "$mnt/rsynced/" "$mnt/second/"
diff -r "$source" "$mnt/second"
