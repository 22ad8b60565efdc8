# Set-ID bits after a write, truncate or fallocate, as ext4 drops them on Linux 6.x: a
# caller without CAP_FSETID loses set-user-ID always, and set-group-ID when the file is
# group-executable or the caller is not in the file's group. Root keeps both. Run as root in
# a mount made with allow_other; real users are made with useradd.
import grp, mmap, os, pwd, stat, subprocess, sys

GROUP, OUTSIDER, MEMBER = "protfs-sgid", "protfs-outsider", "protfs-member"

def ensure(command, check):
    if subprocess.run(check, capture_output=True).returncode != 0:
        # Another test may make the same one at the same moment: then it exists.
        subprocess.run(command, capture_output=True)
        subprocess.run(check, check=True, capture_output=True)

ensure(["groupadd", GROUP], ["getent", "group", GROUP])
ensure(["useradd", "-M", "-N", "-g", "users", "-s", "/usr/sbin/nologin", OUTSIDER], ["id", OUTSIDER])
ensure(["useradd", "-M", "-N", "-g", "users", "-G", GROUP, "-s", "/usr/sbin/nologin", MEMBER], ["id", MEMBER])
group = grp.getgrnam(GROUP).gr_gid

def as_user(name, action):
    # A forked child that becomes the user (and so loses every capability) runs `action`.
    child = os.fork()
    if child == 0:
        try:
            user = pwd.getpwnam(name)
            os.setgroups(os.getgrouplist(name, user.pw_gid))
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            action()
            os._exit(0)
        except BaseException as error:
            print("%s: %r" % (name, error), file=sys.stderr)
            os._exit(1)
    _, status = os.waitpid(child, 0)
    assert status == 0, "%s failed" % name

def write(path, flags):
    fd = os.open(path, flags)
    block = mmap.mmap(-1, 4096)
    block.write(b"w" * 4096)
    assert os.pwritev(fd, [block], 4096) == 4096
    os.close(fd)

def call_on_descriptor(path, call):
    fd = os.open(path, os.O_RDWR)
    call(fd)
    os.close(fd)

OPERATIONS = {
    "cached write": lambda path: write(path, os.O_RDWR),
    "write-only write": lambda path: write(path, os.O_WRONLY),
    "O_DIRECT write": lambda path: write(path, os.O_RDWR | os.O_DIRECT),
    "truncate": lambda path: os.truncate(path, 1000),
    "ftruncate": lambda path: call_on_descriptor(path, lambda fd: os.ftruncate(fd, 1000)),
    "fallocate inside": lambda path: call_on_descriptor(path, lambda fd: os.posix_fallocate(fd, 0, 8192)),
    "fallocate past the end": lambda path: call_on_descriptor(path, lambda fd: os.posix_fallocate(fd, 0, 100000)),
}

def expected(mode, actor):
    if actor == "root":
        return mode
    kept = mode & ~stat.S_ISUID
    if mode & stat.S_IXGRP or actor == OUTSIDER:
        kept &= ~stat.S_ISGID
    return kept

failures = []
for mode in (0o6666, 0o6676, 0o6766, 0o6777, 0o2666, 0o2676, 0o4666):
    for actor in (OUTSIDER, MEMBER, "root"):
        for name, operation in OPERATIONS.items():
            path = "f-%o-%s-%s" % (mode, actor, name.replace(" ", "-"))
            with open(path, "wb") as f:
                f.write(b"x" * 16384)
            os.chown(path, 0, group)
            os.chmod(path, mode)
            if actor == "root":
                operation(path)
            else:
                as_user(actor, lambda: operation(path))
            got = stat.S_IMODE(os.stat(path).st_mode)
            if got != expected(mode, actor):
                failures.append("%04o, %s by %s: %04o, expected %04o" % (mode, name, actor, got, expected(mode, actor)))

# Changes that drop nothing: root's chmod of a file of a group root is not in keeps the bit
# (CAP_FSETID); times set alone by the owner keep it too.
with open("kept", "w"):
    pass
os.chown("kept", 0, group)
os.chmod("kept", 0o2755)
if stat.S_IMODE(os.stat("kept").st_mode) != 0o2755:
    failures.append("root's chmod 2755: %04o" % stat.S_IMODE(os.stat("kept").st_mode))
with open("touched", "w"):
    pass
os.chown("touched", pwd.getpwnam(OUTSIDER).pw_uid, group)
os.chmod("touched", 0o2666)
as_user(OUTSIDER, lambda: os.utime("touched", (1000000000, 1000000000)))
if stat.S_IMODE(os.stat("touched").st_mode) != 0o2666:
    failures.append("times set by the owner: %04o" % stat.S_IMODE(os.stat("touched").st_mode))

if failures:
    sys.exit("\n".join(failures))
