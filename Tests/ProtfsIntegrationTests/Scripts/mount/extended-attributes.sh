#!/usr/bin/env bash
# Usage: extended-attributes.sh MOUNT. User xattrs round-trip with setfattr and getfattr,
# removed ones are ENODATA, the trusted namespace is not supported.
set -eu
# No pipefail: each `getfattr ... | grep -q` below is the verdict of grep on what a failing
# command printed.
mnt=$1
cd "$mnt"
touch f
setfattr -n user.color -v blue f
[ "$(getfattr --only-values -n user.color f)" = blue ]
getfattr -d f | grep -q 'user.color="blue"'
setfattr -x user.color f
! getfattr -n user.color f 2>&1 || exit 1
getfattr -n user.color f 2>&1 | grep -q 'No such attribute'
setfattr -n trusted.x -v 1 f 2>&1 | grep -q 'Operation not supported'
