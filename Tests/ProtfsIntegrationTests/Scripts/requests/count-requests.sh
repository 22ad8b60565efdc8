#!/usr/bin/env bash
# Prints how many FUSE requests of OPCODE (READLINK, LOOKUP, ...) the kernel sent to the file
# system mounted at MOUNTPOINT while COMMAND ran, counted by the kernel's fuse_request_send
# tracepoint (Linux 6.12+) in a tracing instance of its own, filtered on the mount's
# connection: a round trip the kernel saved never shows. Root only.
#   count-requests.sh MOUNTPOINT OPCODE COMMAND [ARGUMENT...]
set -euo pipefail
mountpoint=$1
opcode=$2
shift 2
tracing=/sys/kernel/tracing
[ -d "$tracing/events" ] || mount -t tracefs nodev "$tracing"
[ -d "$tracing/events/fuse" ] || { echo "count-requests: this kernel has no fuse tracepoints" >&2; exit 2; }
instance="$tracing/instances/protfs-test-$$"
mkdir "$instance"
event="$instance/events/fuse/fuse_request_send"
trap 'echo 0 > "$event/enable"; rmdir "$instance"' EXIT
# The connection is the mount's device number as the kernel encodes it (major << 20 | minor).
read -r major minor < <(stat -c '%Hd %Ld' "$mountpoint")
echo "connection == $(( (major << 20) | minor ))" > "$event/filter"
echo 1 > "$event/enable"
"$@" >/dev/null
echo 0 > "$event/enable"
grep -c "(FUSE_$opcode)" "$instance/trace" || true
