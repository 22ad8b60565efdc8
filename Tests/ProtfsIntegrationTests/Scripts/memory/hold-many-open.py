#!/usr/bin/env python3
# Usage: hold-many-open.py MOUNT PID. 5,000 files created and held open, each written; prints
# the kilobytes PID has locked whole (locked_whole_kilobytes.py) while they are open.
import os, resource, subprocess, sys

locked_whole_kilobytes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "locked_whole_kilobytes.py")
os.chdir(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
os.mkdir("held")
fds = [os.open("held/%d" % i, os.O_CREAT | os.O_RDWR, 0o600) for i in range(5000)]
for fd in fds:
    os.write(fd, b"y")
print(subprocess.check_output([sys.executable, locked_whole_kilobytes, sys.argv[2]], text=True).strip())
for fd in fds:
    os.close(fd)
