#!/usr/bin/env python3
"""Computes items-v2.json from docs/FORMAT.md ("Keychain items", record version 2: the content
type and the lookup attributes after the version 1 attributes) alone, as items-v1 does for
version 1. Fixed nonces and item keys make the output deterministic. Run once; never again."""
import os, sys, json, struct
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from item_vectors import ItemKeys, described  # noqa: E402

FILESYSTEM_KEY = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0")
DEVICE_KEY = bytes.fromhex("beef" * 16)
VAULT_ID = bytes.fromhex("00112233445566778899aabbccddeeff")
CLASS_KEYS = {1: bytes(range(1, 33)), 3: bytes(range(33, 65)), 4: bytes(range(65, 97))}
KEYS = ItemKeys(FILESYSTEM_KEY, DEVICE_KEY, VAULT_ID, CLASS_KEYS)


def field(data):
    return struct.pack("<H", len(data)) + data


def vector(owner, accessibility, service, account, label, created, modified, content_type, attributes, secret,
           item_id, item_key, seed):
    name = KEYS.record_name(owner, service, account)
    metadata = struct.pack("<IBBqq", owner, accessibility, 0, created, modified)
    for part in (service, account, label, b"", b"", b"", content_type):
        metadata += field(part)
    pairs = sorted((k.encode(), v.encode()) for k, v in attributes.items())
    metadata += struct.pack("<H", len(pairs))
    for key, value in pairs:
        metadata += field(key) + field(value)
    record = KEYS.record(2, name, accessibility, metadata, secret, item_id, item_key, seed)
    return described(owner, accessibility, service, account, label, created, modified, secret, name, record,
                     contentType=content_type.decode(), attributes=attributes)


vectors = KEYS.document(2, [
    vector(1000, 1, b"org.freedesktop.Secret.Generic", b"3f2a9c0d4e5b6a718293a4b5c6d7e8f9", b"Mail password",
           1796140800, 1796140805, b"text/plain",
           {"xdg:schema": "org.freedesktop.Secret.Generic", "user": "alice", "server": "imap.example.com",
            "Zeta": "\u00e9t\u00e9", "protfs:accessible": "whenUnlocked"},
           b"hunter2", bytes(range(16, 32)), bytes(range(150, 182)), 5),
    vector(1000, 2, b"pip", b"bob", b"", 7, 8, b"", {"service": "pip", "username": "bob"},
           b"", bytes(16), bytes(range(32)), 6),
    vector(0, 6, b"s", b"", b"", 1, 1, b"application/octet-stream", {}, bytes(range(256)),
           bytes.fromhex("0123456789abcdef0123456789abcdef"), bytes(32), 7),
])
print(json.dumps(vectors, indent=1, ensure_ascii=False))
