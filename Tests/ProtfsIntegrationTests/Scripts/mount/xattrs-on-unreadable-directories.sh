#!/usr/bin/env bash
# Usage: xattrs-on-unreadable-directories.sh MOUNT, served by a daemon without the capability
# to override permissions. A directory's xattrs are reached through a "." open of it, or through /proc
# when the daemon may not open it: here its mode leaves the owner write and search only.
set -euo pipefail
cd "$1"
mkdir d
chmod 0300 d
setfattr -n user.note -v kept d
mkdir d/sub
chmod 0700 d
[ "$(getfattr --only-values -n user.note d)" = kept ]
[ -d d/sub ]
