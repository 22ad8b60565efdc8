"""The libsodium primitives (through ctypes) that the make-vectors.py scripts of this folder
share: an implementation of docs/FORMAT.md's constructions independent of protfs's Swift one.
Each script adds this folder to its import path."""
import base64, ctypes

sodium = ctypes.CDLL("libsodium.so.23")
assert sodium.sodium_init() >= 0


def subkey(key, context):
    """crypto_kdf subkey 1 of `key` under the 8-byte `context`."""
    out = ctypes.create_string_buffer(32)
    assert sodium.crypto_kdf_derive_from_key(out, 32, ctypes.c_uint64(1), context, key) == 0
    return out.raw


def seal(plaintext, associated_data, key, nonce):
    """XChaCha20-Poly1305: nonce || ciphertext || tag."""
    out = ctypes.create_string_buffer(len(plaintext) + 16)
    out_length = ctypes.c_ulonglong()
    assert sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
        out, ctypes.byref(out_length), plaintext, ctypes.c_ulonglong(len(plaintext)),
        associated_data, ctypes.c_ulonglong(len(associated_data)), None, nonce, key) == 0
    return nonce + out.raw[:out_length.value]


def public_key(private):
    """X25519 public key of `private`."""
    out = ctypes.create_string_buffer(32)
    assert sodium.crypto_scalarmult_base(out, private) == 0
    return out.raw


def base64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
