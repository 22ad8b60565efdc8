import ProtfsSystem

/// Serialises the changes of one object's `user.*` attributes: each is a read-modify-write
/// of its packed blob (`ExtendedAttributeStore`), so two `setxattr`s of different names on
/// one file at once would otherwise lose one. Reads need no lock: a blob is replaced whole.
/// Objects share a lock by their inode (hard links share the inode, hence the lock).
final class AttributeUpdateLocks: Sendable {
    private static let stripeCount = 64
    private let stripes = (0..<AttributeUpdateLocks.stripeCount).map { _ in ReadWriteLock() }

    func updating<R, E: Error>(_ identity: BackingIdentity, _ body: () throws(E) -> R) throws(E) -> R {
        try stripes[identity.stripe(among: Self.stripeCount)].withExclusive(body)
    }
}
