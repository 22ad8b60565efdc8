#!/usr/bin/env python3
"""rewrite-versions.py make|run|check DIR [STOPFILE in-place|replaced|moved]: files that a writer rewrites while a
backup of the mounted vault runs, each version recognisable as a whole.

make DIR: DIR/CLASS/ for each protection class, holding `in-place` (1 MiB: 131072 copies of the
  8-digit version, rewritten in place by one pwrite from page-aligned resident memory, which
  reaches the daemon as one write request) and `replaced` (64 KiB the same way, each version
  written to a temporary name and renamed over it), both at version 0; and DIR/a/ and DIR/z/,
  between which the files moved-0 ... moved-3 are moved back and forth.
run DIR STOPFILE KIND: rewrites the files of KIND in turn, version after version, until
  STOPFILE exists; then prints the number of versions written. (One writer per kind: a rename
  waits while a backup walks, writes in place do not.)
check DIR: every file holds one whole version (a torn one mixes two), and nothing else is
  there but the next `replaced` under its temporary name; each moved file is in one place,
  neither lost nor twice there; prints the versions."""
import mmap, os, sys

CLASSES = ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen", "complete"]
IN_PLACE, REPLACED = 1 << 20, 64 << 10


def fill(buffer, size, version):
    buffer[:size] = (b"%08d" % version) * (size // 8)


def write_in_place(buffer, path, version):
    fill(buffer, IN_PLACE, version)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        if os.pwrite(fd, buffer, 0) != IN_PLACE:
            sys.exit(f"{path}: short write")
    finally:
        os.close(fd)


def replace(buffer, path, version):
    fill(buffer, REPLACED, version)
    temporary = path + ".new"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, buffer[:REPLACED])
    finally:
        os.close(fd)
    os.rename(temporary, path)


MOVED = [f"moved-{i}" for i in range(4)]


def move_all(directory):
    for name in MOVED:
        here, there = (os.path.join(directory, d, name) for d in ("a", "z"))
        if os.path.exists(here):
            os.rename(here, there)
        else:
            os.rename(there, here)


def files(directory):
    return [(os.path.join(directory, c, "in-place"), os.path.join(directory, c, "replaced")) for c in CLASSES]


def main():
    mode, directory = sys.argv[1], sys.argv[2]
    buffer = mmap.mmap(-1, IN_PLACE)
    if mode == "make":
        os.mkdir(directory)
        for protection_class in CLASSES:
            os.mkdir(os.path.join(directory, protection_class))
            os.setxattr(os.path.join(directory, protection_class), "user.protfs.class", protection_class.encode())
        for in_place, replaced in files(directory):
            write_in_place(buffer, in_place, 0)
            replace(buffer, replaced, 0)
        for side in ("a", "z"):
            os.mkdir(os.path.join(directory, side))
        for name in MOVED:
            open(os.path.join(directory, "a", name), "w").close()
    elif mode == "run":
        kind, version = sys.argv[4], 0
        while not os.path.exists(sys.argv[3]):
            version += 1
            for in_place, replaced in files(directory):
                if kind == "in-place":
                    write_in_place(buffer, in_place, version)
                elif kind == "replaced":
                    replace(buffer, replaced, version)
            if kind == "moved":
                move_all(directory)
        print(version)
    elif mode == "check":
        torn = False
        for protection_class in CLASSES:
            # The writer's next version under its temporary name may be in a snapshot too.
            names = sorted(os.listdir(os.path.join(directory, protection_class)))
            if names not in (["in-place", "replaced"], ["in-place", "replaced", "replaced.new"]):
                print(f"{protection_class}: holds {names}")
                torn = True
        for name in MOVED:
            places = [d for d in ("a", "z") if os.path.exists(os.path.join(directory, d, name))]
            if len(places) != 1:
                print(f"{name}: in {places}")
                torn = True
        for pair in files(directory):
            for path, size in zip(pair, (IN_PLACE, REPLACED)):
                with open(path, "rb") as f:
                    data = f.read()
                versions = sorted({data[i:i + 8] for i in range(0, len(data), 8)})
                whole = len(data) == size and len(versions) == 1
                torn = torn or not whole
                print(f"{path}: {'version ' + versions[0].decode() if whole else 'TORN: ' + repr(versions[:4])}")
        sys.exit(1 if torn else 0)


main()
