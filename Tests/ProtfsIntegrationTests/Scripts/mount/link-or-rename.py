#!/usr/bin/env python3
# Usage: link-or-rename.py link|noreplace|exchange OLD NEW. linkat(2), or renameat2(2) with
# RENAME_NOREPLACE or RENAME_EXCHANGE, as the kernel sees them: prints the errno name, or OK.
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
how, old, new = sys.argv[1:]
r = libc.linkat(-100, old.encode(), -100, new.encode(), 0) if how == "link" else \
    libc.renameat2(-100, old.encode(), -100, new.encode(), {"noreplace": 1, "exchange": 2}[how])
print("OK" if r == 0 else errno.errorcode[ctypes.get_errno()])
