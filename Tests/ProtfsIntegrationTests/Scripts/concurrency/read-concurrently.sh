#!/bin/bash
# read-concurrently.sh DIR READERS: READERS processes read every file in DIR at once, each
# file through its own process, and all of them again, as a busy client does just after a
# mount. Exits 0 once every read is complete, non-zero if any failed.
set -u
dir=$1
readers=$2
pids=()
for ((r = 0; r < readers; r++)); do
    (for f in "$dir"/*; do cat "$f" > /dev/null || exit 1; done) &
    pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
