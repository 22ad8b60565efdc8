#!/usr/bin/env python3
# Usage: one-file-many-writers.py MOUNT. Sixteen 3000-byte slots of MOUNT/shared (neighbours
# share a chunk), each owned by one thread of four processes, rewritten version after version
# in pieces; readers check every byte they see; appenders add records to MOUNT/log at the same
# time. Prints the writers' exit statuses and the first bad reads.
import hashlib, os, random, threading

from concurrent_clients import CHUNK, MNT, in_processes, in_threads, pattern, version_at

SLOTS, SLOT, VERSIONS = 16, 3000, 12
shared, log = os.path.join(MNT, "shared"), os.path.join(MNT, "log")
with open(shared, "wb") as f:
    f.write(pattern(0, SLOTS * SLOT, 0))
open(log, "wb").close()
done = threading.Event()
bad_reads = []

def read_and_check(i):
    rng = random.Random(i)
    fd = os.open(shared, os.O_RDONLY)
    while not done.is_set():
        start = rng.randrange(SLOTS * SLOT)
        data = os.pread(fd, rng.choice([1, 100, CHUNK, 3 * CHUNK + 5]), start)
        for k, byte in enumerate(data):
            v = version_at(start + k, byte)
            if v is None or v > VERSIONS:
                bad_reads.append("byte %d read %d" % (start + k, byte))
                break
    os.close(fd)

def slot_writer(process, thread):
    rng = random.Random(process * 10 + thread)
    fd = os.open(shared, os.O_WRONLY)
    for slot in (process * 4 + thread * 2, process * 4 + thread * 2 + 1):
        for version in range(1, VERSIONS + 1):
            cuts = sorted(rng.sample(range(1, SLOT), rng.randrange(0, 4)))
            pieces = list(zip([0] + cuts, cuts + [SLOT]))
            rng.shuffle(pieces)
            for a, b in pieces:
                start = slot * SLOT + a
                os.pwrite(fd, pattern(start, b - a, version), start)
    os.close(fd)

def appender(i):
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    rng = random.Random(100 + i)
    for seq in range(150):
        length = rng.randrange(25, 4500)
        body = hashlib.shake_128(b"%d/%d" % (i, seq)).hexdigest(length)
        record = ("<%d %d %d %s>\n" % (i, seq, length, body)).encode()
        if os.write(fd, record) != len(record):
            raise RuntimeError("short append")
    os.close(fd)

readers = [threading.Thread(target=read_and_check, args=(i,)) for i in range(2)]
for r in readers:
    r.start()
statuses = in_processes(4, lambda p: in_threads(2, lambda t: slot_writer(p, t)))
statuses += in_processes(3, appender)
done.set()
for r in readers:
    r.join()
print("writers", statuses, "bad reads", bad_reads[:3])
