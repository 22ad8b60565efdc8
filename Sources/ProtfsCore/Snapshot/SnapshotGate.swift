import ProtfsSystem

/// What lets a backup of a mounted vault be a consistent snapshot (docs/BACKUP.md, "A
/// mounted vault"). Changes to the namespace (creating, linking, renaming, removing, a
/// directory's re-class) and to the item records hold the namespace shared, and a backup
/// holds it exclusively for its whole walk, so the walk sees every object exactly once. A
/// change to one object's bytes, size or xattrs (a write, truncation, re-class, xattr)
/// holds that object's stripe shared, and the backup holds it exclusively while it copies
/// the object, so each object is copied whole, before or after each change, never during.
///
/// Ordering, so nothing waits in a circle: a request takes at most one of these, outside
/// the lock controller's hold (a lock transition never waits for a backup); the backup
/// takes the namespace, then one stripe at a time, and nothing else while it holds them.
/// Shared holds never nest on one thread (the locks prefer writers).
public final class SnapshotGate: Sendable {
    /// Objects share a stripe by their inode: a write waits only when the backup copies an
    /// object of its stripe, one in 64.
    static let stripeCount = 64

    private let namespace = ReadWriteLock()
    private let stripes = (0..<SnapshotGate.stripeCount).map { _ in ReadWriteLock() }

    public init() {}

    /// A namespace change: waits while a backup walks.
    public func changingNamespace<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try namespace.withShared(body)
    }

    /// A change of the object `identity`: waits while a backup copies it (or a neighbour).
    public func changing<R, E: Error>(_ identity: BackingIdentity, _ body: () throws(E) -> R) throws(E) -> R {
        try stripe(of: identity).withShared(body)
    }

    /// The backup's walk: no namespace change until it ends.
    public func walking<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try namespace.withExclusive(body)
    }

    /// The backup's copy of one object: no change to it until it ends.
    public func copying<R, E: Error>(_ identity: BackingIdentity, _ body: () throws(E) -> R) throws(E) -> R {
        try stripe(of: identity).withExclusive(body)
    }

    private func stripe(of identity: BackingIdentity) -> ReadWriteLock {
        stripes[identity.stripe(among: Self.stripeCount)]
    }
}
