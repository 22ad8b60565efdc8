#!/usr/bin/env bash
# Usage: modes-without-fchmodat2.sh MOUNT. chmod and touch on files and directories, for a
# daemon that cannot use fchmodat2.
set -euo pipefail
mnt=$1
cd "$mnt"
touch f; chmod 640 f; [ "$(stat -c %a f)" = 640 ]
chmod 604 f; [ "$(stat -c %a f)" = 604 ]
mkdir d; chmod 705 d; [ "$(stat -c %a d)" = 705 ]
touch -d @1000000000 f; [ "$(stat -c %Y f)" = 1000000000 ]
