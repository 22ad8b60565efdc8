#!/usr/bin/env python3
# What the concurrency clients (ConcurrencyTests) import: the mount point (argument 1), a
# byte pattern that tells, at every position, which version wrote it (so a reader can check
# any range it sees), and helpers that run a body in forked processes or threads.
import os, sys, threading

MNT = sys.argv[1]
CHUNK = 4096

CYCLE = bytes(7 * p % 251 + 1 for p in range(251))
INVERSE_131, SHIFT = pow(131, -1, 251), 131 * pow(7, -1, 251) % 251

def pattern(start, length, version):
    """Byte p of version v is (7p + 131v) mod 251 + 1: never zero, and v is recoverable.
    (It is the cycle of 7p shifted by 131v/7, hence the slicing.)"""
    offset = (start + SHIFT * version) % 251
    return (CYCLE * (length // 251 + 2))[offset:offset + length]

def version_at(position, byte):
    return None if byte == 0 else ((byte - 1 - 7 * position) * INVERSE_131) % 251

def in_processes(count, body):
    """Runs body(i) in `count` forked processes; the exit statuses, 0 for success."""
    children = []
    for i in range(count):
        pid = os.fork()
        if pid == 0:
            try:
                body(i)
                os._exit(0)
            except BaseException as e:
                print("process %d: %r" % (i, e), flush=True)
                os._exit(1)
        children.append(pid)
    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]

def in_threads(count, body):
    """Runs body(i) in `count` threads; raises with what failed."""
    failures = []
    def run(i):
        try:
            body(i)
        except BaseException as e:
            failures.append("thread %d: %r" % (i, e))
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise RuntimeError("; ".join(failures))
