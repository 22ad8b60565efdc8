#!/usr/bin/env bash
# Usage: modes-owners-and-times.sh MOUNT (mounted allow_other). Modes, owners, set-group-ID
# directories, sticky bits, nanosecond times, symlink and directory times, device nodes and sockets.
set -euo pipefail
mnt=$1
cd "$mnt"
umask 022
mkdir -m 0750 d; [ "$(stat -c %a d)" = 750 ]
mkdir -m 1777 sticky; [ "$(stat -c %a sticky)" = 1777 ]
chown 65534:65534 d; [ "$(stat -c %u:%g d)" = 65534:65534 ]
mkdir g; chgrp 100 g; chmod 2775 g
mkdir g/sub; touch g/file
[ "$(stat -c %g g/sub)" = 100 ]; [ "$(stat -c %g g/file)" = 100 ]
[ "$(stat -c %a g/sub)" = 2755 ]
touch f; chmod 4755 f; [ "$(stat -c %a f)" = 4755 ]
touch -d '2001-02-03 04:05:06.123456789' f
[ "$(stat -c %y f)" = "2001-02-03 04:05:06.123456789 +0000" ] || [ "$(stat -c %Y.%y f | cut -d. -f2 | cut -c1-9)" != "" ]
[ "$(stat -c '%.9Y' f 2>/dev/null || stat -c %Y f)" != "" ]
python3 -c 'import os; st = os.stat("f"); assert st.st_mtime_ns % 1000000000 == 123456789, st.st_mtime_ns'
# A symlink's own times, its target's untouched; a directory's times.
ln -s f link; touch -h -d @1000000000 link
[ "$(stat -c %Y link)" = 1000000000 ]; [ "$(stat -c %Y f)" = 981173106 ]
touch -d @1100000000 d; [ "$(stat -c %Y d)" = 1100000000 ]
setpriv --reuid=65534 --regid=65534 --clear-groups touch sticky/theirs
[ "$(stat -c %U sticky/theirs)" = nobody ]
! setpriv --reuid=65534 --regid=65534 --clear-groups touch f 2>/dev/null || exit 1
mknod cdev c 1 3; [ "$(stat -c %F cdev)" = "character special file" ]
! cat cdev 2>/dev/null || exit 1
python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("sock"); s.listen()'
[ "$(stat -c %F sock)" = socket ]
