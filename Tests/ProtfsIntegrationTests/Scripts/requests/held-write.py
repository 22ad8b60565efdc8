#!/usr/bin/env python3
# Usage: held-write.py MOUNT BACKING_FILESYSTEM. A write stuck on a frozen backing filesystem
# (fsfreeze), with lookups and a listing sent while it is stuck. A safety timer thaws the
# filesystem after 30 s, so a loop that left the other requests waiting shows as "not held"
# instead of a hang. Prints whether the write was held throughout, the listing, whether it
# ended, and whether its data landed.
import os, subprocess, sys, threading, time
MNT, FS = sys.argv[1], sys.argv[2]
path = os.path.join(MNT, "held")
with open(path, "wb") as f:
    f.write(b"x" * 4096)
fd = os.open(path, os.O_WRONLY)
subprocess.run(["fsfreeze", "-f", FS], check=True)
safety = threading.Timer(30, lambda: subprocess.run(["fsfreeze", "-u", FS]))
safety.start()
written = threading.Event()
def write():
    os.pwrite(fd, b"y" * 4096, 0)
    written.set()
writer = threading.Thread(target=write)
writer.start()
time.sleep(0.5)  # for the write to reach the daemon
held_before = not written.is_set()
for i in range(20):
    try:
        os.stat(os.path.join(MNT, "absent-%d" % i))
    except FileNotFoundError:
        pass
names = sorted(os.listdir(MNT))
held_after = not written.is_set()
subprocess.run(["fsfreeze", "-u", FS], check=True)
safety.cancel()
writer.join(30)
os.close(fd)
print("held" if held_before and held_after else "not held", names,
      "written" if written.is_set() else "stuck", open(path, "rb").read() == b"y" * 4096)
