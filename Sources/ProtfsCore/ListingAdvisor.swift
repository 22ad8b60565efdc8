import Glibc
import ProtfsSystem
import Synchronization

/// Decides which entries of a directory listing carry their attributes (FUSE's
/// readdirplus) and which go as a name and a type only.
///
/// Attributes cost the daemon a backing `stat` and a descriptor per entry, and the kernel an
/// inode, and a walk that wants names only (`find`, a backup tool's scan for changed names)
/// uses none of them. A walk that looks at every entry (`ls -l`, `du`, `rm -r`) saves a
/// LOOKUP round trip per entry with them. Nobody can tell the two apart before the listing,
/// so the advisor watches what follows one:
/// - subdirectories always carry their attributes: every walker descends into them;
/// - other entries go bare until one of them is looked up by name shortly after its
///   directory was listed bare, which says that the walker looks at what it lists; from
///   then on, for `window`, every entry carries its attributes. Once that window passes the
///   next listing goes bare again and the walker has to show it again.
/// A wrong guess costs speed, never correctness: a bare entry is looked up when used.
public final class ListingAdvisor: Sendable {
    /// A directory as the kernel names it (its FUSE node id).
    public typealias DirectoryID = UInt64

    private struct State {
        /// Until when (clock nanoseconds) every entry carries its attributes.
        var everyEntryUntil: UInt64 = 0
        /// Directories listed with bare entries, and when (a walk's recent past).
        var listedBare: [DirectoryID: UInt64] = [:]
    }

    /// Bare listings remembered at most; past this, the stale ones are dropped.
    static let rememberedListings = 256

    private let state = Mutex(State())
    private let window: UInt64
    private let clock: @Sendable () -> UInt64

    public init(windowNanoseconds: UInt64 = 250_000_000,
                clock: @escaping @Sendable () -> UInt64 = MonotonicClock.nanoseconds) {
        window = windowNanoseconds
        self.clock = clock
    }

    /// Starts one reply of a listing of `directory`: whether every entry carries its
    /// attributes (else only those `entryCarriesAttributes` names).
    public func beginReply(listing directory: DirectoryID) -> Bool {
        state.withLock { s in
            let now = clock()
            if now < s.everyEntryUntil { return true }
            if s.listedBare.count >= Self.rememberedListings {
                s.listedBare = s.listedBare.filter { isRecent($0.value, now: now) }
                if s.listedBare.count >= Self.rememberedListings { s.listedBare.removeAll() }
            }
            s.listedBare[directory] = now
            return false
        }
    }

    /// Within the window before `now`. A time after `now` (read by another thread just after
    /// this one read its clock) counts as recent, and an unsigned difference must not trap.
    private func isRecent(_ time: UInt64, now: UInt64) -> Bool {
        time >= now || now - time < window
    }

    /// Whether an entry of type `type` (a `d_type`) carries its attributes in a bare
    /// listing: directories, and entries of a type the backing directory does not tell.
    public static func entryCarriesAttributes(type: UInt8) -> Bool {
        type == UInt8(DT_DIR) || type == UInt8(DT_UNKNOWN)
    }

    /// A lookup by name found an object in `directory`.
    public func lookedUp(directory: Bool, in parent: DirectoryID) {
        guard !directory else { return }
        state.withLock { s in
            let now = clock()
            guard let listed = s.listedBare[parent], isRecent(listed, now: now) else { return }
            s.everyEntryUntil = now + window
            s.listedBare.removeAll()
        }
    }
}
