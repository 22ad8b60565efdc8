#!/usr/bin/env python3
# Usage: many-files-at-once-check.py MOUNT EXPECTED. Each worker's directory holds what
# many-files-at-once.py saved in EXPECTED.N that it expects.
import hashlib, json, os, sys

from concurrent_clients import MNT

EXPECTED = sys.argv[2]
wrong = []
for number in range(12):
    expected = json.load(open("%s.%d" % (EXPECTED, number)))
    home = os.path.join(MNT, "w%d" % number)
    found = {name: hashlib.sha256(open(os.path.join(home, name), "rb").read()).hexdigest() for name in os.listdir(home)}
    if found != expected:
        wrong.append(number)
print("checked", "ok" if not wrong else "WRONG in %s" % wrong)
