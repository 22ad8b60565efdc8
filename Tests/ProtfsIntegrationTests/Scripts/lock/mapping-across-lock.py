#!/usr/bin/env python3
# Usage: mapping-across-lock.py PROTFSCTL MOUNT PATH. A child maps PATH shared and dirties
# it; the parent locks now, then the child touches the mapping: prints how the child ended.
import mmap, os, signal, sys

from lock_client import lock

path = sys.argv[3]
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
child = os.fork()
if child == 0:
    os.close(ready_r)
    os.close(go_w)
    fd = os.open(path, os.O_RDWR)
    m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[0:19] = b"written in the map\n"
    os.write(ready_w, b"r")
    os.read(go_r, 1)
    m[0]
    os._exit(0)
os.close(ready_w)
os.close(go_r)
os.read(ready_r, 1)
lock("--now")
os.write(go_w, b"g")
_, status = os.waitpid(child, 0)
print("touch after the lock", signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "exit %d" % os.WEXITSTATUS(status))
