#!/usr/bin/env python3
"""xattrs-packed.json: blobs of packed xattrs (docs/FORMAT.md "xattrs") computed from the
document by libsodium through ctypes, independently of the Swift code, with the filesystem key
of ../names-v1.json and a fixed nonce. Run once; a mismatch in the tests later means the
format changed."""
import json, os, struct, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
from sodium_vectors import subkey, seal  # noqa: E402

with open(os.path.join(here, "..", "names-v1.json")) as names:
    FILESYSTEM_KEY = bytes.fromhex(json.load(names)["filesystemKey"])
OBJECT_ID = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
NONCE = bytes(range(24))
KEY = subkey(FILESYSTEM_KEY, b"pfxatval")


def vector(attributes):
    """`attributes`: (NAME without "user.", value) pairs."""
    entries = sorted(attributes)
    plaintext = bytes([1]) + struct.pack("<H", len(entries))
    for name, value in entries:
        plaintext += bytes([len(name)]) + name + struct.pack("<H", len(value)) + value
    blob = seal(plaintext, OBJECT_ID + b"\0protfs xattrs v1", KEY, NONCE)
    return {"attributes": [{"name": (b"user." + n).hex(), "value": v.hex()} for n, v in entries], "blob": blob.hex()}


vectors = {
    "comment": "Known answers for docs/FORMAT.md 'xattrs', the packed form, made by make-vectors.py. Byte strings "
               "are hex. Never regenerate: a mismatch means the format changed.",
    "filesystemKey": FILESYSTEM_KEY.hex(),
    "objectID": OBJECT_ID.hex(),
    "blobs": [
        vector([(b"only", b"")]),
        vector([(b"mime_type", b"text/plain"), (b"xdg.origin.url", b"https://example.org/"),
                ("zo\u00eb".encode(), b"\x00\xff"), (b"a" * 159, b"v" * 1024), (bytes([0xFF, 0xFE]), b"not UTF-8")]),
    ],
}
print(json.dumps(vectors, indent=1))
