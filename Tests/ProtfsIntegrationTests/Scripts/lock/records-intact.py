#!/usr/bin/env python3
# Usage: records-intact.py PATH COUNT. Prints the number of 4 KiB records in PATH and the
# first of those up to COUNT that are not what writes-through-the-grace.py wrote.
import sys
path, count = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
bad = [i for i in range(count) if data[i * 4096:(i + 1) * 4096] != ("record %08d\n" % i).encode().ljust(4096, b".")]
print("size", len(data) // 4096, "records, damaged", bad[:5])
