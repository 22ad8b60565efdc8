import Dispatch
import Synchronization

/// Reads the metadata of directories ahead of use, on a few background readers.
///
/// A walker (`find`, `du`, `ls -R`) opens every subdirectory a listing shows it, and opening
/// one for listing needs its `protfs.dir`: a block of its own on the backing disk, read cold
/// after a cache drop. Read while the walker is still busy with the parent, it is in memory
/// when the walker gets there.
///
/// Walkers go depth first: after a listing they descend into its first subdirectory, list
/// it, and descend again, long before they come back to the parent's other subdirectories.
/// So the newest listing's subdirectories are read first, in the order listed, and older
/// ones wait (read in arrival order, a reader that fell behind spent its time on the
/// directories the walker comes to last). At most `limit` directories wait; past that the
/// oldest are dropped, and read when opened, as without a prefetcher.
///
/// Each read waits on the disk (a lookup in the directory, the record's inode, its block), so
/// two readers keep two reads in flight: a cold `find` was faster with two than with one,
/// and no faster with four.
final class DirectoryPrefetcher: Sendable {
    static let limit = 256

    typealias Read = @Sendable (BackingNode) -> Void

    /// The subdirectories one listing showed, in its order, and how to read them.
    private struct Batch {
        var nodes: [BackingNode]
        let read: Read
    }

    /// The directories waiting, the newest listing's last.
    private struct Waiting {
        var batches: [Batch] = []
        /// Readers started and not yet out of work.
        var running = 0

        var count: Int { batches.reduce(0) { $0 + $1.nodes.count } }

        mutating func next() -> (BackingNode, Read)? {
            guard let last = batches.indices.last else { return nil }
            let node = batches[last].nodes.removeFirst()
            let read = batches[last].read
            if batches[last].nodes.isEmpty { batches.removeLast() }
            return (node, read)
        }

        mutating func dropOldest() {
            batches[0].nodes.removeFirst()
            if batches[0].nodes.isEmpty { batches.removeFirst() }
        }
    }

    private let queue = DispatchQueue(label: "protfs.directory-prefetch", qos: .utility, attributes: .concurrent)
    private let waiting = Mutex(Waiting())
    private let readers: Int

    init(readers: Int = 2) {
        self.readers = readers
    }

    /// Nothing waits and no read is running.
    var isIdle: Bool { waiting.withLock { $0.running == 0 } }

    /// Queues the subdirectories one listing showed, in its order, ahead of earlier ones.
    func prefetch(_ nodes: [BackingNode], with read: @escaping Read) {
        guard !nodes.isEmpty else { return }
        let startReader = waiting.withLock { (waiting) -> Bool in
            waiting.batches.append(Batch(nodes: nodes, read: read))
            while waiting.count > Self.limit { waiting.dropOldest() }
            guard waiting.running < readers else { return false }
            waiting.running += 1
            return true
        }
        if startReader { queue.async { [self] in drain() } }
    }

    private func drain() {
        while let (node, read) = waiting.withLock({ (waiting) -> (BackingNode, Read)? in
            let next = waiting.next()
            if next == nil { waiting.running -= 1 }
            return next
        }) {
            read(node)
        }
    }
}
