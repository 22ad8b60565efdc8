#!/usr/bin/env bash
# Usage: set-id-bits-on-write.sh MOUNT (mounted allow_other). A write by nobody (no CAP_FSETID)
# drops set-ID bits as the kernel does (set-group-ID only with group execute), through the page
# cache, write-only and O_DIRECT descriptors; a write by root keeps them; the data lands.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mnt=$1
cd "$mnt"
chmod 1777 .
# The script on standard input: the user the write runs as may not read this directory.
write() { setpriv "$@" /usr/bin/python3 - "$file" "$how" < "$here/write-second-block.py"; }
nobody="--reuid=65534 --regid=65534 --clear-groups"
for how in cached writeonly direct; do
    for case in 6775:775 4755:755 2775:775 2765:2765; do
        file=$how-${case%%:*}
        setpriv $nobody sh -c "head -c 8192 /dev/zero > $file && chmod ${case%%:*} $file"
        write $nobody
        [ "$(stat -c %a $file)" = "${case##*:}" ] || { echo "$file: $(stat -c %a $file) after nobody wrote"; exit 1; }
        chmod ${case%%:*} $file
        write --reuid=0
        [ "$(stat -c %a $file)" = "${case%%:*}" ] || { echo "$file: $(stat -c %a $file) after root wrote"; exit 1; }
        [ "$(head -c 8192 $file | tail -c 4096 | tr -d w | wc -c)" = 0 ]
    done
done
