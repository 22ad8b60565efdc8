import CSodium

/// X25519 for the `completeUnlessOpen` class: its public key lets files be created (their
/// keys wrapped) while the private key is wiped.
public enum X25519 {
    public static let publicKeyByteCount = 32

    /// A fresh private scalar (clamped by the scalar multiplication itself).
    public static func generatePrivateKey() -> LockedKey { LockedKey.random() }

    public static func publicKey(for privateKey: LockedKey) -> [UInt8] {
        Sodium.ensure()
        var pk = [UInt8](repeating: 0, count: publicKeyByteCount)
        let rc = pk.withUnsafeMutableBufferPointer { crypto_scalarmult_base($0.baseAddress!, privateKey.pointer) }
        precondition(rc == 0)
        return pk
    }

    /// The shared secret of `privateKey` and `peerPublicKey`; an all-zero result (a
    /// low-order peer key) is refused.
    public static func sharedSecret(privateKey: LockedKey, peerPublicKey: [UInt8]) throws(CryptoError) -> LockedKey {
        Sodium.ensure()
        guard peerPublicKey.count == publicKeyByteCount else { throw .invalidLength }
        return try LockedKey.make { (out) throws(CryptoError) in
            let rc = peerPublicKey.withUnsafeBufferPointer {
                crypto_scalarmult(out.baseAddress!.assumingMemoryBound(to: UInt8.self), privateKey.pointer, $0.baseAddress!)
            }
            guard rc == 0 else { throw .weakPublicKey }  // libsodium returns -1 for an all-zero output
        }
    }
}
