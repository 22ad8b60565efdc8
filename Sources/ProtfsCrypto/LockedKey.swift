import CSodium

/// A 32-byte secret key in a locked slab slot (`KeySlabPool`). A reference, not a value
/// (unlike CryptoKit's `SymmetricKey`): copies share the one slot, which is never copied out.
/// Immutable once made; the slot is wiped and returned when the last reference goes, so
/// "wiping a key" means dropping every reference.
public final class LockedKey: @unchecked Sendable {
    public static let byteCount = 32
    private let slot: UnsafeMutableRawPointer

    private init(adopting slot: UnsafeMutableRawPointer) { self.slot = slot }

    /// Makes a key by letting `fill` write its 32 bytes; if `fill` throws, the slot is
    /// wiped and released and the error passes through.
    public static func make<E: Error>(_ fill: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) -> LockedKey {
        let slot = KeySlabPool.shared.allocate()
        do {
            try fill(UnsafeMutableRawBufferPointer(start: slot, count: byteCount))
        } catch {
            KeySlabPool.shared.release(slot)
            throw error
        }
        return LockedKey(adopting: slot)
    }

    /// A fresh random key.
    public static func random() -> LockedKey {
        make { randombytes_buf($0.baseAddress!, byteCount) }
    }

    /// Copies 32 bytes in; the caller wipes its own copy.
    public static func copying(_ bytes: UnsafeRawBufferPointer) throws(CryptoError) -> LockedKey {
        guard bytes.count == byteCount else { throw .invalidLength }
        return make { $0.copyMemory(from: bytes) }
    }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: slot, count: Self.byteCount))
    }

    var pointer: UnsafePointer<UInt8> { UnsafePointer(slot.assumingMemoryBound(to: UInt8.self)) }

    /// Constant-time equality (for checks such as "the private key matches the public key").
    public func isEqual(to other: LockedKey) -> Bool {
        sodium_memcmp(slot, other.slot, Self.byteCount) == 0
    }

    deinit { KeySlabPool.shared.release(slot) }
}
