#!/usr/bin/env python3
# Usage: verify-after-crash.py MOUNT WORK LAST. After the remount, every round's files:
# those nobody was writing read back exactly; each chunk of a file being written holds its
# contents before or after the writes logged (confirmed or in flight), or EIO.
import json, os, sys

from crash_clients import CHUNK, CLASS, apply, chunks

MNT, WORK, LAST = sys.argv[1], sys.argv[2], int(sys.argv[3])

def older_state(original, done, window, chunk):
    """Which earlier state the chunk holds, if any: tells a lost write from garbage."""
    state, matches = original, []
    for number, op in enumerate([None] + done):
        if op:
            state = apply(state, op)
        if state[window].ljust(len(chunk), b"\0") == chunk:
            matches.append(number)
    return "it holds the state after %d of %d completed operations" % (matches[-1], len(done)) if matches else "it matches no earlier state"

torn = unconfirmed = 0
for round_ in range(1, LAST + 1):
    record = json.load(open(os.path.join(WORK, "round-%d.json" % round_)))
    for name, kind in sorted(record["files"].items()):
        if kind == "hot" and round_ != LAST:
            continue  # a file being written at an earlier crash: checked then
        original = open(os.path.join(WORK, name.replace("/", "_")), "rb").read()
        path = os.path.join(MNT, name)
        if kind == "reclassed":
            got = os.getxattr(path, CLASS).decode()
            if got not in ("none", "completeUntilFirstUserAuthentication", "completeUnlessOpen"):
                print("WRONG class of %s: %s" % (name, got))
        if kind != "hot":
            size, found = chunks(path)
            if size != len(original) or b"".join(c if c != "EIO" else b"?" for c in found) != original:
                print("WRONG %s (%s), not being written: %d bytes, expected %d; EIO in %s" % (
                    name, kind, size, len(original), [i for i, c in enumerate(found) if c == "EIO"]))
            continue
        entry = record["log"][name]
        states = [original]
        for op in entry["done"]:
            states = [apply(state, op) for state in states]
        # What the kernel did not confirm may be there too, request by request (so
        # chunk by chunk): the rest of a short write, and the write in flight.
        last = entry["done"][-1] if entry["done"] else None
        if last and last[0] == "write" and last[4] < last[2]:
            previous = original
            for op in entry["done"][:-1]:
                previous = apply(previous, op)
            states.append(apply(previous, last[:4] + [last[2]]))
        if entry["inflight"]:
            states += [apply(state, entry["inflight"]) for state in states]
        size, found = chunks(path)
        sizes = sorted(len(state) for state in states)
        if not (size in sizes or (sizes[0] < size < sizes[-1] and size % CHUNK == 0)):
            print("WRONG size of %s: %d, expected one of %s" % (name, size, sizes))
        for index, chunk in enumerate(found):
            if chunk == "EIO":
                torn += 1
                continue
            window = slice(index * CHUNK, index * CHUNK + len(chunk))
            candidates = [state[window].ljust(len(chunk), b"\0") for state in states]
            if chunk not in candidates:
                print("WRONG chunk %d of %s: holds neither the confirmed writes nor the unconfirmed ones %s; %s" % (
                    index, name, entry["inflight"], older_state(original, entry["done"], window, chunk)))
            elif chunk != candidates[0]:
                unconfirmed += 1
print("checked; torn chunks (EIO): %d, chunks holding unconfirmed writes: %d" % (torn, unconfirmed))
