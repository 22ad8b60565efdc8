#!/usr/bin/env python3
"""craft-archive.py ARCHIVE PASSPHRASE-FILE [CASE]: writes a well-formed backup archive
(docs/BACKUP.md) whose entries a restore must refuse. CASE `escape` (the default): a symlink
`out` to /etc, then a hard link whose first name is `out/hostname`. `huge-size`: a file whose
size is beyond any off_t. `huge-offset`: a file's extent at an offset that overflows when its
length is added. Everything is sealed under the passphrase, as an archive handed over
together with its passphrase would be."""
import os, struct, sys
from backup_archive import CHUNK, KEYBAG_CONTEXT, check, keys, passphrase_in, public_key, seal


def sized(data):
    return struct.pack("<H", len(data)) + data


passphrase = passphrase_in(sys.argv[2])
ops, mem = 2, 64 << 20
header = b"PROTFSBA" + struct.pack("<HHQQ", 1, 0, ops, mem) + os.urandom(16) + os.urandom(16)
stream_key, keybag_key = keys(passphrase, header)

vault_keys = [os.urandom(32) for _ in range(6)]
body = os.urandom(16) + struct.pack("<QQ", ops, mem) + public_key(vault_keys[5])
body += b"".join(seal(k, KEYBAG_CONTEXT + header[44:60] + bytes([i]), keybag_key) for i, k in enumerate(vault_keys))
attributes = struct.pack("<III", 0o40700, 0, 0) + struct.pack("<qIqI", 0, 0, 0, 0)
body += b"d" + sized(b"") + attributes + struct.pack("<H", 0)
case = sys.argv[3] if len(sys.argv) > 3 else "escape"
if case == "escape":
    body += b"s" + sized(b"out") + struct.pack("<III", 0o120777, 0, 0) + struct.pack("<qIqI", 0, 0, 0, 0) + sized(b"/etc")
    body += b"l" + sized(b"stolen") + sized(b"out/hostname")
    entries = 3
else:
    # The root's directory record: a file the restore makes with no header to authenticate first.
    size, offset = (2**64 - 1, 0) if case == "huge-size" else (100, 2**64 - 2)
    body += b"f" + sized(b"protfs.dir") + struct.pack("<III", 0o100600, 0, 0) + struct.pack("<qIqI", 0, 0, 0, 0)
    body += struct.pack("<H", 0) + struct.pack("<Q", size) + struct.pack("<QQ", offset, 5) + b"12345" + struct.pack("<QQ", 0, 0)
    entries = 2
body += b"e" + sized(b"") + struct.pack("<Q", entries)

chunks = [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)]
with open(sys.argv[1], "wb") as out:
    out.write(header + check(stream_key, header))
    for index, chunk in enumerate(chunks):
        out.write(seal(chunk, header + struct.pack("<QB", index, 1 if index == len(chunks) - 1 else 0), stream_key))
