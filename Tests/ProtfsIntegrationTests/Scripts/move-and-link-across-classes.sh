#!/usr/bin/env bash
# Usage: move-and-link-across-classes.sh MOUNT (with the d-CLASS directories). Files and a
# directory moved and hard-linked between directories of other classes.
set -euo pipefail
mnt=$1
cd "$mnt"
mkdir d-complete/tree; echo inside > d-complete/tree/g
mv d-complete/f d-none/from-complete
mv d-complete/tree d-none/tree
ln d-completeUnlessOpen/f d-none/linked
mv d-none/f d-complete/from-none
