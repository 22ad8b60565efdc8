#!/usr/bin/env bash
# Symlinks for the format-1 upgrade test, made and checked through a mount.
#   make MOUNT     three symlinks: relative in a subdirectory, to a file, one stored out of line
#   verify MOUNT   each still resolves to the same target
#   rename MOUNT   one renamed into another directory, the other two exchanged: each reads
set -euo pipefail
mode=$1
cd "$2"
long=$(for i in $(seq 1 1500); do printf 'x/'; done)kept.txt
case $mode in
make)
    mkdir -p docs/old
    echo kept > docs/old/kept.txt
    ln -s old/kept.txt docs/link
    ln -s docs/old/kept.txt top
    ln -s "$long" long
    ;;
verify)
    [ "$(readlink docs/link)" = old/kept.txt ]
    [ "$(cat docs/link)" = kept ]
    [ "$(readlink top)" = docs/old/kept.txt ]
    [ "$(cat top)" = kept ]
    [ "$(readlink long)" = "$long" ]
    [ "$(stat -c %s long)" = 3008 ]
    ;;
rename)
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    mv docs/link docs/old/link
    [ "$(python3 "$here/link-or-rename.py" exchange top long)" = OK ]
    [ "$(readlink docs/old/link)" = old/kept.txt ]
    [ "$(readlink top)" = "$long" ]
    [ "$(readlink long)" = docs/old/kept.txt ]
    [ "$(cat long)" = kept ]
    ;;
*) echo "usage: $0 make|verify|rename MOUNT" >&2; exit 2 ;;
esac
