import CFuse
import Dispatch
import Glibc
import ProtfsSystem
import Synchronization

/// Keeps the daemon's descriptors from running out. Every inode the kernel knows holds an
/// `O_PATH` descriptor here, and the kernel keeps inodes for as long as memory allows, so
/// `ls -l` of a directory of more files than the hard descriptor limit failed with EMFILE.
/// Once the node table passes its capacity, the least recently used ids go to the kernel
/// in a `FUSE_NOTIFY_PRUNE` (protocol 7.45, Linux 6.16):
/// it drops those it holds no reference to and sends their FORGETs, which close the
/// descriptors. Ids in use (a cwd, an open file) stay; they are simply not pruned.
/// A bounded uid (`DescriptorShares`) nearing its share of nodes gets rounds of its own,
/// over its nodes only.
public final class InodePruner: Sendable {
    /// `FUSE_NOTIFY_PRUNE` in `enum fuse_notify_code` (not in libfuse 3.14's headers).
    private static let notifyPrune: Int32 = 9
    /// Ids per notification: the kernel reads each message into one buffer.
    private static let batch = 256
    /// After a round that found nothing to prune (every node in use), the next waits this long.
    private static let idleBackoff = Duration.seconds(1)

    /// Above `capacity` ids, the least recently used are pruned down to `target`.
    let capacity: Int
    let target: Int
    private let queue = DispatchQueue(label: "protfs.inode-pruner")
    private let scheduled = Atomic<Bool>(false)
    private let notBefore = Atomic<UInt64>(0)
    /// The kernel refused the notification (older than 6.16): nothing more to try.
    private let unsupported = Atomic<Bool>(false)
    /// The uids with a round of their own scheduled (`UInt64.max`) or backing off (until
    /// then): a uid whose nodes are all in use (one pinning them on purpose) must not hold
    /// up the rounds of other uids or of the whole table.
    private let userRounds = Mutex<[uid_t: UInt64]>([:])

    init(capacity: Int) {
        self.capacity = capacity
        target = capacity * 3 / 4
    }

    /// Called when the table has grown past its capacity, and when a request ran out of
    /// descriptors (the table may have filled while a round was backing off, and then no new
    /// node comes to call this): prunes on the pruner's own queue, one round at a time (a
    /// listing adds hundreds of nodes a second, so rounds follow each other as long as the
    /// table stays crowded).
    func crowded(_ adapter: FuseAdapter) {
        guard !unsupported.load(ordering: .relaxed), MonotonicClock.nanoseconds() >= notBefore.load(ordering: .relaxed),
              scheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        queue.async { [self] in
            // Only a table crowded with nodes in use waits before the next round; one that the
            // kernel's FORGETs have already thinned must not, or lookups run the descriptors out
            // in the meantime.
            if prune(adapter) == 0 { notBefore.store(MonotonicClock.nanoseconds(after: Self.idleBackoff), ordering: .relaxed) }
            scheduled.store(false, ordering: .releasing)
        }
    }

    /// Called when the nodes `uid` holds near its share: prunes its least recently used ones
    /// down to half the share, so that a user listing a large directory keeps finding room
    /// (what it holds only through the kernel's cache goes); what it keeps in use stays and
    /// counts.
    func crowded(_ adapter: FuseAdapter, by uid: uid_t) {
        guard !unsupported.load(ordering: .relaxed) else { return }
        let now = MonotonicClock.nanoseconds()
        let starts = userRounds.withLock { rounds in
            rounds = rounds.filter { $0.value > now }
            guard rounds[uid] == nil else { return false }
            rounds[uid] = .max
            return true
        }
        guard starts else { return }
        queue.async { [self] in
            let pruned = prune(adapter, heldBy: uid)
            userRounds.withLock { $0[uid] = pruned == 0 ? MonotonicClock.nanoseconds(after: Self.idleBackoff) : nil }
        }
    }

    /// Whether room may still come from rounds over the nodes of `uid` (nil: over the whole
    /// table): one is under way, or the last had something to prune (its FORGETs may be on
    /// their way). False while they back off after a round that found every node in use.
    func mayFreeRoom(for uid: uid_t?) -> Bool {
        guard !unsupported.load(ordering: .relaxed) else { return false }
        let now = MonotonicClock.nanoseconds()
        guard let uid else { return notBefore.load(ordering: .relaxed) <= now }
        return userRounds.withLock { rounds in rounds[uid].map { $0 == .max || $0 <= now } ?? true }
    }

    /// Sends the least recently used ids beyond `target`; returns how many, or nil when the
    /// table is not beyond it (any more).
    private func prune(_ adapter: FuseAdapter) -> Int? {
        let excess = adapter.inodes.count - target
        guard excess > 0 else { return nil }
        return send(adapter.inodes.leastRecentlyUsed(excess) { $0.hasOpenHandles }, for: adapter)
    }

    /// Sends the least recently used ids `uid` holds beyond half its share; returns how many,
    /// or nil when it holds no more than that (any more).
    private func prune(_ adapter: FuseAdapter, heldBy uid: uid_t) -> Int? {
        let excess = adapter.inodes.holding(uid) - adapter.inodes.shares.perUser / 2
        guard excess > 0 else { return nil }
        return send(adapter.inodes.leastRecentlyUsed(excess, heldBy: uid) { $0.hasOpenHandles }, for: adapter)
    }

    /// Sends `ids` in batches; returns how many, 0 when the kernel refuses the notification.
    private func send(_ ids: [fuse_ino_t], for adapter: FuseAdapter) -> Int? {
        guard let session = adapter.session else { return nil }
        var start = 0
        while start < ids.count {
            let slice = Array(ids[start ..< min(start + Self.batch, ids.count)])
            start += slice.count
            if !send(slice, to: fuse_session_fd(session)) {
                unsupported.store(true, ordering: .relaxed)
                adapter.log.warning("the kernel does not take FUSE_NOTIFY_PRUNE: the daemon's descriptors are "
                                   + "bounded only by its open-file limit")
                return 0
            }
        }
        return ids.count
    }

    /// Writes one notification: `fuse_out_header` (length, the notify code as its error, unique
    /// 0), `fuse_notify_prune_out` (count, padding, spare), then the ids.
    private func send(_ ids: [fuse_ino_t], to device: Int32) -> Bool {
        var message: [UInt8] = []
        let length = 16 + 16 + 8 * ids.count
        message.reserveCapacity(length)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { message.append(contentsOf: $0) }
        }
        append(UInt32(length))
        append(Int32(Self.notifyPrune))
        append(UInt64(0))
        append(UInt32(ids.count))
        append(UInt32(0))
        append(UInt64(0))
        for id in ids { append(UInt64(id)) }
        let written = message.withUnsafeBytes { write(device, $0.baseAddress, $0.count) }
        // ENOENT: some ids were already forgotten, which is fine.
        return written == length || errno == ENOENT
    }
}
