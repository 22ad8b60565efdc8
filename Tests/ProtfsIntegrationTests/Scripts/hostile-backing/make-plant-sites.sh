#!/usr/bin/env bash
# Usage: make-plant-sites.sh MOUNT LONG_NAME. What HostileBackingTests plants over, by role:
# files, directories (metadir holding a file), a file stored under a long name, a symlink
# whose target is stored out of line, and a plain file left alone.
set -euo pipefail
mnt=$1
long_name=$2
cd "$mnt"
for f in symfile relsym fifo device hardlink plain; do printf 'inside %s' "$f" > "$f"; done
mkdir symdir metadir; printf 'x' > metadir/kept
printf 'long' > "$long_name"
ln -s "$(head -c 4000 /dev/zero | tr '\0' t)" longlink
