#!/usr/bin/env bash
# Usage: make-shared-class-directory.sh MOUNT. shared/ (completeUnlessOpen, mode 777) with a
# file root owns that anybody may write and a subdirectory anybody may create in.
set -euo pipefail
mnt=$1
cd "$mnt"
chmod 755 .
mkdir shared; chmod 777 shared; setfattr -n user.protfs.class -v completeUnlessOpen shared
echo by root > shared/f; chmod 666 shared/f
mkdir shared/d; chmod 777 shared/d
