#!/usr/bin/env python3
# Usage: xattr-sizes-and-namespaces.py MOUNT. xattr values of size 0, too small and too
# large buffers, the largest value and name, non-UTF-8 names, and every other namespace
# (trusted, security, system ACLs and capabilities) refused as docs/CLASSES.md says.
import errno, os, struct

from call_checks import Fails, expect, failures, finish
from request_helpers import getxattr_sized, listxattr_sized

open("f", "w").close()
os.mkdir("d")
expect("set", lambda: os.setxattr("f", "user.a", b"v" * 10))
expect("get with size 0 gives the size", lambda: getxattr_sized("f", b"user.a", 0), 10)
expect("get into a buffer too small", lambda: getxattr_sized("f", b"user.a", 3), Fails(errno.ERANGE))
expect("get into a buffer of the exact size", lambda: getxattr_sized("f", b"user.a", 10), 10)
expect("list with size 0", lambda: listxattr_sized("f", 0), len(b"user.protfs.class\0user.a\0"))
expect("list into a buffer too small", lambda: listxattr_sized("f", 5), Fails(errno.ERANGE))
expect("an empty value", lambda: os.setxattr("f", "user.empty", b""))
expect("reads back empty", lambda: os.getxattr("f", "user.empty"), b"")
expect("a value of 3000 bytes", lambda: os.setxattr("f", "user.big", b"\x00\xff" * 1500))
expect("reads back", lambda: os.getxattr("f", "user.big"), b"\x00\xff" * 1500)
# The largest value whose sealed form fits the kernel's 64 KiB: stored where the
# backing filesystem takes values that large (ext4 without ea_inode takes one block
# and says ENOSPC, as it does for a value set on it directly).
largest = 65536 - 40
try:
    os.setxattr("f", "user.largest", b"\xfe" * largest)
    expect("the largest value reads back", lambda: os.getxattr("f", "user.largest"), b"\xfe" * largest)
except OSError as e:
    if e.errno != errno.ENOSPC:
        failures.append("the largest value: %s" % errno.errorcode.get(e.errno, e.errno))
for size in [largest + 1, 65536, 65537, 1 << 20]:
    expect("a value of %d bytes" % size, lambda: os.setxattr("f", "user.big", b"v" * size), Fails(errno.E2BIG))
expect("the longest name that fits", lambda: os.setxattr("f", "user." + "n" * 159, b"x"))
expect("a name one byte longer", lambda: os.setxattr("f", "user." + "n" * 160, b"x"), Fails(errno.ERANGE))
expect("a name of 256 bytes", lambda: os.setxattr("f", "user." + "n" * 251, b"x"), Fails(errno.ERANGE))
expect("get of a name of 256 bytes", lambda: os.getxattr("f", "user." + "n" * 251), Fails(errno.ERANGE))
expect("an empty user name", lambda: os.setxattr("f", "user.", b"x"), Fails(errno.EINVAL))
expect("set a non-UTF-8 name", lambda: os.setxattr("f", b"user.\xff", b"ff"))
expect("a different non-UTF-8 name is another attribute", lambda: os.getxattr("f", b"user.\xfe"), Fails(errno.ENODATA))
expect("set it too", lambda: os.setxattr("f", b"user.\xfe", b"fe"))
expect("each keeps its value", lambda: (os.getxattr("f", b"user.\xff"), os.getxattr("f", b"user.\xfe")), (b"ff", b"fe"))
expect("listed by their bytes", lambda: {os.fsencode(n) for n in os.listxattr(b"f")} >= {b"user.\xff", b"user.\xfe"}, True)
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, 0xFFFFFFFF) for tag, perm in [(1, 6), (4, 4), (0x20, 4)])
capability = struct.pack("<IIIII", 0x02000001, 0, 0, 0, 0)
for name in ["trusted.x", "security.x", "security.selinux", "system.nfs4_acl", "other.x"]:
    expect("get " + name, lambda: os.getxattr("f", name), Fails(errno.EOPNOTSUPP))
    expect("set " + name, lambda: os.setxattr("f", name, b"x"), Fails(errno.EOPNOTSUPP))
    expect("remove " + name, lambda: os.removexattr("f", name), Fails(errno.EOPNOTSUPP))
expect("get system.posix_acl_access", lambda: os.getxattr("f", "system.posix_acl_access"), Fails(errno.EOPNOTSUPP))
expect("set a valid access ACL", lambda: os.setxattr("f", "system.posix_acl_access", acl), Fails(errno.EOPNOTSUPP))
expect("set a valid default ACL", lambda: os.setxattr("d", "system.posix_acl_default", acl), Fails(errno.EOPNOTSUPP))
expect("get security.capability", lambda: os.getxattr("f", "security.capability"), Fails(errno.ENODATA))
expect("set a valid security.capability", lambda: os.setxattr("f", "security.capability", capability),
       Fails(errno.EOPNOTSUPP))
expect("remove security.capability", lambda: os.removexattr("f", "security.capability"), Fails(errno.ENODATA))
expect("the file is still writable", lambda: os.write(os.open("f", os.O_WRONLY), b"data"), 4)

finish()
