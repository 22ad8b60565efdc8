// OpenSSL's libcrypto: the content ciphers (ProtfsCrypto's ContentCipher: AES-256-GCM, and
// ChaCha20-Poly1305 under libsodium's HChaCha20 subkey, faster than libsodium's own), and the
// Secret Service's dh-ietf1024-sha256-aes128-cbc-pkcs7 session (Diffie-Hellman over a
// 1024-bit MODP group, HKDF-SHA256, AES-128-CBC).
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
