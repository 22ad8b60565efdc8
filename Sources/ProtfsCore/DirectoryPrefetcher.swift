import Dispatch
import Synchronization

/// Reads the metadata of directories ahead of use, one at a time on a background queue.
///
/// A walker (`find`, `du`, `ls -R`) opens every subdirectory a listing shows it, and opening
/// one for listing needs its `protfs.dir`: a block of its own on the backing disk, read cold
/// after a cache drop. Read while the walker is still busy with the parent, it is in memory
/// when the walker gets there. At most `limit` directories wait; past that, they are read
/// when opened, as without a prefetcher.
final class DirectoryPrefetcher: Sendable {
    static let limit = 256

    private let queue = DispatchQueue(label: "protfs.directory-prefetch", qos: .utility)
    private let waiting = Atomic<Int>(0)

    func prefetch(_ node: BackingNode, with read: @escaping @Sendable (BackingNode) -> Void) {
        guard waiting.add(1, ordering: .relaxed).newValue <= Self.limit else {
            waiting.subtract(1, ordering: .relaxed)
            return
        }
        queue.async { [self] in
            read(node)
            waiting.subtract(1, ordering: .relaxed)
        }
    }
}
