#!/usr/bin/env python3
# Usage: scan-memory.py PID HEX... Prints the indexes (in argument order) of the hex needles
# found anywhere in the readable memory of PID (through /proc/PID/mem).
import sys
pid, needles = int(sys.argv[1]), [bytes.fromhex(h) for h in sys.argv[2:]]
found = set()
with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", 0) as memory:
    for line in maps:
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if "r" not in fields[1]:
            continue
        try:
            memory.seek(start)
            data = memory.read(end - start)
        except OSError:
            continue  # [vvar] and other mappings the kernel will not hand out
        found.update(i for i, needle in enumerate(needles) if needle in data)
print(" ".join(str(i) for i in sorted(found)))
