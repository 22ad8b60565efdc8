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
/// so the advisor watches what follows one, walker by walker (the thread FUSE names as the
/// caller of each request):
/// - subdirectories always carry their attributes: every walker descends into them;
/// - other entries go bare until the walker that listed a directory bare looks one of them
///   up by name shortly after, which says that it looks at what it lists; from then on every
///   entry listed to that walker carries its attributes, for `window` after its latest
///   listing: a walk keeps its advice while it goes on. (Counted from the first advised
///   listing instead, the window ran out in the middle of each walk longer than it, and the
///   next directory, listed bare, cost a LOOKUP per entry: 800 of an `rm -rf` of 5000 files.)
///   A walker that pauses for the window has to show it again.
/// Advice is per walker so that one walker's habit is not imposed on another that runs at
/// the same time or just after (a `find` started just after a `du` would pay for attributes
/// it never uses). A walker that lists on one thread
/// and looks entries up on another gets no advice, and pays a LOOKUP per entry it uses.
/// A wrong guess costs speed, never correctness: a bare entry is looked up when used.
public final class ListingAdvisor: Sendable {
    /// A directory as the kernel names it (its FUSE node id).
    public typealias DirectoryID = UInt64
    /// The thread that made a request, as the kernel names it (the request's pid).
    public typealias Walker = pid_t

    private struct Listing {
        let time: UInt64
        let walker: Walker
    }

    private struct State {
        /// Walkers whose every listed entry carries its attributes, and until when (clock
        /// nanoseconds).
        var everyEntryUntil: [Walker: UInt64] = [:]
        /// Directories listed with bare entries: when, and to whom (a walk's recent past).
        var listedBare: [DirectoryID: Listing] = [:]
    }

    /// Bare listings (and advised walkers) remembered at most; past this, the stale ones are
    /// dropped.
    static let rememberedListings = 256

    private let state = Mutex(State())
    /// In clock nanoseconds.
    private let window: UInt64
    private let clock: @Sendable () -> UInt64

    public init(window: Duration = .milliseconds(250),
                clock: @escaping @Sendable () -> UInt64 = MonotonicClock.nanoseconds) {
        self.window = window.wholeNanoseconds
        self.clock = clock
    }

    /// Starts one reply of a listing of `directory` to `walker`: whether every entry carries
    /// its attributes (else only those `entryCarriesAttributes` names).
    public func beginReply(listing directory: DirectoryID, to walker: Walker) -> Bool {
        state.withLock { s in
            let now = clock()
            if let until = s.everyEntryUntil[walker], now < until {
                s.everyEntryUntil[walker] = max(until, now + window)
                return true
            }
            if s.listedBare.count >= Self.rememberedListings {
                s.listedBare = s.listedBare.filter { isRecent($0.value.time, now: now) }
                if s.listedBare.count >= Self.rememberedListings { s.listedBare.removeAll() }
            }
            s.listedBare[directory] = Listing(time: now, walker: walker)
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

    /// A lookup by `walker` found an object in `parent` (a directory if `directory`).
    public func lookedUp(directory: Bool, in parent: DirectoryID, by walker: Walker) {
        guard !directory else { return }
        state.withLock { s in
            let now = clock()
            guard let listed = s.listedBare[parent], listed.walker == walker, isRecent(listed.time, now: now) else { return }
            if s.everyEntryUntil.count >= Self.rememberedListings {
                s.everyEntryUntil = s.everyEntryUntil.filter { now < $0.value }
                if s.everyEntryUntil.count >= Self.rememberedListings { s.everyEntryUntil.removeAll() }
            }
            s.everyEntryUntil[walker] = now + window
            s.listedBare = s.listedBare.filter { $0.value.walker != walker }
        }
    }
}
