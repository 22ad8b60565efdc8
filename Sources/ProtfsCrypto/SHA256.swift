import CSodium

/// SHA-256 (libsodium's `crypto_hash_sha256`), for public identifiers only: the control
/// socket is named after a hash of the mount point. Never for keys or MACs.
public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        Sodium.ensure()
        var digest = [UInt8](repeating: 0, count: byteCount)
        digest.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                _ = crypto_hash_sha256(out.baseAddress!, input.baseAddress, UInt64(input.count))
            }
        }
        return digest
    }
}
