#!/usr/bin/env bash
# Usage: set-id-bits-on-write.sh MOUNT (mounted allow_other). A write by nobody (no CAP_FSETID)
# drops set-ID bits as the kernel does (set-group-ID only with group execute), through the page
# cache, write-only and O_DIRECT descriptors; a write by root keeps them; the data lands.
set -euo pipefail
mnt=$1
cd "$mnt"
chmod 1777 .
write() { setpriv "$@" /usr/bin/python3 -c '
import mmap, os, sys
flags = {"cached": os.O_RDWR, "writeonly": os.O_WRONLY, "direct": os.O_WRONLY | os.O_DIRECT}[sys.argv[2]]
fd = os.open(sys.argv[1], flags)
block = mmap.mmap(-1, 4096)
block.write(b"w" * 4096)
assert os.pwritev(fd, [block], 4096) == 4096
os.close(fd)' "$file" "$how"; }
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
