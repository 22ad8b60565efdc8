#!/usr/bin/env python3
# Usage: write-and-kill.py MOUNT DAEMON_PID WORK ROUND. Makes this round's files (copies kept
# in WORK, a directory outside the mount), starts one writer per hot file and a re-classer,
# kills the daemon mid-flight, and logs what completed to WORK/round-ROUND.json.
import errno, json, os, random, signal, sys, threading, time

from crash_clients import CLASS, payload

MNT, PID, WORK, ROUND = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rng = random.Random(ROUND)
CLASSES = ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen", "complete"]
files = {}
for protection_class in CLASSES:
    for kind, count in (("stable", 3), ("hot", 2), ("reclassed", 1)):
        for i in range(count):
            name = "d-%s/r%d-%s-%d" % (protection_class, ROUND, kind, i)
            data = payload(rng.getrandbits(64), rng.choice([0, 1, 4095, 4096, 4097, rng.randrange(60000)]))
            with open(os.path.join(MNT, name), "wb") as f:
                f.write(data)
            with open(os.path.join(WORK, name.replace("/", "_")), "wb") as f:
                f.write(data)
            files[name] = kind
log = {name: {"done": [], "inflight": None} for name, kind in files.items() if kind == "hot"}
problems = []
# How a request in flight ends when the daemon dies: through /dev/fuse the connection is
# gone; through FUSE over io_uring the kernel may cancel one it was handing to the dead
# daemon's ring.
DAEMON_GONE = (errno.ENOTCONN, errno.ECONNABORTED, errno.ECANCELED)

def write_hot(name, seed):
    local = random.Random(seed)
    fd = os.open(os.path.join(MNT, name), os.O_RDWR)
    entry = log[name]
    while True:
        if local.random() < 0.1:
            op = ["truncate", local.randrange(50000)]
        else:
            size = local.choice([1, 100, 4096, 5000, local.randrange(1, 20000)])
            op = ["write", local.randrange(45000), size, local.getrandbits(64), size]
        entry["inflight"] = op
        try:
            if op[0] == "write":
                op[4] = os.pwrite(fd, payload(op[3], op[2]), op[1])
            else:
                os.ftruncate(fd, op[1])
        except OSError as e:
            if e.errno not in DAEMON_GONE:
                problems.append("%s: %s during %s" % (name, e, op))
            break
        entry["done"].append(op)
        entry["inflight"] = None
    try:
        os.close(fd)
    except OSError:
        pass

def reclass(names):
    classes = ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen"]
    turn = 0
    while True:
        turn += 1
        for name in names:
            try:
                os.setxattr(os.path.join(MNT, name), CLASS, classes[turn % 3].encode())
            except OSError as e:
                if e.errno not in DAEMON_GONE:
                    problems.append("re-class of %s: %s" % (name, e))
                return

threads = [threading.Thread(target=write_hot, args=(name, rng.getrandbits(64))) for name in log]
threads.append(threading.Thread(target=reclass, args=([n for n, k in files.items() if k == "reclassed"],)))
for thread in threads:
    thread.start()
time.sleep(rng.uniform(0.3, 0.8))
os.kill(PID, signal.SIGKILL)
for thread in threads:
    thread.join(60)
json.dump({"files": files, "log": log}, open(os.path.join(WORK, "round-%d.json" % ROUND), "w"))
print("writes completed before the kill:", sum(len(e["done"]) for e in log.values()))
print("in flight at the kill:", sum(1 for e in log.values() if e["inflight"]))
for problem in problems:
    print("PROBLEM", problem)
