import CFuse
import ProtfsCore
import Synchronization

/// The kernel's node ids and their lookup counts. A backing object seen under several names
/// (hard links) gets one node id; a node id lives until the kernel forgets every lookup.
/// Each node holds a backing descriptor, so the table also knows which ids were used least
/// recently: the ones to ask the kernel to forget when descriptors run short.
final class InodeTable: Sendable {
    static let rootID: fuse_ino_t = 1

    private struct Entry {
        let node: BackingNode
        var lookups: UInt64
        /// The table's clock when the kernel last named this id.
        var lastUse: UInt64
    }

    private struct State {
        var byID: [fuse_ino_t: Entry] = [:]
        var byIdentity: [BackingNode.Identity: fuse_ino_t] = [:]
        var nextID: fuse_ino_t = InodeTable.rootID + 1
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Above this many ids, the crowding handler is called after each new one.
    let capacity: Int
    private let crowdingHandler = Mutex<(@Sendable () -> Void)?>(nil)
    private let releaser: NodeReleaser

    init(root: BackingNode, capacity: Int = .max) {
        self.capacity = capacity
        releaser = NodeReleaser(besideTableOf: capacity)
        state.withLock { s in
            // The root is never forgotten.
            s.byID[Self.rootID] = Entry(node: root, lookups: .max / 2, lastUse: 0)
            s.byIdentity[root.identity] = Self.rootID
        }
    }

    func node(_ id: fuse_ino_t) -> BackingNode? {
        state.withLock { s in
            s.clock += 1
            s.byID[id]?.lastUse = s.clock
            return s.byID[id]?.node
        }
    }

    /// Counts one lookup of `node`, returning its node id (an existing one for a known
    /// backing object: the new descriptor is then simply dropped).
    func remember(_ node: BackingNode) -> fuse_ino_t { rememberKept(node).id }

    /// `remember`, also returning the node the table keeps for that id (`node` itself, or
    /// the one it already had for the same backing object).
    func rememberKept(_ node: BackingNode) -> (id: fuse_ino_t, node: BackingNode) {
        let (id, kept, count) = state.withLock { s in
            s.clock += 1
            if let id = s.byIdentity[node.identity] {
                s.byID[id]!.lookups += 1
                s.byID[id]!.lastUse = s.clock
                return (id, s.byID[id]!.node, 0)
            }
            let id = s.nextID
            s.nextID += 1
            s.byID[id] = Entry(node: node, lookups: 1, lastUse: s.clock)
            s.byIdentity[node.identity] = id
            return (id, node, s.byID.count)
        }
        if count > capacity, let handler = crowdingHandler.withLock({ $0 }) { handler() }
        // A symlink's target is sealed to its location: the name it was just found under.
        if kept !== node, let location = node.symlinkLocation { kept.symlinkLocation = location }
        // A file's next files are read ahead from the directory it was just found in.
        if kept !== node, let directory = node.directory { kept.directory = directory }
        return (id, kept)
    }

    /// Makes the id that names the backing object `identity` name `node` instead (a symlink
    /// that a rename made anew), and lets the former node go; for the same object, takes
    /// `node`'s symlink location (a symlink renamed in place).
    func replaceNode(of identity: BackingNode.Identity, with node: BackingNode) {
        if identity == node.identity {
            let kept = state.withLock { s in s.byIdentity[identity].flatMap { s.byID[$0]?.node } }
            if let kept, kept !== node, let location = node.symlinkLocation { kept.symlinkLocation = location }
            return
        }
        let released: BackingNode? = state.withLock { s in
            guard let id = s.byIdentity[identity], s.byIdentity[node.identity] == nil, let entry = s.byID[id] else { return nil }
            s.byIdentity[identity] = nil
            s.byIdentity[node.identity] = id
            s.byID[id] = Entry(node: node, lookups: entry.lookups, lastUse: entry.lastUse)
            return entry.node
        }
        if let released { releaser.release(released) }
    }

    /// Lets go of a node the kernel never knew (a removed directory's record) on the
    /// releaser's queue: its last close is when ext4 frees it.
    func releaseLater(_ node: BackingNode) {
        releaser.release(node)
    }

    func whenCrowded(_ handler: @escaping @Sendable () -> Void) {
        crowdingHandler.withLock { $0 = handler }
    }

    /// Up to `count` ids, least recently used first, never the root nor a node `inUse` says
    /// is busy.
    func leastRecentlyUsed(_ count: Int, inUse: (BackingNode) -> Bool) -> [fuse_ino_t] {
        let candidates = state.withLock { s in
            s.byID.compactMap { id, entry in id == Self.rootID ? nil : (id, entry.lastUse, entry.node) }
        }
        return candidates.filter { !inUse($0.2) }.sorted { $0.1 < $1.1 }.prefix(count).map(\.0)
    }

    func forget(_ id: fuse_ino_t, count: UInt64) {
        // The node (and its descriptor) is released outside the table's lock, on the
        // releaser's queue.
        let released: BackingNode? = state.withLock { s in
            guard id != Self.rootID, var entry = s.byID[id] else { return nil }
            entry.lookups -= min(count, entry.lookups)
            if entry.lookups > 0 {
                s.byID[id] = entry
                return nil
            }
            s.byID[id] = nil
            s.byIdentity[entry.node.identity] = nil
            return entry.node
        }
        if let released { releaser.release(released) }
    }

    var count: Int { state.withLock { $0.byID.count } }

    /// Every known node id and node, for the lock's cache drop.
    func snapshot() -> [(fuse_ino_t, BackingNode)] {
        state.withLock { s in s.byID.map { ($0.key, $0.value.node) } }
    }
}
