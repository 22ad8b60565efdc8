# Prints the kilobytes of process PID's memory that is locked whole (mlock: key slabs,
# passcodes), leaving out what is locked page by page as it is first touched (mlock2 with
# MLOCK_ONFAULT: the request, reply and chunk buffers, which grow with traffic, not keys).
import sys

total = size = 0
with open("/proc/%s/smaps" % sys.argv[1]) as smaps:
    for line in smaps:
        fields = line.split()
        if fields[0] == "Size:":
            size = int(fields[1])
        elif fields[0] == "VmFlags:" and "lo" in fields[1:] and "lf" not in fields[1:]:
            total += size
print(total)
