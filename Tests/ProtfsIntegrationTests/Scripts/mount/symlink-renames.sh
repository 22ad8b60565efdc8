#!/usr/bin/env bash
# Usage: symlink-renames.sh MOUNT. A symlink's target is sealed to its location: a rename seals it
# anew, keeping its target, owner, times and inode number (also once the kernel has forgotten
# the node: caches are dropped, which needs root); an exchange with a symlink on either side
# swaps them; hard links of symlinks (EPERM) are refused.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$1"
long=$(head -c 3500 /dev/zero | tr '\0' l)
longname=$(head -c 200 /dev/zero | tr '\0' n)
# The inode number after the kernel dropped its nodes, as a new lookup finds it.
inode() {
    sync
    echo 2 > /proc/sys/vm/drop_caches
    stat -c %i "$1"
}
ln -s target-one a
touch -h -d @1000000000 a
ino=$(inode a)
mv a b
[ "$(inode b)" = "$ino" ]
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
[ "$(inode top)" = "$ino" ]
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
# Exchanges: symlink and file (both ways), two symlinks, symlinks in two directories; each
# keeps its inode and reads at its new place.
fino=$(inode f)
[ "$(call exchange top f)" = OK ]
[ "$(readlink f)" = target-one ] && [ "$(cat top)" = file ]
[ "$(inode f)" = "$ino" ] && [ "$(inode top)" = "$fino" ]
[ "$(call exchange top f)" = OK ]
[ "$(readlink top)" = target-one ] && [ "$(cat f)" = file ]
[ "$(call exchange f top)" = OK ]
[ "$(call exchange f top)" = OK ]
[ "$(readlink top)" = target-one ] && [ "$(cat f)" = file ]
eino=$(inode e)
[ "$(call exchange top e)" = OK ]
[ "$(readlink top)" = "$long" ] && [ "$(readlink e)" = target-one ]
[ "$(inode e)" = "$ino" ] && [ "$(inode top)" = "$eino" ]
[ "$(call exchange top moved-dir/x)" = OK ]
[ "$(readlink moved-dir/x)" = "$long" ] && [ "$(readlink top)" = in-dir ]
[ "$(call exchange top moved-dir/x)" = OK ]
[ "$(call exchange top e)" = OK ]
[ "$(call noreplace top e)" = EEXIST ]
[ "$(readlink top)" = target-one ]
[ "$(cat f)" = file ]
[ "$(call noreplace top fresh)" = OK ]
[ "$(readlink fresh)" = target-one ]
[ ! -L top ]
