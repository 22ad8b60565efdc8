# Reading a directory's next files ahead (arguments: make|check, the mountpoint, the
# backing directory, protfsctl). `make` writes 40 files of 4 KiB, f00 to f39, in each of
# two directories. `check`, on a fresh mount of them: evicts every backing file from the
# page cache (file by file: the machine's other caches stay), opens and reads through/f00,
# f01 and f02 and alone/f00 only, then expects the backing files of through's next files
# to come into memory and nothing else. "Next" is backing inode order, which the daemon
# follows: the 32 files after f01 (the second open). Files written one after another
# usually get rising inodes, but not always (a freed inode is reused, and other tests free
# some), so the window is worked out from the inodes, not the names.
import os, subprocess, sys, time

phase, mountpoint, backing, protfsctl = sys.argv[1:5]
names = ["f%02d" % index for index in range(40)]

if phase == "make":
    for directory in ("alone", "through"):
        os.mkdir(os.path.join(mountpoint, directory))
        for name in names:
            with open(os.path.join(mountpoint, directory, name), "wb") as f:
                f.write(os.urandom(4096))
    sys.exit(0)

def backing_path(directory, name):
    relative = subprocess.run([protfsctl, "backing-path", os.path.join(mountpoint, directory, name)],
                              check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(backing, relative)

backing_files = {(d, n): backing_path(d, n) for d in ("alone", "through") for n in names}

def resident(path):
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip()) > 0

for path in backing_files.values():
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
still = [key for key, path in backing_files.items() if resident(path)]
if still:
    sys.exit("could not evict %s" % still)

def read(directory, name):
    with open(os.path.join(mountpoint, directory, name), "rb") as f:
        f.read()

read("alone", "f00")
for name in names[:3]:
    read("through", name)

opened = {"f00", "f01", "f02"}
by_inode = sorted(names, key=lambda n: os.stat(backing_files[("through", n)]).st_ino)
second = by_inode.index("f01")
window = 32
expected = [("through", n) for n in by_inode[second + 1:second + 1 + window] if n not in opened]
deadline = time.monotonic() + 10
missing = expected
while missing and time.monotonic() < deadline:
    time.sleep(0.05)
    missing = [key for key in missing if not resident(backing_files[key])]
failures = []
if missing:
    failures.append("not read ahead: %s" % missing)
outside = by_inode[:second] + by_inode[second + 1 + window:]
unexpected = [("through", n) for n in outside if n not in opened] + [("alone", n) for n in names[1:]]
read_anyway = [key for key in unexpected if resident(backing_files[key])]
if read_anyway:
    failures.append("read ahead beyond the window or without a second open: %s" % read_anyway)
if failures:
    sys.exit("\n".join(failures))
