#!/usr/bin/env python3
# What the call-by-call clients import: expect(label, call, outcome) checks one system call
# against its expected outcome, in a forked child with a deadline, so a request the daemon
# never answers shows up as "hung" for that call instead of stalling the test. `outcome` is
# Fails(errno), OK (any success), a value the call must return, or a predicate on what it
# returns. Failures are collected; finish() prints them, checks the mount still answers, and
# exits 1 if any. Importing it moves into the mount point, argument 1 of the client.
import ctypes, errno, os, pickle, select, signal, stat, sys, time

os.chdir(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
OK = object()
failures = []

class Fails:
    def __init__(self, number):
        self.number = number
    def __repr__(self):
        return errno.errorcode.get(self.number, str(self.number))

def call_with_deadline(call, seconds=20):
    # ("ok", value), ("error", errno) or ("hung", None). Descriptors, offsets and
    # shared mappings are shared with the child, so calls act as if made here.
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        try:
            outcome = ("ok", call())
        except OSError as e:
            outcome = ("error", e.errno)
        except BaseException as e:
            outcome = ("ok", "raised %r" % e)
        with os.fdopen(write_end, "wb") as out:
            out.write(pickle.dumps(outcome))
        os._exit(0)
    os.close(write_end)
    deadline = time.time() + seconds
    received = []
    while True:
        ready, _, _ = select.select([read_end], [], [], max(deadline - time.time(), 0))
        if not ready:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            os.close(read_end)
            return ("hung", None)
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        received.append(chunk)
    os.close(read_end)
    os.waitpid(child, 0)
    return pickle.loads(b"".join(received))

def expect(label, call, outcome=OK):
    kind, got = call_with_deadline(call)
    if kind == "hung":
        failures.append("%s: no answer within 20 s" % label)
        return None
    if kind == "error":
        if not (isinstance(outcome, Fails) and outcome.number == got):
            failures.append("%s: %s, expected %s" % (label, errno.errorcode.get(got, got),
                                                     repr(outcome) if isinstance(outcome, Fails) else "success"))
        return None
    if isinstance(outcome, Fails):
        failures.append("%s: succeeded with %.80r, expected %r" % (label, got, outcome))
    elif outcome is not OK and not (outcome(got) if callable(outcome) else got == outcome):
        failures.append("%s: got %.80r, expected %.80r" % (label, got, outcome))
    return got

def finish():
    expect("the mount still answers", lambda: stat.S_ISDIR(os.stat(".").st_mode), True)
    print("\n".join(failures))
    sys.exit(1 if failures else 0)
