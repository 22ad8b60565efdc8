"""Looks for a secret in every process's argv and environment until STOPFILE exists.

Usage: scan-proc-for-secret.py STOPFILE, the secret on standard input (never in this
program's own argv or environment). Prints `scans N` and one `found PID FILE` line for
every hit; exits 1 if any, 0 otherwise.
"""
import os
import sys

secret = sys.stdin.buffer.readline().rstrip(b"\n")
stop = sys.argv[1]
me = str(os.getpid())
found = set()
scans = 0
while True:
    last = os.path.exists(stop)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    if secret in f.read():
                        found.add((pid, name))
            except OSError:
                pass
    scans += 1
    if last:
        break
print(f"scans {scans}")
for pid, name in sorted(found):
    print(f"found {pid} {name}")
sys.exit(1 if found else 0)
