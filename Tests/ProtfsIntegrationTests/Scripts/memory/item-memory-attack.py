"""Issue 38's memory attack on the daemon, as another user: items with about as many bytes
of attributes as one request carries (60 KB: its JSON is at most 64 KiB), added until the
daemon refuses one or COUNT are in, then LISTINGS listings at once. Prints one line per outcome, then the daemon's peak resident size (VmHWM, kB).

usage: item-memory-attack.py PROTFSCTL MOUNTPOINT UID GID DAEMON_PID COUNT LISTINGS
"""
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

protfsctl, mountpoint, uid, gid, daemon_pid, count, listings = sys.argv[1:8]
as_user = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", protfsctl]

text = "t" * 1024
lookup = json.dumps({f"{index:03}" + "n" * 252: "v" * 1024 for index in range(40)})
with tempfile.NamedTemporaryFile(delete=False) as generic, tempfile.NamedTemporaryFile(delete=False) as secret:
    generic.write(b"\xff" * 4096)
    secret.write(b"s")
os.chmod(generic.name, 0o644)
os.chmod(secret.name, 0o644)

added = 0
for index in range(int(count)):
    result = subprocess.run(as_user + ["item", "add", mountpoint, "--service", "attack", "--account", str(index),
                                       "--label", text, "--description", text, "--comment", text,
                                       "--generic-file", generic.name, "--attributes", lookup,
                                       "--secret-file", secret.name],
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        print(f"add refused after {added}: {result.stderr.strip()}")
        break
    added += 1
else:
    print(f"add never refused: {added} items")


def listing(_):
    result = subprocess.run(as_user + ["item", "list", mountpoint], capture_output=True, timeout=120)
    if result.returncode == 0:
        return f"listing answered: {result.stdout.count(b'attack')} items"
    return f"listing refused ({result.returncode}): {result.stderr.decode(errors='replace').strip()}"


with ThreadPoolExecutor(max_workers=int(listings)) as pool:
    for line in pool.map(listing, range(int(listings))):
        print(line)

with open(f"/proc/{daemon_pid}/status") as status:
    for line in status:
        if line.startswith("VmHWM:"):
            print("peak", line.split()[1])
os.unlink(generic.name)
os.unlink(secret.name)
