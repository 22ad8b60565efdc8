#!/usr/bin/env bash
# Usage: listing-after-create.sh MOUNT. A listing right after a create shows it, 40 times
# over, in a large directory and in one whose listing fits in a single reply (left before
# its end).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mnt=$1
cd "$mnt"
mkdir d e
for i in $(seq 300); do : > "d/f$i"; done
: > e/one
python3 "$here/listings-after-creates.py"
