#!/bin/bash
# Runs COMMAND with a /dev/log of its own, which writes every syslog message to LOG: a
# private mount namespace with a tmpfs over /dev (the usual character devices bound back
# in). This machine runs no syslog daemon, and tests must not share one.
# Usage: with-private-syslog.sh LOG COMMAND [ARGUMENT...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [ "$1" != --inside ]; then
    log=$1
    shift
    dev=$(mktemp -d /tmp/protfs-dev-XXXXXX)
    status=0
    unshare --mount --propagation private -- /bin/bash "$here/with-private-syslog.sh" --inside "$dev" "$log" "$@" \
        || status=$?
    rmdir "$dev" 2>/dev/null || true
    exit "$status"
fi

# In the namespace.
dev=$2
log=$3
shift 3
mount -t tmpfs -o mode=0755 tmpfs "$dev"
for node in null zero full random urandom tty; do
    [ -e "/dev/$node" ] || continue
    touch "$dev/$node"
    mount --bind "/dev/$node" "$dev/$node"
done
# Its own descriptors only, and SIGKILL at the end: it may inherit a signal mask that blocks
# SIGTERM (the test runner's).
python3 "$here/syslog-listener.py" "$dev/log" "$log" </dev/null >/dev/null 2>&1 &
listener=$!
trap 'kill -KILL "$listener" 2>/dev/null || true' EXIT
for _ in $(seq 200); do [ -S "$dev/log" ] && break; sleep 0.05; done
[ -S "$dev/log" ] || { echo "the syslog listener did not start" >&2; exit 125; }
mount --rbind "$dev" /dev
status=0
"$@" || status=$?
sleep 0.2  # the last datagrams reach the listener
exit "$status"
