#!/usr/bin/env python3
"""content-cipher-workout.py MOUNTPOINT DIR...: in each DIR under the mount (one per class),
a file is written, overwritten at random offsets across chunk boundaries, truncated down and
up, and read back after each step against a model in memory; then a file of 12345 bytes is
left in the first DIR for the caller to tamper with. Seeded: a failure repeats."""
import os, random, sys

mount, directories = sys.argv[1], sys.argv[2:]
rng = random.Random(40)

def check(path, model, step):
    with open(path, "rb") as f:
        got = f.read()
    if got != bytes(model):
        sys.exit(f"{path}: contents differ after {step} ({len(got)} bytes read, {len(model)} expected)")

for directory in directories:
    path = os.path.join(mount, directory, "workout")
    model = bytearray(rng.randbytes(3 * 4096 + 1000))
    with open(path, "wb") as f:
        f.write(model)
    check(path, model, "the first write")
    fd = os.open(path, os.O_RDWR)
    try:
        for step in range(12):
            offset = rng.randrange(0, len(model) + 6000)
            data = rng.randbytes(rng.randrange(1, 9000))
            os.pwrite(fd, data, offset)
            if offset > len(model):
                model.extend(bytes(offset - len(model)))
            model[offset:offset + len(data)] = data
            check(path, model, f"random write {step}")
        for size in (5000, 4096, 4095, 1, 0, 20000, 8193):
            os.ftruncate(fd, size)
            model = model[:size] + bytearray(max(0, size - len(model)))
            check(path, model, f"truncation to {size}")
    finally:
        os.close(fd)

with open(os.path.join(mount, directories[0], "to-tamper"), "wb") as f:
    f.write(random.Random(41).randbytes(12345))
print("ok")
