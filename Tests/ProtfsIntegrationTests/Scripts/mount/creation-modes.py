# Every kind of node is created with exactly the mode the caller asked for, less the
# caller's umask (the kernel applies it; the daemon's own umask must not apply again).
import os, socket, stat, sys

failures = []
for mask in (0o000, 0o002, 0o022, 0o077):
    os.umask(mask)
    for mode in (0o666, 0o620, 0o777, 0o4770, 0o2751):
        made = {}
        name = "file-%03o-%04o" % (mask, mode)
        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode))
        made[name] = mode
        name = "mknod-%03o-%04o" % (mask, mode)
        os.mknod(name, mode | stat.S_IFREG)
        made[name] = mode
        name = "fifo-%03o-%04o" % (mask, mode)
        os.mkfifo(name, mode)
        made[name] = mode
        name = "dir-%03o-%04o" % (mask, mode)
        os.mkdir(name, mode)
        made[name] = mode & 0o1777  # mkdir(2) drops set-ID bits, as on any filesystem
        for name, asked in made.items():
            expected = asked & ~mask & 0o7777
            got = stat.S_IMODE(os.lstat(name).st_mode)
            if got != expected:
                failures.append("%s: %04o, expected %04o" % (name, got, expected))
    name = "sock-%03o" % mask
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(name)
    expected = 0o777 & ~mask
    got = stat.S_IMODE(os.lstat(name).st_mode)
    if got != expected:
        failures.append("%s: %04o, expected %04o" % (name, got, expected))

if failures:
    sys.exit("\n".join(failures))
