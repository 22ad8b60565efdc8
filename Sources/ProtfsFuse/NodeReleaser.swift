import Dispatch
import ProtfsCore
import Synchronization

/// Lets go of forgotten nodes on a background queue. Closing the last descriptor of a
/// backing file that was unlinked is when the backing filesystem frees its blocks, and on a
/// cold cache ext4 first reads the file's extent tree and bitmaps: a `rm -r` through the
/// mount spent much of the daemon's time there. Done while handling FORGET, that wait
/// held up the request behind it; here it overlaps with the requests that follow.
/// A forgotten node has no open handle, so nothing secret waits here, only a descriptor.
final class NodeReleaser: Sendable {
    /// Nodes waiting at most, whatever the descriptor budget.
    static let maximumCapacity = 1024
    /// How long the first waiting node waits for others before they are let go together. A
    /// `rm -r` forgets a node per file; a drain for each woke the queue's thread once per
    /// file, and those wake-ups, on the cores the remover and the reader share, made it
    /// 7-10% slower (docs/PERFORMANCE.md, "Three paths profiled").
    static let gathering = Duration.milliseconds(4)

    /// Nodes waiting at most. Past this the caller lets go itself: a queue that fell behind
    /// (removing 100,000 files from a cold disk) must not hold their descriptors and memory.
    let capacity: Int
    private let pending = Mutex<[BackingNode]>([])
    private let queue: DispatchQueue

    /// A releaser whose waiting nodes fit beside a node table of `tableCapacity`: their
    /// descriptors come out of the same reserve as open files and listings, and with a
    /// small descriptor limit 1,024 waiting nodes ran a cold `rm -r` into EMFILE.
    convenience init(besideTableOf tableCapacity: Int) {
        self.init(capacity: min(Self.maximumCapacity, max(tableCapacity / 8, 1)))
    }

    init(capacity: Int, queue: DispatchQueue = DispatchQueue(label: "protfs.node-release")) {
        self.capacity = capacity
        self.queue = queue
    }

    /// Nodes not yet let go.
    var waiting: Int { pending.withLock { $0.count } }

    func release(_ node: BackingNode) {
        let waiting: Int? = pending.withLock { nodes in
            guard nodes.count < capacity else { return nil }
            nodes.append(node)
            return nodes.count
        }
        // One drain at a time is scheduled, `gathering` after the first node: it takes
        // whatever arrived before it ran. With the queue full, `node` is let go here, when
        // this call returns.
        if waiting == 1 {
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.gathering.wholeNanoseconds))) { self.drain() }
        }
    }

    private func drain() {
        while true {
            let batch = pending.withLock { nodes in
                defer { nodes.removeAll(keepingCapacity: true) }
                return nodes
            }
            if batch.isEmpty { return }
        }
    }
}
