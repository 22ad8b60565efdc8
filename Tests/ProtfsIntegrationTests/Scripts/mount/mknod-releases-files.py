# mknod(2) of regular files, then unlink: the daemon (pid argv[1]) keeps no descriptor of
# them, and a removed file made so keeps nothing open in the backing directory (argv[2]).
import os, stat, sys, time

daemon = int(sys.argv[1])
backing = os.path.realpath(sys.argv[2])
fd_dir = "/proc/%d/fd" % daemon

def links():
    found = []
    for fd in os.listdir(fd_dir):
        try:
            found.append(os.readlink(os.path.join(fd_dir, fd)))
        except FileNotFoundError:
            pass
    return found

def settled(condition, seconds=10):
    # Forgotten nodes are closed on the daemon's releaser queue, a moment later.
    deadline = time.time() + seconds
    while not condition() and time.time() < deadline:
        time.sleep(0.1)
    return condition()

before = len(links())
for i in range(500):
    os.mknod("node-%d" % i, 0o644 | stat.S_IFREG)
    os.unlink("node-%d" % i)
assert settled(lambda: len(links()) < before + 50), \
    "500 mknod+unlink: %d descriptors before, %d after" % (before, len(links()))

os.mknod("big", 0o644 | stat.S_IFREG)
with open("big", "r+b") as f:
    f.write(os.urandom(8 << 20))
os.unlink("big")

def removed_but_open():
    return [l for l in links() if l.startswith(backing + "/") and l.endswith(" (deleted)")]

assert settled(lambda: not removed_but_open()), "a removed file made by mknod stays open: %r" % removed_but_open()
