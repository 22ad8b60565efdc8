#!/usr/bin/env bash
# Usage: symlink-renames.sh MOUNT. A symlink's target is sealed to its location: a rename seals it
# anew, keeping its target, owner and times, and the kernel's node names the new object;
# hard links of symlinks (EPERM) and exchanges with one (EINVAL) are refused.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$1"
long=$(head -c 3500 /dev/zero | tr '\0' l)
longname=$(head -c 200 /dev/zero | tr '\0' n)
ln -s target-one a
touch -h -d @1000000000 a
mv a b
[ "$(readlink b)" = target-one ]
[ "$(stat -c %h:%Y b)" = 1:1000000000 ]
mkdir d
mv b d/c
[ "$(readlink d/c)" = target-one ]
touch -h -d @1000000007 d/c
[ "$(stat -c %Y d/c)" = 1000000007 ]
mv d/c "d/$longname"
[ "$(readlink "d/$longname")" = target-one ]
mv "d/$longname" top
[ "$(readlink top)" = target-one ]
ln -s "$long" L
mv L d/L2
[ "$(readlink d/L2)" = "$long" ]
ln -s short e
mv d/L2 e
[ "$(readlink e)" = "$long" ]
[ "$(stat -c %s e)" = 3500 ]
mv d renamed-dir
ln -s in-dir renamed-dir/x
mv renamed-dir moved-dir
[ "$(readlink moved-dir/x)" = in-dir ]
[ "$(ls | sort | tr '\n' ' ')" = "e moved-dir top " ]
echo file > f
# renameat2(2) and linkat(2) as the kernel sees them: prints the errno name, or OK.
call() {
    python3 "$here/link-or-rename.py" "$@"
}
[ "$(call link top second)" = EPERM ]
[ ! -L second ]
[ "$(call exchange top f)" = EINVAL ]
[ "$(call exchange f top)" = EINVAL ]
[ "$(call noreplace top e)" = EEXIST ]
[ "$(readlink top)" = target-one ]
[ "$(cat f)" = file ]
[ "$(call noreplace top fresh)" = OK ]
[ "$(readlink fresh)" = target-one ]
[ ! -L top ]
