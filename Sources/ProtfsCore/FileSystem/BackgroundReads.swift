import Dispatch
import Synchronization

/// Reads ahead of use, on a few background readers: what a request just showed will be
/// asked for next, and read while the requests go on it is in memory when they get there.
///
/// The newest batch is read first, in its order, and older ones wait (read in arrival
/// order, a reader that fell behind spent its time on what is used last). At most `limit`
/// items wait; past that the oldest are dropped, and read when used, as without read-ahead:
/// however fast requests come, the work waiting stays bounded.
final class BackgroundReads<Item: Sendable>: Sendable {
    static var limit: Int { 256 }

    typealias Read = @Sendable (Item) -> Void

    /// The items one request showed, in its order, and how to read them.
    private struct Batch {
        var items: [Item]
        let read: Read
    }

    /// The items waiting, the newest batch last.
    private struct Waiting {
        var batches: [Batch] = []
        /// Readers started and not yet out of work.
        var running = 0

        var count: Int { batches.reduce(0) { $0 + $1.items.count } }

        mutating func next() -> (Item, Read)? {
            guard let last = batches.indices.last else { return nil }
            let item = batches[last].items.removeFirst()
            let read = batches[last].read
            if batches[last].items.isEmpty { batches.removeLast() }
            return (item, read)
        }

        mutating func dropOldest() {
            batches[0].items.removeFirst()
            if batches[0].items.isEmpty { batches.removeFirst() }
        }
    }

    private let queue: DispatchQueue
    private let waiting = Mutex(Waiting())
    private let readers: Int

    init(label: String, readers: Int) {
        queue = DispatchQueue(label: label, qos: .utility, attributes: .concurrent)
        self.readers = readers
    }

    /// Nothing waits and no read is running.
    var isIdle: Bool { waiting.withLock { $0.running == 0 } }

    /// Queues the items one request showed, in its order, ahead of earlier ones.
    func prefetch(_ items: [Item], with read: @escaping Read) {
        guard !items.isEmpty else { return }
        let startReader = waiting.withLock { (waiting) -> Bool in
            waiting.batches.append(Batch(items: items, read: read))
            while waiting.count > Self.limit { waiting.dropOldest() }
            guard waiting.running < readers else { return false }
            waiting.running += 1
            return true
        }
        if startReader { queue.async { [self] in drain() } }
    }

    private func drain() {
        while let (item, read) = waiting.withLock({ (waiting) -> (Item, Read)? in
            let next = waiting.next()
            if next == nil { waiting.running -= 1 }
            return next
        }) {
            read(item)
        }
    }
}

/// Reads the metadata of directories ahead of use.
///
/// A walker (`find`, `du`, `ls -R`) opens every subdirectory a listing shows it, and opening
/// one for listing needs its `protfs.dir`: a block of its own on the backing disk, read cold
/// after a cache drop. Read while the walker is still busy with the parent, it is in memory
/// when the walker gets there.
///
/// Walkers go depth first: after a listing they descend into its first subdirectory, list
/// it, and descend again, long before they come back to the parent's other subdirectories:
/// so the newest listing's subdirectories go first.
///
/// Each read waits on the disk (a lookup in the directory, the record's inode, its block), so
/// two readers keep two reads in flight: a cold `find` was faster with two than with one,
/// and no faster with four.
typealias DirectoryPrefetcher = BackgroundReads<BackingNode>

extension BackgroundReads where Item == BackingNode {
    convenience init(readers: Int = 2) {
        self.init(label: "protfs.directory-prefetch", readers: readers)
    }
}
