#!/usr/bin/env bash
# Usage: unmount-during-requests.sh MOUNT DAEMON_PID term|lazy. Ends a mount while a stream
# of requests (small writes, reads, lookups) runs through it: by SIGTERM to the daemon, or
# by a lazy unmount. Fails unless the daemon exits and the stream stops within 15 s each: a
# transport that left a request or the unmount waiting would hang here.
set -u
mnt=$1 pid=$2 how=$3
mkdir "$mnt/stream" || exit 1
(
    i=0
    while echo "$i" > "$mnt/stream/f$((i % 50))" 2>/dev/null && cat "$mnt/stream/f$((i % 50))" > /dev/null 2>&1; do
        stat "$mnt/stream/absent-$i" > /dev/null 2>&1
        i=$((i + 1))
    done
) &
stream=$!
sleep 1
case $how in
    term) kill -TERM "$pid" ;;
    lazy) fusermount3 -u -z "$mnt" ;;
esac
# The daemon is the test's child: gone, or a zombie until the test reaps it.
exited() {
    local state
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
    [ -z "$state" ] || [ "$state" = Z ]
}
for _ in $(seq 150); do exited && break; sleep 0.1; done
if ! exited; then
    echo "the daemon still runs 15 s after the $how"
    kill -9 "$stream"
    exit 1
fi
for _ in $(seq 150); do kill -0 "$stream" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$stream" 2>/dev/null; then
    echo "the request stream still waits 15 s after the $how"
    kill -9 "$stream"
    exit 1
fi
echo ended
