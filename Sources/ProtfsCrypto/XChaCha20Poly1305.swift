import CSodium

/// The one AEAD of the format: XChaCha20-Poly1305-IETF with a random 192-bit nonce.
/// Sealed layout: nonce (24) || ciphertext || tag (16).
public enum XChaCha20Poly1305 {
    public static let nonceByteCount = 24
    public static let tagByteCount = 16
    public static let overhead = nonceByteCount + tagByteCount

    /// Seals `plaintext` into `output` (exactly `plaintext.count + overhead` bytes) with a
    /// fresh random nonce. No allocation: the hot path for content chunks.
    public static func seal(_ plaintext: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer,
                            with key: LockedKey, into output: UnsafeMutableRawBufferPointer) {
        Sodium.ensure()
        precondition(output.count == plaintext.count + overhead, "sealed buffer has the wrong size")
        let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        randombytes_buf(out, nonceByteCount)
        var written: UInt64 = 0
        let rc = crypto_aead_xchacha20poly1305_ietf_encrypt(
            out + nonceByteCount, &written,
            plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
            ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
            nil, out, key.pointer)
        precondition(rc == 0 && written == UInt64(plaintext.count + tagByteCount))
    }

    /// Opens `sealed` into `output` (exactly `sealed.count - overhead` bytes). On failure
    /// `output` is zeroed and `.authenticationFailed` thrown.
    public static func open(_ sealed: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer,
                            with key: LockedKey, into output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        Sodium.ensure()
        guard sealed.count >= overhead, output.count == sealed.count - overhead else { throw .invalidLength }
        let input = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var written: UInt64 = 0
        let rc = crypto_aead_xchacha20poly1305_ietf_decrypt(
            output.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
            input + nonceByteCount, UInt64(sealed.count - nonceByteCount),
            ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
            input, key.pointer)
        guard rc == 0 else {
            secureZero(output)
            throw .authenticationFailed
        }
    }

    /// Seals public-size metadata (names of xattrs, symlink targets, hints).
    public static func seal(_ plaintext: [UInt8], authenticating ad: [UInt8], with key: LockedKey) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plaintext.count + overhead)
        plaintext.withUnsafeBytes { p in
            ad.withUnsafeBytes { a in
                out.withUnsafeMutableBytes { seal(p, authenticating: a, with: key, into: $0) }
            }
        }
        return out
    }

    /// Opens metadata sealed by `seal(_:authenticating:with:)`.
    public static func open(_ sealed: [UInt8], authenticating ad: [UInt8], with key: LockedKey) throws -> [UInt8] {
        guard sealed.count >= overhead else { throw CryptoError.invalidLength }
        var out = [UInt8](repeating: 0, count: sealed.count - overhead)
        try sealed.withUnsafeBytes { s in
            try ad.withUnsafeBytes { a in
                try out.withUnsafeMutableBytes { o in try open(s, authenticating: a, with: key, into: o) }
            }
        }
        return out
    }

    /// Wraps a key: the sealed form is 72 bytes, and the key never passes through an array.
    public static func wrap(_ secret: LockedKey, authenticating ad: [UInt8], with key: LockedKey) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: LockedKey.byteCount + overhead)
        secret.withUnsafeBytes { p in
            ad.withUnsafeBytes { a in
                out.withUnsafeMutableBytes { seal(p, authenticating: a, with: key, into: $0) }
            }
        }
        return out
    }

    /// Unwraps a key sealed by `wrap`, straight into a locked slot.
    public static func unwrap(_ sealed: [UInt8], authenticating ad: [UInt8], with key: LockedKey) throws -> LockedKey {
        guard sealed.count == LockedKey.byteCount + overhead else { throw CryptoError.invalidLength }
        return try LockedKey.make { slot in
            try sealed.withUnsafeBytes { s in
                try ad.withUnsafeBytes { a in try open(s, authenticating: a, with: key, into: slot) }
            }
        }
    }
}
