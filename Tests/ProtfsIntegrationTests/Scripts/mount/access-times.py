# Access times on the mount under the mount's rule (argument: relatime, noatime or
# nodiratime), as Linux keeps them: under relatime a read, an exec or a listing moves the
# access time when it is not later than the last modification or change (and once a day),
# a write never does; under noatime nothing but an explicit utime moves it; under
# nodiratime listings do not, reads do as under relatime.
import mmap, os, subprocess, sys, time

rule = sys.argv[1]
files_move = rule != "noatime"
directories_move = rule == "relatime"
failures = []

def atime(path):
    return os.stat(path).st_atime_ns

def settle():
    # Past the backing filesystem's timestamp granularity.
    time.sleep(0.05)

def read(path):
    with open(path, "rb") as f:
        f.read()

def expect(what, path, action, moves):
    before = atime(path)
    settle()
    action()
    after = atime(path)
    if (after != before) != moves:
        failures.append("%s: access time %s (%d -> %d)" % (what, "moved" if after != before else "stayed", before, after))

page = mmap.mmap(-1, 4096)
page.write(b"p" * 4096)

with open("f", "wb") as f:
    f.write(b"x" * 65536)
expect("first read after the write", "f", lambda: read("f"), files_move)
expect("second read", "f", lambda: read("f"), False)

def cached_write():
    # Whole pages through a read-write descriptor: the kernel keeps them cached.
    fd = os.open("f", os.O_RDWR)
    os.pwritev(fd, [page], 8192)
    os.close(fd)

expect("a write through the page cache", "f", cached_write, False)
expect("the read after it, its pages cached", "f", lambda: read("f"), files_move)

def write_only():
    fd = os.open("f", os.O_WRONLY)
    os.pwrite(fd, b"partial", 100)
    os.close(fd)

expect("a write-only write inside a chunk", "f", write_only, False)
expect("the read after it", "f", lambda: read("f"), files_move)

with open("tool", "w") as f:
    f.write("#!/bin/sh\nexit 0\n")
os.chmod("tool", 0o755)
expect("exec after the write", "tool", lambda: subprocess.run(["./tool"], check=True), files_move)
expect("exec again", "tool", lambda: subprocess.run(["./tool"], check=True), False)

os.mkdir("d")
with open("d/a", "w"):
    pass
expect("listing after an entry was added", "d", lambda: os.listdir("d"), directories_move)
expect("listing again", "d", lambda: os.listdir("d"), False)

os.utime("f", ns=(1_000_000_000, os.stat("f").st_mtime_ns))
if atime("f") != 1_000_000_000:
    failures.append("utime did not set the access time: %d" % atime("f"))
expect("read of a file last read long ago", "f", lambda: read("f"), files_move)

if failures:
    sys.exit("\n".join(failures))
