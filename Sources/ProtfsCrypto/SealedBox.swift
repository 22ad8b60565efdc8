import CSodium

/// libsodium's sealed box (an ephemeral X25519 key, then XSalsa20-Poly1305) of a 32-byte key
/// to a public key: the recovery key's public half seals the device key and the passcode
/// secrets while its private half stays offline.
public enum SealedBox {
    /// `crypto_box_SEALBYTES`: the ephemeral public key and the tag.
    public static let overheadByteCount = 48
    public static let byteCount = LockedKey.byteCount + overheadByteCount

    public static func seal(_ key: LockedKey, to publicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        Sodium.ensure()
        guard publicKey.count == X25519.publicKeyByteCount else { throw .invalidLength }
        var sealed = [UInt8](repeating: 0, count: byteCount)
        let rc = sealed.withUnsafeMutableBufferPointer { out in
            publicKey.withUnsafeBufferPointer { pk in
                crypto_box_seal(out.baseAddress!, key.pointer, UInt64(LockedKey.byteCount), pk.baseAddress!)
            }
        }
        precondition(rc == 0)
        return sealed
    }

    /// The key sealed in `sealed`; `authenticationFailed` for another private key or a
    /// tampered box.
    public static func open(_ sealed: [UInt8], privateKey: LockedKey) throws(CryptoError) -> LockedKey {
        Sodium.ensure()
        guard sealed.count == byteCount else { throw .invalidLength }
        let publicKey = X25519.publicKey(for: privateKey)
        return try LockedKey.make { (out) throws(CryptoError) in
            let rc = sealed.withUnsafeBufferPointer { box in
                publicKey.withUnsafeBufferPointer { pk in
                    crypto_box_seal_open(out.baseAddress!.assumingMemoryBound(to: UInt8.self), box.baseAddress!, UInt64(byteCount),
                                         pk.baseAddress!, privateKey.pointer)
                }
            }
            guard rc == 0 else { throw .authenticationFailed }
        }
    }
}
