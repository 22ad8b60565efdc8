#!/usr/bin/env python3
# Usage: lock-cycles-under-load.py MOUNT PROTFSCTL PASSCODE_FILE. Threads write files of
# every class while the main thread locks (--now) and unlocks five times; prints per class
# whether it wrote and the errors seen. Writes to none and completeUntilFirstUserAuthentication
# files never fail; complete and completeUnlessOpen writes fail only with EACCES (complete while
# locked; a completeUnlessOpen handle is kept, so never).
import errno, os, subprocess, sys, threading, time

from concurrent_clients import CHUNK, MNT, pattern

CTL, PASSCODE = sys.argv[2], sys.argv[3]
CLASSES = ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen", "complete"]
for c in CLASSES:
    os.mkdir(os.path.join(MNT, c))
    os.setxattr(os.path.join(MNT, c), "user.protfs.class", c.encode())
stop = threading.Event()
results = {c: {"written": 0, "errors": set()} for c in CLASSES}

def writer(i):
    c = CLASSES[i % 4]
    fd = os.open(os.path.join(MNT, c, "f%d" % i), os.O_RDWR | os.O_CREAT, 0o644)
    version = 0
    while not stop.is_set():
        version += 1
        try:
            os.pwrite(fd, pattern(0, 3 * CHUNK + 7, version % 200), 0)
            os.pread(fd, CHUNK, CHUNK)
            results[c]["written"] += 1
        except OSError as e:
            results[c]["errors"].add(errno.errorcode[e.errno])
    os.close(fd)

threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
for cycle in range(5):
    time.sleep(0.3)
    subprocess.run([CTL, "lock", "--now", MNT], check=True, timeout=60)
    time.sleep(0.3)
    subprocess.run([CTL, "unlock", MNT, "--passcode-file", PASSCODE], check=True, timeout=60)
time.sleep(0.2)
stop.set()
for t in threads:
    t.join(60)
for c in CLASSES:
    print(c, "wrote" if results[c]["written"] else "never wrote", sorted(results[c]["errors"]))
