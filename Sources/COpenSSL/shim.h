// OpenSSL's libcrypto, for the one construction libsodium lacks: the Secret Service's
// dh-ietf1024-sha256-aes128-cbc-pkcs7 session (Diffie-Hellman over a 1024-bit MODP group,
// HKDF-SHA256, AES-128-CBC). Only ProtfsSecretService links it.
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
