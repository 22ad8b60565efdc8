#!/usr/bin/env python3
# Usage: many-xattrs.py MOUNT MODE FILE [COUNT]. Many small user.* attributes on one file
# (docs/FORMAT.md "xattrs": they are packed into one backing xattr).
#   set FILE COUNT     sets user.attr_N = "vN" for N < COUNT
#   check FILE COUNT   the file lists exactly those (and the class) and each reads back
#   concurrent FILE    8 threads set 40 names each at once: none is lost
#   flags FILE         XATTR_CREATE/XATTR_REPLACE on packed and unpacked values, and moves
#                      between the two forms as a value grows and shrinks
#   fill FILE          sets tiny attributes until the backing store refuses one (or 3000
#                      fit); prints how many fit and the error (or "none")
import errno, os, sys, threading

mount, mode, path = sys.argv[1], sys.argv[2], os.path.join(sys.argv[1], sys.argv[3])
count = int(sys.argv[4]) if len(sys.argv) > 4 else 0


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def expected(n):
    return {"user.attr_%d" % i: b"v%d" % i for i in range(n)}


def check(want):
    # The class is listed on the mount; a plain file of the backing filesystem has none.
    names = [name for name in os.listxattr(path) if name != "user.protfs.class"]
    if len(names) != len(set(names)):
        fail("a name is listed twice: %r" % sorted(names))
    if set(names) != set(want):
        missing = sorted(set(want) - set(names))[:10]
        extra = sorted(set(names) - set(want))[:10]
        fail("%d names listed for %d set; missing %r, extra %r" % (len(names), len(want), missing, extra))
    for name, value in want.items():
        got = os.getxattr(path, name)
        if got != value:
            fail("%s reads %r, not %r" % (name, got, value))


def expect_error(number, call, label):
    try:
        call()
    except OSError as e:
        if e.errno != number:
            fail("%s: %s, expected %s" % (label, errno.errorcode.get(e.errno), errno.errorcode[number]))
        return
    fail("%s succeeded, expected %s" % (label, errno.errorcode[number]))


if mode == "set":
    for name, value in expected(count).items():
        try:
            os.setxattr(path, name, value)
        except OSError as e:
            fail("setting %s failed: %s" % (name, os.strerror(e.errno)))
elif mode == "check":
    check(expected(count))
elif mode == "concurrent":
    errors = []

    def setter(thread):
        for i in range(40):
            try:
                os.setxattr(path, "user.t%d_%d" % (thread, i), b"%d" % i)
            except OSError as e:
                errors.append("user.t%d_%d: %s" % (thread, i, os.strerror(e.errno)))

    threads = [threading.Thread(target=setter, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors or any(t.is_alive() for t in threads):
        fail("concurrent sets failed: %r" % errors[:10])
    check({"user.t%d_%d" % (t, i): b"%d" % i for t in range(8) for i in range(40)})
elif mode == "flags":
    small, large = b"s", b"L" * 3000
    expect_error(errno.ENODATA, lambda: os.setxattr(path, "user.x", small, os.XATTR_REPLACE), "REPLACE of a missing one")
    os.setxattr(path, "user.x", small, os.XATTR_CREATE)
    expect_error(errno.EEXIST, lambda: os.setxattr(path, "user.x", small, os.XATTR_CREATE), "CREATE of a packed one")
    os.setxattr(path, "user.x", large, os.XATTR_REPLACE)  # moves out of the blob
    if os.getxattr(path, "user.x") != large:
        fail("the grown value does not read back")
    expect_error(errno.EEXIST, lambda: os.setxattr(path, "user.x", small, os.XATTR_CREATE), "CREATE of an unpacked one")
    os.setxattr(path, "user.x", small, os.XATTR_REPLACE)  # back into the blob
    if os.getxattr(path, "user.x") != small:
        fail("the shrunk value does not read back")
    os.setxattr(path, "user.y", large, os.XATTR_CREATE)
    check({"user.x": small, "user.y": large})
    os.removexattr(path, "user.x")
    os.removexattr(path, "user.y")
    expect_error(errno.ENODATA, lambda: os.getxattr(path, "user.x"), "get of a removed packed one")
    expect_error(errno.ENODATA, lambda: os.removexattr(path, "user.y"), "remove of a removed unpacked one")
    expect_error(errno.ENODATA, lambda: os.setxattr(path, "user.y", small, os.XATTR_REPLACE), "REPLACE of a removed one")
    check({})
elif mode == "fill":
    n = 0
    while True:
        try:
            os.setxattr(path, "user.attr_%d" % n, b"v%d" % n)
        except OSError as e:
            print("%d %s" % (n, errno.errorcode.get(e.errno)))
            check(expected(n))
            break
        n += 1
        if n == 3000:
            # Enough to tell (a backing filesystem without a small limit, such as tmpfs).
            print("%d none" % n)
            check(expected(n))
            break
else:
    fail("unknown mode " + mode)
