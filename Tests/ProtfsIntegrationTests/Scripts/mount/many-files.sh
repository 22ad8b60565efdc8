#!/usr/bin/env bash
# Usage: many-files.sh DIRECTORY (new, on a mount whose daemon holds fewer descriptors than
# the files made here). 3000 files made, listed with ls -l and ls -a, read back, removed.
set -euo pipefail
directory=$1
mkdir "$directory"
cd "$directory"
for i in $(seq 3000); do echo "$i" > "f$i"; done
[ "$(ls -l | grep -c '^-')" = 3000 ]
# From cold caches: the kernel's FORGETs thin the table while lookups refill it.
for round in 1 2 3 4 5; do
    sync; echo 3 > /proc/sys/vm/drop_caches
    [ "$(ls -l | grep -c '^-')" = 3000 ]
done
[ "$(ls -a | grep -cE '^[.]{1,2}$')" = 2 ]
for i in $(seq 3000); do read -r n < "f$i"; [ "$n" = "$i" ]; done
cd /
rm -rf "$directory"
