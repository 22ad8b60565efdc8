"""What read-archive.py and craft-archive.py share: the key derivation of a backup archive,
written from docs/BACKUP.md alone, on the libsodium helpers the vector generators use."""
import ctypes, hashlib, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "ProtfsFormatTests", "Vectors"))
from sodium_vectors import sodium, subkey, public_key, seal as seal_with_nonce  # noqa: E402

CHUNK = 65536
CHECK_CONTEXT = b"protfs backup passphrase check v1"
KEYBAG_CONTEXT = b"protfs backup keybag v1"


def keys(passphrase, header):
    """The chunk key and the backup keybag key of a 60-byte header prefix."""
    ops, mem = int.from_bytes(header[12:20], "little"), int.from_bytes(header[20:28], "little")
    stretched = ctypes.create_string_buffer(32)
    assert sodium.crypto_pwhash(stretched, ctypes.c_ulonglong(32), passphrase, ctypes.c_ulonglong(len(passphrase)),
                                header[28:44], ctypes.c_ulonglong(ops), ctypes.c_size_t(mem), 2) == 0
    return subkey(stretched.raw, b"pfbkstrm"), subkey(stretched.raw, b"pfbkkbag")


def check(stream_key, header):
    return hashlib.blake2b(CHECK_CONTEXT + header, digest_size=32, key=stream_key).digest()


def seal(plaintext, associated_data, key):
    """XChaCha20-Poly1305 under a random nonce: nonce || ciphertext || tag."""
    return seal_with_nonce(plaintext, associated_data, key, os.urandom(24))


def open_sealed(sealed, associated_data, key):
    out = ctypes.create_string_buffer(max(len(sealed) - 40, 1))
    out_length = ctypes.c_ulonglong()
    if sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
            out, ctypes.byref(out_length), None, sealed[24:], ctypes.c_ulonglong(len(sealed) - 24),
            associated_data, ctypes.c_ulonglong(len(associated_data)), sealed[:24], key) != 0:
        sys.exit("a sealed part does not open")
    return out.raw[:out_length.value]


def passphrase_in(path):
    return open(path, "rb").read().split(b"\n")[0]
