#!/usr/bin/env python3
# Usage: threads-through-the-lock.py PROTFSCTL MOUNT DIRECTORY PASSCODE_FILE. 8 threads
# write and read back blocks of DIRECTORY/t0..t7 while the vault locks: prints how each
# ended (EACCES, never corrupt data), the states, and after an unlock any damaged block.
import errno, os, sys, threading, time

from lock_client import MNT, attempt, ctl, lock, state

directory, passcode_file = sys.argv[3], sys.argv[4]
BLOCK, BLOCKS, THREADS = 4096, 16, 8
def pattern(t, block, version):
    return ("thread %d block %d version %d|" % (t, block, version)).encode().ljust(BLOCK, b"#")
paths = ["%s/t%d" % (directory, t) for t in range(THREADS)]
fds = [os.open(p, os.O_RDWR) for p in paths]
written = [[0] * BLOCKS for _ in range(THREADS)]  # last version written; 0 = the zeros prepared
outcomes = [None] * THREADS
stop = time.time() + 20
def expected(t, block):
    version = written[t][block]
    return pattern(t, block, version) if version else bytes(BLOCK)
def work(t):
    fd, version = fds[t], 0
    while time.time() < stop:
        version += 1
        block = version % BLOCKS
        try:
            os.pwrite(fd, pattern(t, block, version), block * BLOCK)
            written[t][block] = version
            if version % 4 == 0:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # the next read reaches the daemon
            other = (block + 5) % BLOCKS
            if os.pread(fd, BLOCK, other * BLOCK) != expected(t, other):
                outcomes[t] = "corrupt block %d" % other
                return
        except OSError as e:
            outcomes[t] = errno.errorcode.get(e.errno, str(e.errno))
            return
    outcomes[t] = "never refused"
threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(THREADS)]
for thread in threads:
    thread.start()
time.sleep(0.5)
lock()
for thread in threads:
    thread.join(60)
print("threads ended by", " ".join(sorted(set(str(o) for o in outcomes))))
print("state", state())
print("close", " ".join(sorted(set(attempt(lambda: os.close(fd)) for fd in fds))))
ctl("unlock", MNT, "--passcode-file", passcode_file)
print("state", state())
damaged = []
for t in range(THREADS):
    data = open(paths[t], "rb").read()
    if len(data) != BLOCK * BLOCKS:
        damaged.append("t%d size %d" % (t, len(data)))
    damaged += ["t%d block %d: %r" % (t, b, data[b * BLOCK:b * BLOCK + 40])
                for b in range(BLOCKS) if data[b * BLOCK:(b + 1) * BLOCK] != expected(t, b)]
print("damaged", damaged[:8])
