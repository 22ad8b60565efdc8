#!/usr/bin/env python3
# Usage: refuse-fchmodat2.py ERRNO PROGRAM ARGS... Runs PROGRAM with fchmodat2 (system call 452)
# answered by ERRNO (ENOSYS or EPERM), as an older kernel or a container's seccomp profile would.
import errno, os, seccomp, sys
rules = seccomp.SyscallFilter(seccomp.ALLOW)
rules.add_rule(seccomp.ERRNO(getattr(errno, sys.argv[1])), 452)
rules.load()
os.execv(sys.argv[2], sys.argv[2:])
