#!/usr/bin/env python3
# Usage: hold-every-open.py DIRECTORY. What an attacker on an allow_other mount does: raises
# its own descriptor limit to the hard limit, then creates and holds open files in DIRECTORY
# until an open fails. Prints "held N ERRNO" then, and holds them until its standard input
# closes. Exits 0 if the open was refused with EMFILE or ENFILE, 1 for any other failure.
import errno, os, resource, sys

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held = []
failure = None
while failure is None:
    try:
        held.append(os.open(os.path.join(sys.argv[1], "f%d" % len(held)), os.O_CREAT | os.O_RDWR, 0o600))
    except OSError as error:
        failure = error.errno
print("held %d %s" % (len(held), errno.errorcode.get(failure, str(failure))), flush=True)
sys.stdin.read()
for fd in held:
    os.close(fd)
sys.exit(0 if failure in (errno.EMFILE, errno.ENFILE) else 1)
