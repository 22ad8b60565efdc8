#!/usr/bin/env bash
# Usage: make-nested-classes.sh MOUNT. l1, re-classed complete, holds l1/l2/l3/f, which
# inherit its class.
set -euo pipefail
mnt=$1
cd "$mnt"
mkdir l1; setfattr -n user.protfs.class -v complete l1
mkdir l1/l2 l1/l2/l3
echo deep > l1/l2/l3/f
