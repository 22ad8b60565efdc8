"""What read-archive.py and craft-archive.py share: libsodium through ctypes and the key
derivation of a backup archive, written from docs/BACKUP.md alone."""
import ctypes, hashlib, os, sys

sodium = ctypes.CDLL("libsodium.so.23")
assert sodium.sodium_init() >= 0
CHUNK = 65536
CHECK_CONTEXT = b"protfs backup passphrase check v1"
KEYBAG_CONTEXT = b"protfs backup keybag v1"


def subkey(key, context):
    out = ctypes.create_string_buffer(32)
    assert sodium.crypto_kdf_derive_from_key(out, 32, ctypes.c_uint64(1), context, key) == 0
    return out.raw


def keys(passphrase, header):
    """The chunk key and the backup keybag key of a 60-byte header prefix."""
    ops, mem = int.from_bytes(header[12:20], "little"), int.from_bytes(header[20:28], "little")
    stretched = ctypes.create_string_buffer(32)
    assert sodium.crypto_pwhash(stretched, ctypes.c_ulonglong(32), passphrase, ctypes.c_ulonglong(len(passphrase)),
                                header[28:44], ctypes.c_ulonglong(ops), ctypes.c_size_t(mem), 2) == 0
    return subkey(stretched.raw, b"pfbkstrm"), subkey(stretched.raw, b"pfbkkbag")


def check(stream_key, header):
    return hashlib.blake2b(CHECK_CONTEXT + header, digest_size=32, key=stream_key).digest()


def public_key(private):
    out = ctypes.create_string_buffer(32)
    assert sodium.crypto_scalarmult_base(out, private) == 0
    return out.raw


def seal(plaintext, associated_data, key):
    nonce = os.urandom(24)
    out = ctypes.create_string_buffer(len(plaintext) + 16)
    out_length = ctypes.c_ulonglong()
    assert sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
        out, ctypes.byref(out_length), plaintext, ctypes.c_ulonglong(len(plaintext)),
        associated_data, ctypes.c_ulonglong(len(associated_data)), None, nonce, key) == 0
    return nonce + out.raw[:out_length.value]


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
