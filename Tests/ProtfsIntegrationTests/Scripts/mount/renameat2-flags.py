#!/usr/bin/env python3
# Usage: renameat2-flags.py (in the mount, holding "a" and "b"). renameat2 with
# RENAME_NOREPLACE refuses an existing target, RENAME_EXCHANGE swaps the two, and
# RENAME_NOREPLACE renames onto a free name.
import ctypes, os, errno
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
def renameat2(a, b, flags):
    r = libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags)
    return 0 if r == 0 else ctypes.get_errno()
assert renameat2("a", "b", 1) == errno.EEXIST          # RENAME_NOREPLACE
assert renameat2("a", "b", 2) == 0                     # RENAME_EXCHANGE
assert open("a").read() == "B\n" and open("b").read() == "A\n"
assert renameat2("a", "c", 1) == 0
assert not os.path.exists("a") and open("c").read() == "B\n"
