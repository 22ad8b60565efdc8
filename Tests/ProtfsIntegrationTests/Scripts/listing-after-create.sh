#!/usr/bin/env bash
# Usage: listing-after-create.sh MOUNT. A listing right after a create shows it, 40 times
# over, in a large directory and in one whose listing fits in a single reply (left before
# its end).
set -euo pipefail
mnt=$1
cd "$mnt"
mkdir d e
for i in $(seq 300); do : > "d/f$i"; done
: > e/one
python3 - <<'PY'
import os
for round in range(40):
    names = os.listdir("d")
    assert len(names) == 300 + round, (round, len(names))
    open(f"d/new{round}", "w").close()
    assert f"new{round}" in os.listdir("d"), round
    # A listing whose one reply held the whole directory, left before its end.
    with os.scandir("e") as listing:
        next(listing)
    open(f"e/new{round}", "w").close()
    assert len(os.listdir("e")) == 2 + round, round
PY
