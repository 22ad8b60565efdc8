#!/usr/bin/env python3
"""Computes symlinks-v2.json from docs/FORMAT.md alone, with libsodium through ctypes: an
implementation independent of protfs's Swift one. Fixed nonces and link ids make the output
deterministic. Run once; never again (a mismatch in the tests means the format changed)."""
import os, sys, json
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from sodium_vectors import subkey, seal, base64url  # noqa: E402

# The filesystem key of ../names-v1.json: its pfsymlnk subkey seals every target here.
FILESYSTEM_KEY = bytes.fromhex("5f0e2b7a9c41d3e6081f6a4b2c9d7e30a1b2c3d4e5f60718293a4b5c6d7e8f90")
VAULT_ID = bytes.fromhex("f0e1d2c3b4a5968778695a4b3c2d1e0f")
DIRECTORY_ID = bytes.fromhex("00112233445566778899aabbccddeeff")
NONCE = bytes(range(24))


KEY = subkey(FILESYSTEM_KEY, b"pfsymlnk")


def vector(name, target, link_id=None):
    form = b"\x01" + link_id if link_id else b"\x00" + bytes(16)
    associated_data = b"protfs symlink v2" + VAULT_ID + DIRECTORY_ID + form + name
    sealed = seal(target, associated_data, KEY, NONCE)
    result = {"name": name.hex(), "target": target.hex()}
    if link_id:
        result["backingTarget"] = "2.@" + link_id.hex()
        result["blob"] = sealed.hex()
    else:
        result["backingTarget"] = "2." + base64url(sealed)
        assert len(result["backingTarget"]) <= 4000
    return result


vectors = {
    "comment": "Known answers for docs/FORMAT.md 'Symlinks', format 2 (targets sealed to their location), made by "
               "make-vectors.py. Byte strings are hex. Never regenerate: a mismatch means the format changed.",
    "filesystemKey": FILESYSTEM_KEY.hex(),
    "vaultID": VAULT_ID.hex(),
    "directoryID": DIRECTORY_ID.hex(),
    "symlinkTargets": [
        vector(b"link", b"/"),
        vector("zo\u00eb \u6587".encode(), b"../relative/target"),
        vector(b"n" * 255, "/home/zo\u00eb/\u6587\u66f8".encode()),
        vector(b"longest inline", bytes((i * 7) % 251 + 1 if (i * 7) % 251 + 1 != 0x2f else 0x5f for i in range(2958))),
        vector(b"out of line", b"t/" * 1500, link_id=bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")),
    ],
}
print(json.dumps(vectors, indent=1))
