#!/usr/bin/env python3
"""Computes items-v1.json from docs/FORMAT.md ("Keychain items") alone: libsodium through
ctypes for crypto_kdf and the AEAD, Python's hashlib for keyed BLAKE2b, so the Swift
implementation is checked against an independent one. Fixed nonces and item keys make the
output deterministic. Run once; never again (a mismatch in the tests means the format changed)."""
import os, sys, json, struct
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from item_vectors import ItemKeys, described  # noqa: E402

FILESYSTEM_KEY = bytes.fromhex("5f0e2b7a9c41d3e6081f6a4b2c9d7e30a1b2c3d4e5f60718293a4b5c6d7e8f90")
DEVICE_KEY = bytes.fromhex("d00d" * 16)
VAULT_ID = bytes.fromhex("f0e1d2c3b4a5968778695a4b3c2d1e0f")
CLASS_KEYS = {  # by class id: complete 1, completeUntilFirstUserAuthentication 3, none 4
    1: bytes(range(32, 64)),
    3: bytes(range(64, 96)),
    4: bytes(range(96, 128)),
}
KEYS = ItemKeys(FILESYSTEM_KEY, DEVICE_KEY, VAULT_ID, CLASS_KEYS)


def vector(owner, accessibility, service, account, label, description, comment, generic, created, modified,
           secret, item_id, item_key, seed):
    name = KEYS.record_name(owner, service, account)
    metadata = struct.pack("<IBBqq", owner, accessibility, 0, created, modified)
    for field in (service, account, label, description, comment, generic):
        metadata += struct.pack("<H", len(field)) + field
    record = KEYS.record(1, name, accessibility, metadata, secret, item_id, item_key, seed)
    return described(owner, accessibility, service, account, label, created, modified, secret, name, record,
                     description=description.decode(), comment=comment.decode(), generic=generic.hex())


vectors = KEYS.document(1, [
    vector(1000, 1, b"api.example.com", b"alice", b"API token", b"", b"", b"", 1796140800, 1796140800,
           b"s3cr3t\x00\n", bytes.fromhex("00112233445566778899aabbccddeeff"), bytes(range(200, 232)), 1),
    vector(0, 7, "zo\u00eb \u6587".encode(), b"", b"", b"desc", b"a comment", bytes([0, 1, 2, 255]), 1, 2,
           b"", bytes.fromhex("ffeeddccbbaa99887766554433221100"), bytes(range(100, 132)), 2),
    vector(4294967295, 6, b"backup", b"night job", b"Backup key", b"", b"", b"", 1796140801, 1796144401,
           bytes((i * 13) % 256 for i in range(300)), bytes(16), bytes(32), 3),
    vector(1000, 2, b"api.example.com", b"bob", b"", b"", b"", b"", 1796140800, 1796140800,
           b"x" * 4096, bytes(range(16)), bytes(range(32)), 4),
])
print(json.dumps(vectors, indent=1))
