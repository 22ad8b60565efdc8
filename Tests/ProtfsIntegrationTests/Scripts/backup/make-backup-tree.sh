#!/bin/bash
# make-backup-tree.sh MOUNTPOINT MARKER: a tree for the backup round trip: a file of every
# class holding MARKER (so the archive can be searched for it), a hard link, symlinks (one
# long enough to be stored out of line), a FIFO, xattrs (120 on one file), a sparse file, odd
# modes and owners.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$1"
marker=$2
for class in none completeUntilFirstUserAuthentication completeUnlessOpen complete; do
    mkdir "c-$class"
    setfattr -n user.protfs.class -v "$class" "c-$class"
    printf '%s in %s\n' "$marker" "$class" > "c-$class/file"
    setfattr -n user.note -v "$marker xattr $class" "c-$class/file"
done
ln c-complete/file c-none/hard-link
ln -s ../c-none/file c-complete/symlink
ln -s "$(head -c 3500 /dev/zero | tr '\0' 'x')" long-symlink
mkfifo fifo
chmod 0751 c-none
chmod 0604 c-none/file
chown 65532:65533 c-completeUnlessOpen/file
# 120 small xattrs on one file (packed into one backing xattr) and a larger one (kept apart;
# both fit the one 4 KiB block ext4 gives a file's xattrs).
touch many-xattrs
python3 "$here/many-xattrs.py" . set many-xattrs 120
setfattr -n user.large -v "$(head -c 1200 /dev/zero | tr '\0' 'L')" many-xattrs
# A 64 MiB sparse file with data at both ends; a long name.
printf 'start %s\n' "$marker" > sparse
truncate -s 64M sparse
printf 'end\n' >> sparse
touch "$(head -c 200 /dev/zero | tr '\0' 'n')"
touch -d '2001-02-03 04:05:06.123456789' c-none/file
# Many chunks of archive, and extents of more than one 1 MiB piece: data that does not repeat.
head -c 2600000 /dev/urandom > random
