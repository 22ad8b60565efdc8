#!/usr/bin/env python3
# Usage: many-files-at-once.py MOUNT EXPECTED. Twelve workers (three processes of four
# threads), each with its own directory and a model of it, create, write, truncate, rename
# and unlink files, and make and remove names in one shared directory; each checks its files
# at the end and saves what it expects to EXPECTED.N for many-files-at-once-check.py.
import hashlib, json, os, random, sys

from concurrent_clients import CHUNK, MNT, in_processes, in_threads

EXPECTED = sys.argv[2]
os.mkdir(os.path.join(MNT, "common"))

def worker(process, thread):
    number = process * 4 + thread
    rng = random.Random(number)
    home = os.path.join(MNT, "w%d" % number)
    os.mkdir(home)
    model = {}
    for step in range(300):
        name = "f%d" % rng.randrange(6)
        path = os.path.join(home, name)
        action = rng.choice(["write", "write", "truncate", "rename", "unlink", "common"])
        if action == "write":
            offset, size = rng.randrange(3 * CHUNK), rng.randrange(1, 2 * CHUNK)
            data = hashlib.shake_128(b"%d %d" % (number, step)).digest(size)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
            os.pwrite(fd, data, offset)
            os.close(fd)
            old = model.get(name, b"").ljust(offset, b"\0")
            model[name] = old[:offset] + data + old[offset + size:]
        elif action == "truncate" and name in model:
            size = rng.randrange(3 * CHUNK)
            os.truncate(path, size)
            model[name] = model[name][:size].ljust(size, b"\0")
        elif action == "rename" and name in model:
            target = "f%d" % rng.randrange(6)
            os.rename(path, os.path.join(home, target))
            model[target] = model.pop(name)
        elif action == "unlink" and name in model:
            os.unlink(path)
            del model[name]
        elif action == "common":
            shared_name = os.path.join(MNT, "common", "w%d-%d" % (number, step % 5))
            if os.path.exists(shared_name):
                os.unlink(shared_name)
            else:
                os.close(os.open(shared_name, os.O_CREAT | os.O_WRONLY, 0o644))
    if sorted(os.listdir(home)) != sorted(model):
        raise RuntimeError("listing of w%d: %s, model %s" % (number, sorted(os.listdir(home)), sorted(model)))
    for name, data in model.items():
        if open(os.path.join(home, name), "rb").read() != data:
            raise RuntimeError("w%d/%s differs from the model" % (number, name))
    with open("%s.%d" % (EXPECTED, number), "w") as f:
        json.dump({name: hashlib.sha256(data).hexdigest() for name, data in model.items()}, f)

print("workers", in_processes(3, lambda p: in_threads(4, lambda t: worker(p, t))))
