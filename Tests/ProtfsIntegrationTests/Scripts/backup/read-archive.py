#!/usr/bin/env python3
"""read-archive.py ARCHIVE PASSPHRASE-FILE: reads a protfs backup archive following
docs/BACKUP.md alone (libsodium through ctypes, hashlib's keyed BLAKE2b), an implementation
independent of the Swift one: checks the passphrase, opens every chunk with its index and
last flag, opens the backup keybag, parses every entry and the end record. Prints one line
per entry (kind and path) and the count; exits 1 on anything the page does not allow."""
import struct, sys
from backup_archive import CHUNK, KEYBAG_CONTEXT, check, keys, open_sealed, passphrase_in, public_key

data = open(sys.argv[1], "rb").read()
passphrase = passphrase_in(sys.argv[2])
header, stored_check = data[:60], data[60:92]
# Version 1: an XChaCha20-Poly1305 vault; version 2: byte 10 names its content AEAD (1, AES-256-GCM).
assert header[:8] == b"PROTFSBA" and struct.unpack_from("<HH", header, 8) in ((1, 0), (2, 1)), "not a version-1 or -2 archive"
stream_key, keybag_key = keys(passphrase, header)
if check(stream_key, header) != stored_check:
    sys.exit("wrong passphrase")

body, sealed_size, offset, index = bytearray(), CHUNK + 40, 92, 0
while offset < len(data):
    piece = data[offset:offset + sealed_size]
    last = offset + len(piece) == len(data)
    body += open_sealed(piece, header + struct.pack("<QB", index, 1 if last else 0), stream_key)
    offset, index = offset + len(piece), index + 1

position = 0


def take(n):
    global position
    assert position + n <= len(body), "the body ends in the middle of a record"
    position += n
    return bytes(body[position - n:position])


def take_sized(length_bytes):
    return take(struct.unpack("<H" if length_bytes == 2 else "<I", take(length_bytes))[0])


vault_id, _, _, class_b_public = take(16), take(8), take(8), take(32)
vault_keys = [open_sealed(take(72), KEYBAG_CONTEXT + header[44:60] + bytes([i]), keybag_key) for i in range(6)]
assert public_key(vault_keys[5]) == class_b_public, "class B keys do not match"

count = 0
while True:
    kind, path = take(1), take_sized(2).decode()
    if kind == b"e":
        assert path == "" and struct.unpack("<Q", take(8))[0] == count, "the end record does not match"
        break
    take(36) if kind != b"l" else None  # attributes
    if kind in (b"d", b"f"):
        for _ in range(struct.unpack("<H", take(2))[0]):
            assert take_sized(2).startswith(b"user."), "an xattr outside user.*"
            take_sized(4)
    if kind == b"f":
        size, end = struct.unpack("<Q", take(8))[0], 0
        while True:
            extent_offset, length = struct.unpack("<QQ", take(16))
            if length == 0:
                break
            assert extent_offset >= end and extent_offset + length <= size, "extents out of order"
            take(length)
            end = extent_offset + length
    elif kind == b"s":
        take_sized(2)
    elif kind == b"n":
        take(8)
    elif kind == b"l":
        take_sized(2)
    else:
        assert kind == b"d", f"unknown kind {kind!r}"
    print(kind.decode(), path)
    count += 1
assert position == len(body), "bytes after the end record"
print(f"{count} entries")
