#!/usr/bin/env python3
# Usage: one-file-many-writers-check.py MOUNT. After one-file-many-writers.py: every slot at
# its last version, every log record whole and there once.
import hashlib, os

from concurrent_clients import MNT, pattern

SLOTS, SLOT, VERSIONS = 16, 3000, 12
data = open(os.path.join(MNT, "shared"), "rb").read()
print("shared", "ok" if data == pattern(0, SLOTS * SLOT, VERSIONS) else "WRONG (%d bytes)" % len(data))
seen, problems = {}, []
text = open(os.path.join(MNT, "log"), "rb").read().decode()
for line in text.split("\n")[:-1]:
    i, seq, length, body = line[1:-1].split(" ")
    expected = hashlib.shake_128(b"%s/%s" % (i.encode(), seq.encode())).hexdigest(int(length))
    if not (line[0] == "<" and line[-1] == ">" and body == expected):
        problems.append(line[:60])
    seen.setdefault(int(i), []).append(int(seq))
complete = all(seen.get(i) == list(range(150)) for i in range(3))
print("log", "ok" if complete and not problems and text.endswith("\n") else "WRONG %s" % problems[:3])
