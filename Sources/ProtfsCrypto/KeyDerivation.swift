import CSodium

/// A `crypto_kdf` context: exactly eight bytes naming one purpose. Every derived key in
/// protfs has its own context, so no key is ever used for two things.
public struct KDFContext: Sendable, Hashable {
    let bytes: [CChar]

    public init(_ name: StaticString) {
        precondition(name.utf8CodeUnitCount == 8, "a KDF context is exactly 8 bytes")
        bytes = name.withUTF8Buffer { $0.map { CChar(bitPattern: $0) } }
    }
}

extension LockedKey {
    /// Derives the subkey `id` of this key for `context` (libsodium's crypto_kdf, BLAKE2b).
    public func deriveSubkey(id: UInt64 = 1, context: KDFContext) -> LockedKey {
        LockedKey.make { out in
            let rc = context.bytes.withUnsafeBufferPointer { ctx in
                crypto_kdf_derive_from_key(out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                                           id, ctx.baseAddress!, pointer)
            }
            precondition(rc == 0)
        }
    }
}
