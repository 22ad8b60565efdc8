#!/usr/bin/env bash
# Usage: abort-fuse-connection.sh MOUNTPOINT. Last resort for a hung mount: abort its FUSE
# connection (through the fusectl filesystem), then lazily unmount.
set -u
# No -e: a last resort, every step is tried.
mnt=$1
mountpoint -q /sys/fs/fuse/connections || mount -t fusectl fusectl /sys/fs/fuse/connections
minor=$(awk -v m="$mnt" '$5 == m {split($3, a, ":"); print a[2]}' /proc/self/mountinfo | head -n1)
[ -n "$minor" ] && echo 1 > /sys/fs/fuse/connections/$minor/abort
fusermount3 -u -z "$mnt" || umount -l "$mnt"
