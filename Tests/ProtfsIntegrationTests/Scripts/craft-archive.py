#!/usr/bin/env python3
"""craft-archive.py ARCHIVE PASSPHRASE-FILE: writes a well-formed backup archive (docs/BACKUP.md)
whose entries try to reach outside the backing directory: a symlink `out` to /etc, then a
hard link whose first name is `out/hostname`. Everything is sealed under the passphrase, as
an archive handed over together with its passphrase would be; a restore must refuse it."""
import ctypes, hashlib, os, struct, sys

sodium = ctypes.CDLL("libsodium.so.23")
assert sodium.sodium_init() >= 0
CHUNK = 65536


def subkey(key, context):
    out = ctypes.create_string_buffer(32)
    assert sodium.crypto_kdf_derive_from_key(out, 32, ctypes.c_uint64(1), context, key) == 0
    return out.raw


def seal(plaintext, associated_data, key):
    nonce = os.urandom(24)
    out = ctypes.create_string_buffer(len(plaintext) + 16)
    out_length = ctypes.c_ulonglong()
    assert sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
        out, ctypes.byref(out_length), plaintext, ctypes.c_ulonglong(len(plaintext)),
        associated_data, ctypes.c_ulonglong(len(associated_data)), None, nonce, key) == 0
    return nonce + out.raw[:out_length.value]


def sized(data):
    return struct.pack("<H", len(data)) + data


passphrase = open(sys.argv[2], "rb").read().split(b"\n")[0]
ops, mem = 2, 64 << 20
header = b"PROTFSBA" + struct.pack("<HHQQ", 1, 0, ops, mem) + os.urandom(16) + os.urandom(16)
stretched = ctypes.create_string_buffer(32)
assert sodium.crypto_pwhash(stretched, ctypes.c_ulonglong(32), passphrase, ctypes.c_ulonglong(len(passphrase)),
                            header[28:44], ctypes.c_ulonglong(ops), ctypes.c_size_t(mem), 2) == 0
stream_key, keybag_key = subkey(stretched.raw, b"pfbkstrm"), subkey(stretched.raw, b"pfbkkbag")
check = hashlib.blake2b(b"protfs backup passphrase check v1" + header, digest_size=32, key=stream_key).digest()

keys = [os.urandom(32) for _ in range(6)]
public_key = ctypes.create_string_buffer(32)
assert sodium.crypto_scalarmult_base(public_key, keys[5]) == 0
body = os.urandom(16) + struct.pack("<QQ", ops, mem) + public_key.raw
body += b"".join(seal(k, b"protfs backup keybag v1" + header[44:60] + bytes([i]), keybag_key) for i, k in enumerate(keys))
attributes = struct.pack("<III", 0o40700, 0, 0) + struct.pack("<qIqI", 0, 0, 0, 0)
body += b"d" + sized(b"") + attributes + struct.pack("<H", 0)
body += b"s" + sized(b"out") + struct.pack("<III", 0o120777, 0, 0) + struct.pack("<qIqI", 0, 0, 0, 0) + sized(b"/etc")
body += b"l" + sized(b"stolen") + sized(b"out/hostname")
body += b"e" + sized(b"") + struct.pack("<Q", 3)

chunks = [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)]
with open(sys.argv[1], "wb") as out:
    out.write(header + check)
    for index, chunk in enumerate(chunks):
        out.write(seal(chunk, header + struct.pack("<QB", index, 1 if index == len(chunks) - 1 else 0), stream_key))
