#!/usr/bin/env bash
# Usage: read-three-megabytes.sh MOUNT. 3 MiB written, read back with O_DIRECT in 1 MiB
# requests and through the page cache.
set -euo pipefail
mnt=$1
cd "$mnt"
head -c 3M /dev/urandom > f
dd if=f of=/dev/null bs=1M iflag=direct status=none
cmp f f
