#!/bin/bash
# Starts `protfsctl item update|add` with a secret file and kills the daemon with SIGKILL
# after a delay, while the request may be anywhere between its arrival and its reply.
# Arguments: protfsctl, mount point, daemon pid, verb (update|add), account, secret file,
# delay in seconds (fractions allowed).
set -u
protfsctl=$1 mountpoint=$2 pid=$3 verb=$4 account=$5 secret=$6 delay=$7
"$protfsctl" item "$verb" "$mountpoint" --service crash --account "$account" --secret-file "$secret" \
    >/dev/null 2>&1 &
client=$!
sleep "$delay"
kill -9 "$pid"
wait "$client"
exit 0
