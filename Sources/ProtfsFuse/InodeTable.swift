import CFuse
import ProtfsCore
import Synchronization

/// The kernel's node ids and their lookup counts. A backing object seen under several names
/// (hard links) gets one node id; a node id lives until the kernel forgets every lookup.
final class InodeTable: Sendable {
    static let rootID: fuse_ino_t = 1

    private struct Entry {
        let node: BackingNode
        var lookups: UInt64
    }

    private struct State {
        var byID: [fuse_ino_t: Entry] = [:]
        var byIdentity: [BackingNode.Identity: fuse_ino_t] = [:]
        var nextID: fuse_ino_t = InodeTable.rootID + 1
    }

    private let state = Mutex(State())

    init(root: BackingNode) {
        state.withLock { s in
            // The root is never forgotten.
            s.byID[Self.rootID] = Entry(node: root, lookups: .max / 2)
            s.byIdentity[root.identity] = Self.rootID
        }
    }

    func node(_ id: fuse_ino_t) -> BackingNode? {
        state.withLock { $0.byID[id]?.node }
    }

    /// Counts one lookup of `node`, returning its node id (an existing one for a known
    /// backing object: the new descriptor is then simply dropped).
    func remember(_ node: BackingNode) -> fuse_ino_t {
        state.withLock { s in
            if let id = s.byIdentity[node.identity] {
                s.byID[id]!.lookups += 1
                return id
            }
            let id = s.nextID
            s.nextID += 1
            s.byID[id] = Entry(node: node, lookups: 1)
            s.byIdentity[node.identity] = id
            return id
        }
    }

    func forget(_ id: fuse_ino_t, count: UInt64) {
        // The node (and its descriptor) is released outside the table's lock.
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
        withExtendedLifetime(released) {}
    }

    var count: Int { state.withLock { $0.byID.count } }

    /// Every known node id and node, for the lock's cache drop.
    func snapshot() -> [(fuse_ino_t, BackingNode)] {
        state.withLock { s in s.byID.map { ($0.key, $0.value.node) } }
    }
}
