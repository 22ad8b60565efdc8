#!/usr/bin/env python3
"""read-archive.py ARCHIVE PASSPHRASE-FILE: reads a protfs backup archive following
docs/BACKUP.md alone (libsodium through ctypes, hashlib's keyed BLAKE2b), an implementation
independent of the Swift one: checks the passphrase, opens every chunk with its index and
last flag, opens the backup keybag, parses every entry and the end record. Prints one line
per entry (kind and path) and the count; exits 1 on anything the page does not allow."""
import ctypes, hashlib, struct, sys

sodium = ctypes.CDLL("libsodium.so.23")
assert sodium.sodium_init() >= 0
CHUNK = 65536


def subkey(key, context):
    out = ctypes.create_string_buffer(32)
    assert sodium.crypto_kdf_derive_from_key(out, 32, ctypes.c_uint64(1), context, key) == 0
    return out.raw


def open_sealed(sealed, associated_data, key):
    out = ctypes.create_string_buffer(max(len(sealed) - 40, 1))
    out_length = ctypes.c_ulonglong()
    if sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
            out, ctypes.byref(out_length), None, sealed[24:], ctypes.c_ulonglong(len(sealed) - 24),
            associated_data, ctypes.c_ulonglong(len(associated_data)), sealed[:24], key) != 0:
        sys.exit("a sealed part does not open")
    return out.raw[:out_length.value]


data = open(sys.argv[1], "rb").read()
passphrase = open(sys.argv[2], "rb").read().split(b"\n")[0]
header, check = data[:60], data[60:92]
assert header[:8] == b"PROTFSBA" and struct.unpack_from("<HH", header, 8) == (1, 0), "not a version-1 archive"
ops, mem = struct.unpack_from("<QQ", header, 12)
salt = header[28:44]
stretched = ctypes.create_string_buffer(32)
assert sodium.crypto_pwhash(stretched, ctypes.c_ulonglong(32), passphrase, ctypes.c_ulonglong(len(passphrase)), salt,
                            ctypes.c_ulonglong(ops), ctypes.c_size_t(mem), 2) == 0
stream_key, keybag_key = subkey(stretched.raw, b"pfbkstrm"), subkey(stretched.raw, b"pfbkkbag")
if hashlib.blake2b(b"protfs backup passphrase check v1" + header, digest_size=32, key=stream_key).digest() != check:
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


vault_id, _, _, public_key = take(16), take(8), take(8), take(32)
keys = [open_sealed(take(72), b"protfs backup keybag v1" + header[44:60] + bytes([i]), keybag_key) for i in range(6)]
derived = ctypes.create_string_buffer(32)
assert sodium.crypto_scalarmult_base(derived, keys[5]) == 0 and derived.raw == public_key, "class B keys do not match"

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
