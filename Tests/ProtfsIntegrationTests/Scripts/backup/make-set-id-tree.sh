#!/bin/bash
# make-set-id-tree.sh MOUNTPOINT: what a vault's owner may legitimately keep and a restore
# must still not make as root would: a set-user-ID copy of bash, a set-group-ID directory,
# and a FIFO, which a restore keeps.
set -euo pipefail
cd "$1"
cp /bin/bash tool
chmod 4755 tool
mkdir shared
chmod 2775 shared
mkfifo pipe
