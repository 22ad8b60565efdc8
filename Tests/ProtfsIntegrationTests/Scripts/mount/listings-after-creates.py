#!/usr/bin/env python3
# Usage: listings-after-creates.py (in the mount, with d/ of 300 files and e/ of one). 40
# times: a listing right after a create shows it, in d/ and in e/, whose listing fits one
# reply and is left before its end.
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
