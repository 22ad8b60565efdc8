#!/usr/bin/env bash
# Runs `protfsctl list --json`, then `protfsctl list`, in a mount namespace of its own from
# which every protfs mount is lazily detached (the host's mounts stay): both must say that
# there is none and exit 0.
set -euo pipefail
protfsctl=$1
# shellcheck disable=SC2016  # the inner shell expands, in the new namespace
exec unshare --mount --propagation private bash -c '
    awk "\$3 == \"fuse.protfs\" { print \$2 }" /proc/mounts | while read -r mountpoint; do
        umount -l "$(printf "%b" "$mountpoint")"
    done
    "$0" list --json
    "$0" list
' "$protfsctl"
