import COpenSSL
import ProtfsCrypto

/// The key of a `dh-ietf1024-sha256-aes128-cbc-pkcs7` session (docs/SECRETS.md): Diffie-Hellman
/// over the 1024-bit MODP group of RFC 2409 (group 2, generator 2), the shared value as 128
/// big-endian bytes, HKDF-SHA256 without salt or info to 16 bytes, the AES-128 key. Through
/// OpenSSL's libcrypto; the private exponent, the shared value and the key never leave it or
/// locked memory.
struct DiffieHellmanSession {
    static let primeBytes: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34,
        0xC4, 0xC6, 0x62, 0x8B, 0x80, 0xDC, 0x1C, 0xD1, 0x29, 0x02, 0x4E, 0x08, 0x8A, 0x67, 0xCC, 0x74,
        0x02, 0x0B, 0xBE, 0xA6, 0x3B, 0x13, 0x9B, 0x22, 0x51, 0x4A, 0x08, 0x79, 0x8E, 0x34, 0x04, 0xDD,
        0xEF, 0x95, 0x19, 0xB3, 0xCD, 0x3A, 0x43, 0x1B, 0x30, 0x2B, 0x0A, 0x6D, 0xF2, 0x5F, 0x14, 0x37,
        0x4F, 0xE1, 0x35, 0x6D, 0x6D, 0x51, 0xC2, 0x45, 0xE4, 0x85, 0xB5, 0x76, 0x62, 0x5E, 0x7E, 0xC6,
        0xF4, 0x4C, 0x42, 0xE9, 0xA6, 0x37, 0xED, 0x6B, 0x0B, 0xFF, 0x5C, 0xB6, 0xF4, 0x06, 0xB7, 0xED,
        0xEE, 0x38, 0x6B, 0xFB, 0x5A, 0x89, 0x9F, 0xA5, 0xAE, 0x9F, 0x24, 0x11, 0x7C, 0x4B, 0x1F, 0xE6,
        0x49, 0x28, 0x66, 0x51, 0xEC, 0xE6, 0x53, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    ]
    static let keyByteCount = 16

    /// Our public value (what `OpenSession` returns), big-endian.
    let publicKey: [UInt8]
    /// The AES-128 key, in locked memory.
    let key: SecureBuffer

    /// nil when `peerPublicKey` is not a valid public value of the group (not in 2 ... p - 2).
    init?(peerPublicKey: [UInt8]) {
        guard let context = BN_CTX_secure_new() else { return nil }
        defer { BN_CTX_free(context) }
        guard let prime = BN_bin2bn(Self.primeBytes, Int32(Self.primeBytes.count), nil) else { return nil }
        defer { BN_free(prime) }
        guard !peerPublicKey.isEmpty, peerPublicKey.count <= Self.primeBytes.count,
              let peer = BN_bin2bn(peerPublicKey, Int32(peerPublicKey.count), nil) else { return nil }
        defer { BN_free(peer) }
        // 1 < peer < p - 1: the other values give away the shared secret.
        guard let highest = BN_dup(prime), BN_sub_word(highest, 1) == 1 else { return nil }
        defer { BN_free(highest) }
        guard BN_is_zero(peer) == 0, BN_is_one(peer) == 0, BN_cmp(peer, highest) < 0 else { return nil }

        guard let exponent = BN_secure_new(), let generator = BN_new(), let ours = BN_new(), let shared = BN_secure_new() else {
            return nil
        }
        defer {
            BN_clear_free(exponent)
            BN_free(generator)
            BN_free(ours)
            BN_clear_free(shared)
        }
        BN_set_flags(exponent, Int32(BN_FLG_CONSTTIME))
        guard BN_priv_rand(exponent, 1024, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1, BN_set_word(generator, 2) == 1,
              BN_mod_exp(ours, generator, exponent, prime, context) == 1,
              BN_mod_exp(shared, peer, exponent, prime, context) == 1 else { return nil }
        var publicBytes = [UInt8](repeating: 0, count: Self.primeBytes.count)
        guard BN_bn2binpad(ours, &publicBytes, Int32(publicBytes.count)) == Int32(publicBytes.count) else { return nil }
        let sharedBytes = SecureBuffer(count: Self.primeBytes.count)
        defer { sharedBytes.wipe() }
        let written = sharedBytes.withUnsafeMutableBytes { out in
            BN_bn2binpad(shared, out.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(out.count))
        }
        guard written == Int32(Self.primeBytes.count), let key = Self.hkdf(sharedBytes) else { return nil }
        publicKey = publicBytes
        self.key = key
    }

    /// HKDF-SHA256 (RFC 5869) with no salt (so a key of zeros) and no info, 16 bytes.
    private static func hkdf(_ secret: SecureBuffer) -> SecureBuffer? {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        let key = SecureBuffer(count: keyByteCount)
        var length = keyByteCount
        let derived = secret.withUnsafeBytes { input in
            key.withUnsafeMutableBytes { out in
                EVP_PKEY_derive_init(context) == 1 && EVP_PKEY_CTX_set_hkdf_md(context, EVP_sha256()) == 1
                    && EVP_PKEY_CTX_set1_hkdf_key(context, input.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1
                    && EVP_PKEY_derive(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1
            }
        }
        guard derived, length == keyByteCount else {
            key.wipe()
            return nil
        }
        return key
    }
}

/// AES-128-CBC with PKCS#7 padding under a session key, as the Secret Service's encrypted
/// sessions carry secrets: `parameters` is the IV.
enum SessionCipher {
    static let blockByteCount = 16

    /// The ciphertext of `plaintext` and a fresh random IV.
    static func encrypt(_ plaintext: SecureBuffer, key: SecureBuffer) -> (iv: [UInt8], ciphertext: [UInt8])? {
        let iv = SecureRandom.bytes(blockByteCount)
        var out = [UInt8](repeating: 0, count: plaintext.count + blockByteCount)
        guard let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var written: Int32 = 0, tail: Int32 = 0
        let sealed = key.withUnsafeBytes { k in
            plaintext.withUnsafeBytes { p in
                out.withUnsafeMutableBufferPointer { o in
                    EVP_EncryptInit_ex(context, EVP_aes_128_cbc(), nil, k.baseAddress!.assumingMemoryBound(to: UInt8.self), iv) == 1
                        && EVP_EncryptUpdate(context, o.baseAddress!, &written, p.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                             Int32(p.count)) == 1
                        && EVP_EncryptFinal_ex(context, o.baseAddress! + Int(written), &tail) == 1
                }
            }
        }
        guard sealed else { return nil }
        return (iv, Array(out.prefix(Int(written + tail))))
    }

    /// The plaintext in locked memory; nil for a wrong IV length, a ciphertext that is not
    /// whole blocks, or bad padding.
    static func decrypt(_ ciphertext: UnsafeRawBufferPointer, iv: [UInt8], key: SecureBuffer) -> SecureBuffer? {
        guard iv.count == blockByteCount, ciphertext.count > 0, ciphertext.count % blockByteCount == 0,
              let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let staging = SecureBuffer(count: ciphertext.count + blockByteCount)
        var written: Int32 = 0, tail: Int32 = 0
        let opened = key.withUnsafeBytes { k in
            staging.withUnsafeMutableBytes { o in
                let out = o.baseAddress!.assumingMemoryBound(to: UInt8.self)
                return EVP_DecryptInit_ex(context, EVP_aes_128_cbc(), nil, k.baseAddress!.assumingMemoryBound(to: UInt8.self), iv) == 1
                    && EVP_DecryptUpdate(context, out, &written, ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                         Int32(ciphertext.count)) == 1
                    && EVP_DecryptFinal_ex(context, out + Int(written), &tail) == 1
            }
        }
        defer { staging.wipe() }
        guard opened else { return nil }
        return staging.prefix(Int(written + tail))
    }
}
