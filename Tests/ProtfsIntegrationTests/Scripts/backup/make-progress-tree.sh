#!/usr/bin/env bash
# Usage: make-progress-tree.sh DIRECTORY (new): 100 directories of 100 small files each,
# 10,101 objects with DIRECTORY itself.
set -euo pipefail
mkdir "$1"
cd "$1"
for d in $(seq 100); do
    mkdir "d$d"
    for f in $(seq 100); do echo "$d.$f" > "d$d/f$f"; done
done
