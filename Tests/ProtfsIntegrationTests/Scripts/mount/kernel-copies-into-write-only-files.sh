#!/usr/bin/env bash
# Usage: kernel-copies-into-write-only-files.sh MOUNT. sendfile, splice from a pipe,
# copy_file_range and cp into write-only descriptors (direct I/O): the kernel hands these
# writes over as its own pages, not a user buffer. Each copy equals the source.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mnt=$1
cd "$mnt"
head -c 3000001 /dev/urandom > /tmp/protfs-copy-source-$$
trap 'rm -f /tmp/protfs-copy-source-$$' EXIT
python3 "$here/copy-with-kernel-calls.py" /tmp/protfs-copy-source-$$
cmp /tmp/protfs-copy-source-$$ sent
cmp /tmp/protfs-copy-source-$$ spliced
cmp /tmp/protfs-copy-source-$$ copied
cp /tmp/protfs-copy-source-$$ with-cp
cmp /tmp/protfs-copy-source-$$ with-cp
