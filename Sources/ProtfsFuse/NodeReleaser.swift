import Dispatch
import ProtfsCore
import Synchronization

/// Lets go of forgotten nodes on a background queue. Closing the last descriptor of a
/// backing file that was unlinked is when the backing filesystem frees its blocks, and on a
/// cold cache ext4 first reads the file's extent tree and bitmaps: a `rm -r` through the
/// mount spent a third of the daemon's time there. Done while handling FORGET, that wait
/// held up the request behind it; here it overlaps with the requests that follow.
/// A forgotten node has no open handle, so nothing secret waits here, only a descriptor.
final class NodeReleaser: Sendable {
    /// Nodes waiting at most. Past this the caller lets go itself: a queue that fell behind
    /// (removing 100,000 files) must not hold their descriptors and memory.
    static let capacity = 1024

    private let pending = Mutex<[BackingNode]>([])
    private let queue = DispatchQueue(label: "protfs.node-release")

    func release(_ node: BackingNode) {
        let waiting: Int? = pending.withLock { nodes in
            guard nodes.count < Self.capacity else { return nil }
            nodes.append(node)
            return nodes.count
        }
        // One drain at a time is scheduled: it takes whatever arrived before it ran.
        if waiting == 1 { queue.async { self.drain() } }
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
