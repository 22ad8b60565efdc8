#!/usr/bin/env bash
# Usage: snapshot-tree.sh DIRECTORY. Modes, owners, sizes, mtimes, contents and listings of
# everything under DIRECTORY.
set -euo pipefail
directory=$1
cd "$directory"
find . | sort | while read -r p; do
    stat -c '%n %F %a %u:%g %s %.9Y' "$p"; if [ -f "$p" ]; then sha256sum < "$p"; fi
done
