#!/usr/bin/env bash
# Usage: fsck-repaired-tree.sh MOUNT. After fsck --repair moved the damaged docs/report.txt
# away, the rest of the tree make-fsck-tree.sh made is all there.
set -euo pipefail
mnt=$1
cd "$mnt"
[ ! -e docs/report.txt ]
[ "$(cat docs/old/kept.txt)" = kept ]
[ "$(cat docs/link)" = kept ]
[ "$(cat open.txt)" = open ]
[ "$(getfattr --only-values -n user.note docs/old/kept.txt)" = hello ]
[ "$(ls -A)" = "$(printf 'docs\nopen.txt')" ]
