#!/usr/bin/env python3
# What every lock-transition client imports (LockTransitionTests): arguments 1 and 2 of the
# client are protfsctl and the mount point. A Python client holds what a shell cannot
# (descriptors, mappings, threads) and calls protfsctl itself at the right moment.
import errno, json, os, subprocess, sys, time

CTL, MNT = sys.argv[1], sys.argv[2]

def attempt(call):
    try:
        call()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

def reads(fd, expected):
    try:
        data = os.pread(fd, 4096, 0)
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    return "ok" if data == expected else "wrong data %r" % data

def ctl(*arguments):
    done = subprocess.run([CTL, *arguments], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        print("protfsctl", *arguments, "exited", done.returncode, done.stderr.strip())

def state():
    done = subprocess.run([CTL, "status", MNT, "--json"], capture_output=True, text=True, timeout=60)
    try:
        return json.loads(done.stdout)["state"]
    except Exception:
        return "unknown (%s%s)" % (done.stdout.strip(), done.stderr.strip())

def wait_for(wanted, seconds=20):
    deadline = time.time() + seconds
    while state() != wanted and time.time() < deadline:
        time.sleep(0.1)
    return state()

def lock(*flags):
    # A client whose lock did not happen stops at once, threads and all.
    ctl("lock", *flags, MNT)
    now = state()
    if now not in (("locked",) if "--now" in flags else ("locking", "locked")):
        print("the lock left the state", now, flush=True)
        os._exit(1)
