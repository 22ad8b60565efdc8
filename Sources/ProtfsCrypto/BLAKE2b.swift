import CSodium

/// BLAKE2b (libsodium's generichash), keyed or not, fed in parts so that callers can hash
/// structured input (context, ids, lengths) without first concatenating it into an array.
public struct BLAKE2b: ~Copyable {
    private let state: UnsafeMutableRawPointer
    private let stateSize: Int
    public let outputByteCount: Int

    public init(key: LockedKey? = nil, outputByteCount: Int) {
        Sodium.ensure()
        precondition(outputByteCount >= 16 && outputByteCount <= 64)
        stateSize = crypto_generichash_statebytes()
        state = UnsafeMutableRawPointer.allocate(byteCount: stateSize, alignment: 64)
        self.outputByteCount = outputByteCount
        let st = OpaquePointer(state)
        if let key {
            crypto_generichash_init(st, key.pointer, LockedKey.byteCount, outputByteCount)
        } else {
            crypto_generichash_init(st, nil, 0, outputByteCount)
        }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        crypto_generichash_update(OpaquePointer(state),
                                  bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    public mutating func update(_ key: LockedKey) { key.withUnsafeBytes { update($0) } }

    /// Appends a little-endian integer (lengths and indices).
    public mutating func update<T: FixedWidthInteger>(littleEndian value: T) {
        withUnsafeBytes(of: value.littleEndian) { update($0) }
    }

    /// Finishes into a public digest (MACs, SIVs, hashes).
    public consuming func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: outputByteCount)
        out.withUnsafeMutableBytes { finish(into: $0) }
        return out
    }

    /// Finishes into a secret 32-byte key.
    public consuming func finalizeKey() -> LockedKey {
        precondition(outputByteCount == LockedKey.byteCount)
        return LockedKey.make { finish(into: $0) }
    }

    private func finish(into out: UnsafeMutableRawBufferPointer) {
        crypto_generichash_final(OpaquePointer(state),
                                 out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
    }

    deinit {
        sodium_memzero(state, stateSize)
        state.deallocate()
    }

    /// One-shot keyed MAC over the concatenation of `parts`.
    public static func mac(key: LockedKey?, outputByteCount: Int = 32, _ parts: [UInt8]...) -> [UInt8] {
        var h = BLAKE2b(key: key, outputByteCount: outputByteCount)
        for p in parts { h.update(p) }
        return h.finalize()
    }
}
