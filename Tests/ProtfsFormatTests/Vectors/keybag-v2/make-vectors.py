#!/usr/bin/env python3
"""Computes a version-2 keybag (a vault without a passcode, docs/BACKUP.md) from docs/FORMAT.md
("Keybag") alone: libsodium through ctypes for crypto_kdf, X25519 and the AEAD, Python's
hashlib for keyed BLAKE2b, so the Swift implementation is checked against an independent one.
Fixed keys and nonces make the output deterministic. Run once; never again (a mismatch in the
tests means the format changed)."""
import os, sys, hashlib, json, struct
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from sodium_vectors import subkey, seal, public_key  # noqa: E402

DEVICE_KEY = bytes.fromhex("2b" * 16 + "7e" * 16)
VAULT_ID = bytes.fromhex("00112233445566778899aabbccddeeff")
GENERATION = 3
OPS, MEM = 2, 64 << 20
KEYS = {  # by entry: (name, class id, key)
    0: ("filesystem", 0, bytes(range(0, 32))),
    1: ("none", 4, bytes(range(32, 64))),
    2: ("completeUntilFirstUserAuthentication", 3, bytes(range(64, 96))),
    3: ("complete", 1, bytes(range(96, 128))),
    4: ("completeUnlessOpenPrivate", 2, bytes(range(128, 160))),
}


def mac(key, *parts):
    return hashlib.blake2b(b"".join(parts), digest_size=32, key=key).digest()


MAGIC = b"PROTFSKB"
VERSION = 2
FLAGS = 1  # no passcode
wrap = subkey(DEVICE_KEY, b"pfdevwrp")
header = MAGIC + struct.pack("<HH", VERSION, FLAGS) + VAULT_ID + struct.pack("<QQQ", GENERATION, OPS, MEM)
header += bytes(16)  # salt: zeros without a passcode
header += mac(subkey(DEVICE_KEY, b"pfdevchk"), b"protfs device key check v1", VAULT_ID)
header += public_key(KEYS[4][2])
for index, (name, class_id, key) in KEYS.items():
    wrap_kind = 1  # every entry under the device alone
    ad = MAGIC + struct.pack("<H", VERSION) + VAULT_ID + bytes([class_id, wrap_kind]) + struct.pack("<Q", GENERATION)
    header += bytes([class_id, wrap_kind]) + seal(key, ad, wrap, bytes([index + 1]) * 24)
assert len(header) == 502
keybag = header + mac(subkey(DEVICE_KEY, b"pfbagmac"), header)
open("device.key", "wb").write(DEVICE_KEY)
open("protfs.keybag", "wb").write(keybag)
json.dump({"comment": "From make-vectors.py: a version-2 keybag (no passcode). Every fact must hold for every later build.",
           "vaultID": VAULT_ID.hex(), "generation": GENERATION,
           "keys": {name: key.hex() for name, _, key in KEYS.values()}},
          open("facts.json", "w"), indent=2, sort_keys=True)
