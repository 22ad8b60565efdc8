#!/usr/bin/env bash
# Usage: make-complete-secret.sh MOUNT. c/ (complete) holding c/secret, 100000 random bytes.
set -euo pipefail
mnt=$1
cd "$mnt"
mkdir c
setfattr -n user.protfs.class -v complete c
head -c 100000 /dev/urandom > c/secret
