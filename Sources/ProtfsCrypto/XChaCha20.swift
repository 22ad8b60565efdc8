import CSodium

/// The raw XChaCha20 stream, for the deterministic (SIV) name encryption only: its nonce is
/// the synthetic IV, never a fixed value.
public enum XChaCha20 {
    public static let nonceByteCount = 24

    public static func xor(_ input: [UInt8], nonce: [UInt8], key: SymmetricKey) -> [UInt8] {
        Sodium.ensure()
        precondition(nonce.count == nonceByteCount)
        var out = [UInt8](repeating: 0, count: input.count)
        guard !input.isEmpty else { return out }
        let rc = input.withUnsafeBufferPointer { i in
            nonce.withUnsafeBufferPointer { n in
                out.withUnsafeMutableBufferPointer { o in
                    crypto_stream_xchacha20_xor(o.baseAddress!, i.baseAddress!, UInt64(i.count), n.baseAddress!, key.pointer)
                }
            }
        }
        precondition(rc == 0)
        return out
    }
}
