# Writes to FILE, says so by creating READY, fsyncs (the daemon is told to be slow at it),
# creates SYNCED once the fsync returned 0, then keeps FILE open until killed.
import os, sys, time

path, ready, synced = sys.argv[1:4]
fd = os.open(path, os.O_RDWR)
os.pwrite(fd, b"written before the fsync", 0)
open(ready, "w").close()
os.fsync(fd)
open(synced, "w").close()
time.sleep(300)
