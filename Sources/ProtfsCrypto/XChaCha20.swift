import CSodium

/// The raw XChaCha20 stream, where a MAC already authenticates the bytes and its nonce is
/// never a fixed value: the synthetic IV of the name encryption, and the random nonce that
/// hides the class of a header slot or directory record.
public enum XChaCha20 {
    public static let nonceByteCount = 24

    public static func xor(_ input: [UInt8], nonce: [UInt8], key: LockedKey) -> [UInt8] {
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
