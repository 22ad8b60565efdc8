#!/usr/bin/env python3
# Usage: mapping-beside-writes-check.py MOUNT. Both halves that mapping-beside-writes.py
# wrote are at their last version.
import os

from concurrent_clients import CHUNK, MNT, pattern

data = open(os.path.join(MNT, "mapped"), "rb").read()
print("ok" if data == pattern(0, 64 * CHUNK, 40) else "WRONG", len(data))
