import ProtfsDomain
import CFuse
import Glibc
import ProtfsCore
import ProtfsSystem
import Synchronization

/// The kernel's node ids and their lookup counts. A backing object seen under several names
/// (hard links) gets one node id; a node id lives until the kernel forgets every lookup.
/// Each node holds a backing descriptor, so the table also knows which ids were used least
/// recently: the ones to ask the kernel to forget when descriptors run short.
/// A new node counts against the uid of the request that brought it (`shares`): one that
/// would take a bounded uid past its share is refused with `EMFILE`, whoever else is served.
/// Past `ceiling` (nodes the kernel keeps in use beyond the pruner's reach) every new node
/// is refused, root's too, so that the daemon keeps descriptors for its own work.
final class InodeTable: Sendable {
    static let rootID: fuse_ino_t = 1

    private struct Entry {
        let node: BackingNode
        var lookups: UInt64
        /// The table's clock when the kernel last named this id.
        var lastUse: UInt64
        /// The uid the node counts against: whose request first brought it.
        let holder: uid_t
    }

    private struct State {
        var byID: [fuse_ino_t: Entry] = [:]
        var byIdentity: [BackingIdentity: fuse_ino_t] = [:]
        var nextID: fuse_ino_t = InodeTable.rootID + 1
        var clock: UInt64 = 0
        var holders: ShareLedger
    }

    private let state: Mutex<State>
    /// Above this many ids, the crowding handler is called after each new one.
    let capacity: Int
    /// At this many ids, new ones are refused.
    let ceiling: Int
    /// The nodes each bounded uid may hold. Past three quarters of its share, the crowding
    /// handler is called with the uid after each new node it brings.
    let shares: UserShares
    private let crowdingHandler = Mutex<(@Sendable (uid_t?) -> Void)?>(nil)
    private let releaser: NodeReleaser

    init(root: BackingNode, capacity: Int = .max, ceiling: Int = .max, shares: UserShares = .unbounded,
         privilege: MountPrivilege = MountPrivilege(owner: 0)) {
        self.capacity = capacity
        self.ceiling = ceiling
        self.shares = shares
        releaser = NodeReleaser(besideTableOf: capacity)
        // The root is never forgotten, and counts against nobody.
        var initial = State(holders: ShareLedger(shares, privilege: privilege))
        initial.byID[Self.rootID] = Entry(node: root, lookups: .max / 2, lastUse: 0, holder: 0)
        initial.byIdentity[root.identity] = Self.rootID
        state = Mutex(initial)
    }

    func node(_ id: fuse_ino_t) -> BackingNode? {
        state.withLock { s in
            s.clock += 1
            s.byID[id]?.lastUse = s.clock
            return s.byID[id]?.node
        }
    }

    /// Counts one lookup of `node` by `uid`, returning its node id (an existing one for a
    /// known backing object: the new descriptor is then simply dropped). A new node past
    /// the share of `uid` is refused.
    func remember(_ node: BackingNode, for uid: uid_t) throws(Errno) -> fuse_ino_t { try rememberKept(node, for: uid).id }

    /// `remember`, also returning the node the table keeps for that id (`node` itself, or
    /// the one it already had for the same backing object).
    func rememberKept(_ node: BackingNode, for uid: uid_t) throws(Errno) -> (id: fuse_ino_t, node: BackingNode) {
        guard let kept = record(node, for: uid, admitted: false) else { throw .tooManyOpenFiles }
        return kept
    }

    /// `remember` of a node whose room was checked before it was made (`admits`): counted
    /// even if the uid's other requests took that room meanwhile, as the node exists now.
    func rememberAdmitted(_ node: BackingNode, for uid: uid_t) -> fuse_ino_t {
        record(node, for: uid, admitted: true)!.id
    }

    /// Counts the lookup; nil when a new node is refused (never when `admitted`).
    private func record(_ node: BackingNode, for uid: uid_t, admitted: Bool) -> (id: fuse_ino_t, node: BackingNode)? {
        let recorded: (id: fuse_ino_t, kept: BackingNode, count: Int, held: Int, refused: Bool) = state.withLock { s in
            s.clock += 1
            if let id = s.byIdentity[node.identity] {
                s.byID[id]!.lookups += 1
                s.byID[id]!.lastUse = s.clock
                return (id, s.byID[id]!.node, 0, 0, false)
            }
            if admitted {
                s.holders.add(for: uid)
            } else if s.byID.count >= ceiling || !s.holders.take(for: uid) {
                return (0, node, s.byID.count, 0, true)
            }
            let id = s.nextID
            s.nextID += 1
            s.byID[id] = Entry(node: node, lookups: 1, lastUse: s.clock, holder: uid)
            s.byIdentity[node.identity] = id
            return (id, node, s.byID.count, s.holders.holding(uid), false)
        }
        let (id, kept, count, held, refused) = recorded
        // A refused uid is past its share (or the table at its ceiling): least used nodes
        // should go.
        let nearShare = refused || held >= shares.perUser / 4 * 3
        if count > capacity || nearShare, let handler = crowdingHandler.withLock({ $0 }) {
            if count > capacity { handler(nil) }
            if nearShare { handler(uid) }
        }
        if refused { return nil }
        // A symlink's target is sealed to its location: the name it was just found under.
        if kept !== node, let location = node.symlinkLocation { kept.symlinkLocation = location }
        // A file's next files are read ahead from the directory it was just found in.
        if kept !== node, let directory = node.directory { kept.directory = directory }
        return (id, kept)
    }

    /// Makes the id that names the backing object `identity` name `node` instead (a symlink
    /// that a rename made anew), and lets the former node go; for the same object, takes
    /// `node`'s symlink location (a symlink renamed in place).
    func replaceNode(of identity: BackingIdentity, with node: BackingNode) {
        if identity == node.identity {
            let kept = state.withLock { s in s.byIdentity[identity].flatMap { s.byID[$0]?.node } }
            if let kept, kept !== node, let location = node.symlinkLocation { kept.symlinkLocation = location }
            return
        }
        let released: BackingNode? = state.withLock { s in
            guard let id = s.byIdentity[identity], s.byIdentity[node.identity] == nil, let entry = s.byID[id] else { return nil }
            s.byIdentity[identity] = nil
            s.byIdentity[node.identity] = id
            s.byID[id] = Entry(node: node, lookups: entry.lookups, lastUse: entry.lastUse, holder: entry.holder)
            return entry.node
        }
        if let released { releaser.release(released) }
    }

    /// Lets go of a node the kernel never knew (a removed directory's record) on the
    /// releaser's queue: its last close is when ext4 frees it.
    func releaseLater(_ node: BackingNode) {
        releaser.release(node)
    }

    /// Whether the table is at its ceiling: no new node for anybody.
    var isFull: Bool { state.withLock { $0.byID.count >= ceiling } }

    /// Whether `uid` may bring one more node now (checked before creating one).
    func admits(_ uid: uid_t) -> Bool { state.withLock { $0.byID.count < ceiling && $0.holders.admits(uid) } }

    /// Whether `uid` may bring a node and holds less than half its share: listings give it
    /// nodes only then, so that what a walker lists leaves room for what it looks up.
    func hasRoomForListing(_ uid: uid_t) -> Bool {
        state.withLock { s in
            s.byID.count < ceiling && s.holders.admits(uid) && s.holders.holding(uid) < shares.perUser / 2
        }
    }

    /// The nodes `uid` holds (0 for root and the vault's owner, who are not counted).
    func holding(_ uid: uid_t) -> Int { state.withLock { $0.holders.holding(uid) } }

    /// `handler(nil)`: the table passed its capacity; `handler(uid)`: that uid nears its share.
    func whenCrowded(_ handler: @escaping @Sendable (uid_t?) -> Void) {
        crowdingHandler.withLock { $0 = handler }
    }

    /// Up to `count` ids (of those `uid` holds, if given), least recently used first, never
    /// the root nor a node `inUse` says is busy.
    func leastRecentlyUsed(_ count: Int, heldBy uid: uid_t? = nil, inUse: (BackingNode) -> Bool) -> [fuse_ino_t] {
        let candidates = state.withLock { s in
            s.byID.compactMap { id, entry in
                id == Self.rootID || uid.map({ $0 != entry.holder }) == true ? nil : (id, entry.lastUse, entry.node)
            }
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
            s.holders.giveBack(for: entry.holder)
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
