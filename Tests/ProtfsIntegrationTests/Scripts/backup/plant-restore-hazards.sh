#!/bin/bash
# plant-restore-hazards.sh BACKING OWNER: turns an unmounted vault's backing directory into
# what an archive's author could put in an archive (docs/BACKUP.md, "What a restore
# trusts"): a set-user-ID root copy of bash under the items folder, one more under a record's
# name (so a malformed record), a symlink in the links folder, and a `c 1 1` device node;
# then gives the backing root and the items folder to OWNER, as if OWNER had made it.
# Prints the malformed record's name.
set -euo pipefail
backing=$1
owner=$2
mkdir -p "$backing/protfs.items" "$backing/protfs.links"
install -o root -g root -m 4755 /bin/bash "$backing/protfs.items/bash"
# 32 bytes in base64url without padding: the name of a record, whose bytes are not one.
record=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
install -o root -g root -m 4755 /bin/bash "$backing/protfs.items/$record"
ln -s /etc/shadow "$backing/protfs.links/$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
mknod -m 0666 "$backing/mem" c 1 1
chown "$owner" "$backing" "$backing/protfs.items"
echo "$record"
