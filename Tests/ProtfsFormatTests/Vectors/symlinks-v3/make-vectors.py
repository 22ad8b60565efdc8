#!/usr/bin/env python3
"""symlinks-v3.json: format-3 blobs computed from docs/FORMAT.md by libsodium through ctypes,
independently of the Swift code, with the keys and ids of ../symlinks-v2 and fixed nonces and
link ids. Run once; a mismatch in the tests later means the format changed."""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
from sodium_vectors import subkey, seal  # noqa: E402

with open(os.path.join(here, "..", "symlinks-v2", "symlinks-v2.json")) as formatTwo:
    known = json.load(formatTwo)
FILESYSTEM_KEY, VAULT_ID, DIRECTORY_ID = (bytes.fromhex(known[k]) for k in ("filesystemKey", "vaultID", "directoryID"))
OTHER_DIRECTORY_ID = bytes.fromhex("ffeeddccbbaa99887766554433221100")
NONCE = bytes(range(24))
KEY = subkey(FILESYSTEM_KEY, b"pfsymlnk")


def vector(target, link_id, places):
    """`places`: (directory id, name) pairs the blob opens at, in its order."""
    blob = bytes([len(places)])
    for directory_id, name in places:
        blob += seal(target, b"protfs symlink v3" + VAULT_ID + link_id + directory_id + name, KEY, NONCE)
    return {"target": target.hex(), "backingTarget": "3.@" + link_id.hex(), "blob": blob.hex(),
            "places": [{"directoryID": d.hex(), "name": n.hex()} for d, n in places]}


vectors = {
    "comment": "Known answers for docs/FORMAT.md 'Symlinks', format 3 (targets sealed to their location in the "
               "symlink's own blob), made by make-vectors.py. Byte strings are hex. Never regenerate: a mismatch "
               "means the format changed.",
    "filesystemKey": FILESYSTEM_KEY.hex(),
    "vaultID": VAULT_ID.hex(),
    "symlinkTargets": [
        vector(b"/", bytes.fromhex("0102030405060708090a0b0c0d0e0f10"), [(DIRECTORY_ID, b"link")]),
        vector("/home/zo\u00eb/\u6587\u66f8".encode(), bytes.fromhex("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"),
               [(DIRECTORY_ID, b"n" * 255)]),
        vector(b"t/" * 2047 + b"t", bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0"), [(DIRECTORY_ID, b"longest")]),
        # Mid-rename: sealed for its old place and its new one.
        vector(b"../relative/target", bytes.fromhex("102030405060708090a0b0c0d0e0f000"),
               [(DIRECTORY_ID, b"before"), (OTHER_DIRECTORY_ID, "zo\u00eb \u6587".encode())]),
    ],
}
print(json.dumps(vectors, indent=1))
