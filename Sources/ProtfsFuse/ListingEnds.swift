import ProtfsSystem
import Synchronization

/// Where the last listing of each directory reached the end, so that the request the
/// kernel sends next is answered without opening the backing directory again.
///
/// The kernel asks for more entries until it gets an empty reply, so every listing costs
/// one request past the last entry; answering it from the backing directory means opening,
/// seeking and reading it again only to find nothing (six system calls). A listing that
/// reached the end leaves that position here, and the request that comes for exactly that
/// position takes it and gets its empty reply at once. Entries created in between are not
/// shown to that listing, which POSIX leaves open for a listing that was under way; any
/// other position, and any later listing (which starts over at 0), reads the directory.
final class ListingEnds: Sendable {
    typealias DirectoryID = UInt64

    private struct End {
        let position: Int64
        let time: UInt64
    }

    /// Ends remembered at most; past this, they are all dropped (each is needed for one
    /// request, the one that follows its listing at once).
    static let remembered = 256
    /// How long an end is good for: the follow-up comes within microseconds.
    static let lifetime = Duration.seconds(1)

    private let ends = Mutex<[DirectoryID: End]>([:])
    private let clock: @Sendable () -> UInt64

    init(clock: @escaping @Sendable () -> UInt64) {
        self.clock = clock
    }

    /// A listing of `directory` reached its end; the next request would start at `position`.
    func reachedEnd(of directory: DirectoryID, at position: Int64) {
        let now = clock()
        ends.withLock { ends in
            if ends.count >= Self.remembered { ends.removeAll() }
            ends[directory] = End(position: position, time: now)
        }
    }

    /// Whether a request for `directory` at `position` follows a listing that reached the
    /// end there (the end is taken: it answers one request).
    func takeEnd(of directory: DirectoryID, at position: Int64) -> Bool {
        let now = clock()
        return ends.withLock { ends in
            guard let end = ends.removeValue(forKey: directory) else { return false }
            return end.position == position && now >= end.time && now - end.time < Self.lifetime.wholeNanoseconds
        }
    }
}
