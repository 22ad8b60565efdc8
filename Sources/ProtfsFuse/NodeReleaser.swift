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
    private let pending = Mutex<[BackingNode]>([])
    private let queue = DispatchQueue(label: "protfs.node-release")

    func release(_ node: BackingNode) {
        let first = pending.withLock { nodes in
            nodes.append(node)
            return nodes.count == 1
        }
        // One drain at a time is scheduled: it takes whatever arrived before it ran.
        if first { queue.async { self.drain() } }
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
