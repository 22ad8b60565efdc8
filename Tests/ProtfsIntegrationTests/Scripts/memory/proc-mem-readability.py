#!/usr/bin/env python3
# Usage: proc-mem-readability.py PID. Prints whether /proc/PID/mem opens for a dumpable child
# of this process, then for PID: readable or refused.
import subprocess, sys
def memory(pid):
    try:
        open("/proc/%d/mem" % pid, "rb").close()
        return "readable"
    except PermissionError:
        return "refused"
control = subprocess.Popen(["sleep", "60"])
print(memory(control.pid), memory(int(sys.argv[1])))
control.kill()
