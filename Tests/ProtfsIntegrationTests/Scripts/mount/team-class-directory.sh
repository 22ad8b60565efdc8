#!/usr/bin/env bash
# The class of a group-writable directory against the user namespace its member may make.
#   MOUNT make UID GID      team/ (complete) and team/f, owned by root, writable by group
#                           GID; the user UID appends to team/f from a user namespace
#                           and sets another attribute of it
#   MOUNT reclass UID GID   the user UID re-classes a file of its own from a user namespace;
#                           root re-classes team/ and the file; the contents are all there
set -euo pipefail
mnt=$1
mode=$2
user_id=$3
group_id=$4
as_user=(setpriv --reuid="$user_id" --regid="$group_id" --init-groups)
cd "$mnt"
case $mode in
make)
    chmod 755 .
    mkdir team
    chgrp "$group_id" team
    chmod 775 team
    setfattr -n user.protfs.class -v complete team
    echo shared > team/f
    chgrp "$group_id" team/f
    chmod 664 team/f
    "${as_user[@]}" unshare -Ur sh -c 'echo more >> team/f'
    "${as_user[@]}" setfattr -n user.note -v noted team/f
    [ "$(getfattr --only-values -n user.note team/f)" = noted ]
    ;;
reclass)
    "${as_user[@]}" sh -c 'echo mine > team/mine'
    "${as_user[@]}" unshare -Ur setfattr -n user.protfs.class -v none team/mine
    [ "$(getfattr --only-values -n user.protfs.class team/mine)" = none ]
    setfattr -n user.protfs.class -v completeUnlessOpen team team/mine
    [ "$(getfattr --only-values -n user.protfs.class team)" = completeUnlessOpen ]
    [ "$(getfattr --only-values -n user.protfs.class team/mine)" = completeUnlessOpen ]
    [ "$(cat team/f team/mine)" = "$(printf 'shared\nmore\nmine')" ]
    ;;
*) echo "usage: $0 MOUNT make|reclass UID GID" >&2; exit 2 ;;
esac
