#!/usr/bin/env python3
# Usage: names-of-every-byte.py MOUNT. Names of 255 bytes and of every byte but '/' and
# NUL for every kind of entry; 256 bytes (and a PATH_MAX symlink target) is ENAMETOOLONG.
import errno, os

from call_checks import Fails, expect, finish

every = bytes(b for b in range(1, 256) if b != ord("/"))
names = [every[:127], every[127:], b"\xff" * 255, b"a" * 255, b"\x01" + b"\xc3" * 254, b"-", b"..." , b" "]
for name in names:
    expect("create %r" % name[:8], lambda: os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644)))
    expect("stat %r" % name[:8], lambda: os.stat(name).st_size, 0)
expect("a listing shows exactly them", lambda: sorted(os.listdir(b".")), sorted(names))
expect("mkdir of 255 bytes", lambda: os.mkdir(b"\xfe" * 255))
expect("a file in it", lambda: os.close(os.open(b"\xfe" * 255 + b"/" + b"\xfd" * 255, os.O_CREAT | os.O_WRONLY)))
expect("symlink of 255 bytes to a PATH_MAX - 1 target of every byte",
       lambda: os.symlink((every * 17)[:4095], b"\xfc" * 255))
expect("its target", lambda: os.readlink(b"\xfc" * 255), (every * 17)[:4095])
expect("rename between two 255-byte names", lambda: os.rename(b"\xff" * 255, b"\xfb" * 255))
expect("hard link to a 255-byte name", lambda: os.link(b"a" * 255, b"\xfa" * 255))
too_long = b"b" * 256
for label, call in [("create", lambda: os.open(too_long, os.O_CREAT | os.O_WRONLY)), ("stat", lambda: os.stat(too_long)),
                    ("mkdir", lambda: os.mkdir(too_long)), ("symlink", lambda: os.symlink("t", too_long)),
                    ("mknod", lambda: os.mkfifo(too_long)), ("rename", lambda: os.rename(b"a" * 255, too_long)),
                    ("link", lambda: os.link(b"a" * 255, too_long)), ("unlink", lambda: os.unlink(too_long)),
                    ("a 4096-byte name", lambda: os.stat(b"c" * 4096))]:
    expect(label + " of 256 bytes", call, Fails(errno.ENAMETOOLONG))
expect("symlink to a PATH_MAX target", lambda: os.symlink(b"t" * 4096, b"toolong"), Fails(errno.ENAMETOOLONG))
for name in names[2:4] + [b"\xfb" * 255, b"\xfa" * 255]:
    if os.path.lexists(name):
        expect("unlink %r" % name[:8], lambda: os.unlink(name))

finish()
