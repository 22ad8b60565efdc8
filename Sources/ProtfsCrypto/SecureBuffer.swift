import CSodium

/// A fixed-size byte buffer in guarded, locked memory (`sodium_malloc`), wiped when freed.
/// For secrets that are not 32-byte keys: passcodes, plaintext scratch space.
public final class SecureBuffer: @unchecked Sendable {
    public let count: Int
    private let base: UnsafeMutableRawPointer

    public init(count: Int) {
        Sodium.ensure()
        precondition(count >= 0)
        guard let p = sodium_malloc(max(count, 1)) else { fatalError("out of locked memory") }
        base = p
        self.count = count
        sodium_memzero(base, max(count, 1))
    }

    /// Copies `bytes` in; the caller wipes its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if let src = bytes.baseAddress, bytes.count > 0 { base.copyMemory(from: src, byteCount: bytes.count) }
    }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// Zeroes the contents now (the buffer stays usable).
    public func wipe() { sodium_memzero(base, max(count, 1)) }

    deinit { sodium_free(base) }  // sodium_free wipes before unmapping
}

/// Zeroes memory in a way the compiler cannot elide.
public func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let p = buffer.baseAddress, buffer.count > 0 else { return }
    sodium_memzero(p, buffer.count)
}

/// Zeroes an array's storage in place (for the few secrets that pass through arrays).
public func secureZero(_ array: inout [UInt8]) {
    array.withUnsafeMutableBytes { secureZero($0) }
}

extension SecureBuffer {
    /// Standard base64 (with padding) of the contents, in locked memory too: a secret printed
    /// as JSON never passes through a `String`.
    public func base64Encoded() -> SecureBuffer {
        Sodium.ensure()
        let variant = sodium_base64_VARIANT_ORIGINAL
        let capacity = sodium_base64_encoded_len(count, variant)  // with the terminating NUL
        let staging = SecureBuffer(count: capacity)
        staging.withUnsafeMutableBytes { out in
            withUnsafeBytes { input in
                _ = sodium_bin2base64(out.baseAddress!.assumingMemoryBound(to: CChar.self), capacity,
                                      input.baseAddress?.assumingMemoryBound(to: UInt8.self), count, variant)
            }
        }
        let encoded = SecureBuffer(count: capacity - 1)
        staging.withUnsafeBytes { source in
            encoded.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: source.prefix(capacity - 1))) }
        }
        return encoded
    }

    /// The first `length` bytes in a buffer of their own.
    public func prefix(_ length: Int) -> SecureBuffer {
        precondition(length <= count)
        return withUnsafeBytes { SecureBuffer(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
    }
}
