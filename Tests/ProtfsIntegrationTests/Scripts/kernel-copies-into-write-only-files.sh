#!/usr/bin/env bash
# Usage: kernel-copies-into-write-only-files.sh MOUNT. sendfile, splice from a pipe,
# copy_file_range and cp into write-only descriptors (direct I/O): the kernel hands these
# writes over as its own pages, not a user buffer. Each copy equals the source.
set -euo pipefail
mnt=$1
cd "$mnt"
head -c 3000001 /dev/urandom > /tmp/protfs-copy-source-$$
trap 'rm -f /tmp/protfs-copy-source-$$' EXIT
python3 -c '
import os, sys
source = sys.argv[1]
def into(name):
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
src, dst = os.open(source, os.O_RDONLY), into("sent")
while os.sendfile(dst, src, None, 1 << 20):
    pass
os.close(dst)
read_end, write_end = os.pipe()
src, dst = os.open(source, os.O_RDONLY), into("spliced")
while True:
    moved = os.splice(src, write_end, 65536)
    if not moved:
        break
    while moved:
        moved -= os.splice(read_end, dst, moved)
os.close(dst)
src, dst = os.open("sent", os.O_RDONLY), into("copied")
left = os.fstat(src).st_size
while left:
    left -= os.copy_file_range(src, dst, left)
os.close(dst)
' /tmp/protfs-copy-source-$$
cmp /tmp/protfs-copy-source-$$ sent
cmp /tmp/protfs-copy-source-$$ spliced
cmp /tmp/protfs-copy-source-$$ copied
cp /tmp/protfs-copy-source-$$ with-cp
cmp /tmp/protfs-copy-source-$$ with-cp
