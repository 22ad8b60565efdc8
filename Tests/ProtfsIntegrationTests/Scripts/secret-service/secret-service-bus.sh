#!/bin/bash
# Run by dbus-run-session (a private session bus): starts `protfsctl secret-service` on
# MOUNTPOINT with PROVIDER-OPTIONS, waits until it owns org.freedesktop.secrets, checks that
# the name's owner is that process (not gnome-keyring or another activated provider), runs
# the CLIENT command, then stops the provider. The provider's messages go to stderr. An empty
# MOUNTPOINT starts the provider without one (it chooses the caller's vault).
# Usage: secret-service-bus.sh PROTFSCTL MOUNTPOINT [PROVIDER-OPTION...] -- CLIENT [ARG...]
set -u
protfsctl=$1 mountpoint=$2
shift 2
options=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do options+=("$1"); shift; done
shift
[ -n "$mountpoint" ] && options=("$mountpoint" "${options[@]}")
"$protfsctl" secret-service "${options[@]}" &
provider=$!
stop() {
    kill "$provider" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$provider" 2>/dev/null || return; sleep 0.1; done
    echo "the provider ignored SIGTERM" >&2
    kill -KILL "$provider" 2>/dev/null
}
trap stop EXIT
owner=""
for _ in $(seq 100); do
    owner=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '/uint32/ {print $2}')
    [ -n "$owner" ] && break
    kill -0 "$provider" 2>/dev/null || { echo "the provider exited" >&2; exit 90; }
    sleep 0.1
done
[ "$owner" = "$provider" ] || { echo "org.freedesktop.secrets is owned by pid '$owner', not the provider $provider" >&2; exit 91; }
"$@"
status=$?
kill -0 "$provider" 2>/dev/null || { echo "the provider died during the client" >&2; exit 92; }
exit $status
