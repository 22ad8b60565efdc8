#!/usr/bin/env bash
# Usage: swap-class-hints.sh BACKING (of an unmounted vault holding two files, one under
# 400 bytes). The small file's class hint is copied onto the large one, then removed from
# the small one.
set -euo pipefail
backing=$1
cd "$backing"
a=$(find . -maxdepth 1 -type f ! -name 'protfs.*' -size -400c -print -quit)
b=$(find . -maxdepth 1 -type f ! -name 'protfs.*' -size +399c -print -quit)
hint=$(getfattr --only-values -e hex -n user.protfs.class "$a")
setfattr -n user.protfs.class -v "$hint" "$b"
setfattr -x user.protfs.class "$a"
