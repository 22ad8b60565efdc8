#!/usr/bin/env python3
"""Computes items-v1.json from docs/FORMAT.md ("Keychain items") alone: libsodium through
ctypes for crypto_kdf and the AEAD, Python's hashlib for keyed BLAKE2b, so the Swift
implementation is checked against an independent one. Fixed nonces and item keys make the
output deterministic. Run once; never again (a mismatch in the tests means the format changed)."""
import os, sys, hashlib, json, struct
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "ProtfsFormatTests", "Vectors"))
from sodium_vectors import subkey, seal, base64url  # noqa: E402

FILESYSTEM_KEY = bytes.fromhex("5f0e2b7a9c41d3e6081f6a4b2c9d7e30a1b2c3d4e5f60718293a4b5c6d7e8f90")
DEVICE_KEY = bytes.fromhex("d00d" * 16)
VAULT_ID = bytes.fromhex("f0e1d2c3b4a5968778695a4b3c2d1e0f")
CLASS_KEYS = {  # by class id: complete 1, completeUntilFirstUserAuthentication 3, none 4
    1: bytes(range(32, 64)),
    3: bytes(range(64, 96)),
    4: bytes(range(96, 128)),
}
# accessibility id -> (name, class id, this device only)
ACCESSIBILITY = {
    1: ("whenUnlocked", 1, False), 2: ("afterFirstUnlock", 3, False), 3: ("always", 4, False),
    4: ("whenPasscodeSetThisDeviceOnly", 1, True), 5: ("whenUnlockedThisDeviceOnly", 1, True),
    6: ("afterFirstUnlockThisDeviceOnly", 3, True), 7: ("alwaysThisDeviceOnly", 4, True),
}


NAME_KEY = subkey(FILESYSTEM_KEY, b"pfitmnam")
METADATA_KEY = subkey(FILESYSTEM_KEY, b"pfitmmet")
DEVICE_ITEM_KEY = subkey(DEVICE_KEY, b"pfitmdev")


def record_name(owner, service, account):
    message = struct.pack("<I", owner)
    for text in (service, account):
        message += struct.pack("<I", len(text)) + text
    return base64url(hashlib.blake2b(message, digest_size=32, key=NAME_KEY).digest())


def vector(owner, accessibility, service, account, label, description, comment, generic, created, modified,
           secret, item_id, item_key, seed):
    name = record_name(owner, service, account)
    _, class_id, device_only = ACCESSIBILITY[accessibility]
    wrap_key = CLASS_KEYS[class_id]
    if device_only:
        wrap_key = hashlib.blake2b(b"protfs item device binding v1" + VAULT_ID + wrap_key, digest_size=32,
                                   key=DEVICE_ITEM_KEY).digest()
    metadata = struct.pack("<IBBqq", owner, accessibility, 0, created, modified)
    for field in (service, account, label, description, comment, generic):
        metadata += struct.pack("<H", len(field)) + field
    ad = b"PROTFSIT" + struct.pack("<H", 1) + VAULT_ID + item_id + name.encode()
    nonces = [bytes((seed + part * 24 + i) % 256 for i in range(24)) for part in range(3)]
    sealed_metadata = seal(metadata, ad + b"\x01", METADATA_KEY, nonces[0])
    wrapped_key = seal(item_key, ad + bytes([2, accessibility]), wrap_key, nonces[1])
    sealed_secret = seal(secret, ad + bytes([3, accessibility]), item_key, nonces[2])
    record = (b"PROTFSIT" + struct.pack("<HH", 1, 0) + item_id + struct.pack("<I", len(sealed_metadata))
              + sealed_metadata + wrapped_key + sealed_secret)
    return {"owner": owner, "accessibility": ACCESSIBILITY[accessibility][0], "service": service.decode(),
            "account": account.decode(), "label": label.decode(), "description": description.decode(),
            "comment": comment.decode(), "generic": generic.hex(), "created": created, "modified": modified,
            "secret": secret.hex(), "recordName": name, "record": record.hex()}


vectors = {
    "comment": "Known answers for docs/FORMAT.md 'Keychain items', version 1, made by make-vectors.py. Byte strings "
               "are hex; class keys by class id. Never regenerate: a mismatch means the format changed.",
    "filesystemKey": FILESYSTEM_KEY.hex(),
    "deviceKey": DEVICE_KEY.hex(),
    "vaultID": VAULT_ID.hex(),
    "classKeys": {str(k): v.hex() for k, v in CLASS_KEYS.items()},
    "items": [
        vector(1000, 1, b"api.example.com", b"alice", b"API token", b"", b"", b"", 1796140800, 1796140800,
               b"s3cr3t\x00\n", bytes.fromhex("00112233445566778899aabbccddeeff"), bytes(range(200, 232)), 1),
        vector(0, 7, "zo\u00eb \u6587".encode(), b"", b"", b"desc", b"a comment", bytes([0, 1, 2, 255]), 1, 2,
               b"", bytes.fromhex("ffeeddccbbaa99887766554433221100"), bytes(range(100, 132)), 2),
        vector(4294967295, 6, b"backup", b"night job", b"Backup key", b"", b"", b"", 1796140801, 1796144401,
               bytes((i * 13) % 256 for i in range(300)), bytes(16), bytes(32), 3),
        vector(1000, 2, b"api.example.com", b"bob", b"", b"", b"", b"", 1796140800, 1796140800,
               b"x" * 4096, bytes(range(16)), bytes(range(32)), 4),
    ],
}
print(json.dumps(vectors, indent=1))
