import Glibc
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// Reads ahead the backing files of a directory's next files while a reader goes through it.
///
/// Each cold open of a small file waits for one disk read, its header (a lookup finds the
/// name and inode in blocks that the directory's other files share, but every file's data
/// is a block of its own). When a directory's files are opened one after another (`cat *`,
/// `grep -r`, a build), the daemon asks the kernel to read the next files' headers and first
/// chunks (`POSIX_FADV_WILLNEED`), on a background reader: their disk reads overlap the
/// requests the reader makes meanwhile, and its opens find them in memory.
///
/// Only ciphertext is read, no key is touched, and only after an open the lock allowed.
/// Whatever any caller does, the work stays bounded: a plan lists at most
/// `largestDirectory` entries (a directory past that gets no read-ahead) and reads ahead at
/// most `window` files; one plan per directory is queued at a time, at most
/// `rememberedDirectories` directories are followed, and the queue drops its oldest plans
/// past its limit.
final class SiblingReadahead: Sendable {
    /// Files read ahead of the reader. A cold `files_read` (5000 files of 4 KiB in 50
    /// directories) took as long with 64 as with 32, and 32 reads less that nobody opens
    /// at the end of a directory.
    static let window = 32
    /// The open in one directory that starts reading ahead: the second, so that one file
    /// opened alone costs no reads of its neighbours (starting at the first was no faster
    /// on `files_read`).
    static let opensBeforeReadahead = 2
    /// Entries a plan lists at most.
    static let largestDirectory = 4096
    /// Directories followed at a time (each with its listing, `largestDirectory` entries at
    /// most): enough for a few readers, or a build reading sources and headers side by side.
    static let rememberedDirectories = 8
    /// What is read of each file: its header and first chunk.
    static let bytesPerFile = ContentLayout.headerByteCount + Int64(ContentLayout.sealedChunkByteCount)

    /// A plan to make in the background: `opened` was just opened in `directory`.
    struct Trigger: Sendable {
        let directory: BackingNode
        let opened: UInt64
    }

    /// A directory's vault files as listed when it had the modification time `modified`;
    /// nil files: it had too many entries.
    struct Listing {
        let modified: timespec
        let files: SiblingFiles?

        func isCurrent(for status: stat) -> Bool {
            modified.tv_sec == status.st_mtim.tv_sec && modified.tv_nsec == status.st_mtim.tv_nsec
        }
    }

    /// The directories being opened in, and how far each is read ahead.
    struct Runs {
        struct Run {
            var opens = 0
            var lastUse: UInt64
            /// The last file read ahead, and the one whose opening calls for the next plan.
            var readThrough: UInt64?
            var nextPlanAt: UInt64?
            /// The count of plans queued when this directory's last one was (nil: none waits).
            var planQueued: UInt64?
            var listing: Listing?
        }

        private(set) var runs: [BackingIdentity: Run] = [:]
        private var clock: UInt64 = 0
        private var plansQueued: UInt64 = 0

        /// Notes that the file `inode` of `directory` was opened; true when that calls for a
        /// plan, which is then counted as queued.
        mutating func opened(_ inode: UInt64, in directory: BackingIdentity) -> Bool {
            clock += 1
            var run = runs[directory] ?? Run(lastUse: clock)
            run.opens += 1
            run.lastUse = clock
            // A plan queued more than the queue's limit of plans ago ran or was dropped.
            let waiting = run.planQueued.map { plansQueued - $0 < UInt64(BackgroundReads<Trigger>.limit) } ?? false
            let due = run.opens >= SiblingReadahead.opensBeforeReadahead && !waiting
                && run.nextPlanAt.map { inode >= $0 } ?? true
            if due {
                plansQueued += 1
                run.planQueued = plansQueued
            }
            runs[directory] = run
            if runs.count > SiblingReadahead.rememberedDirectories,
               let oldest = runs.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                runs[oldest] = nil
            }
            return due
        }

        /// The listing of `directory` kept from an earlier plan, if still current.
        func listing(of directory: BackingIdentity, for status: stat) -> Listing? {
            runs[directory]?.listing.flatMap { $0.isCurrent(for: status) ? $0 : nil }
        }

        /// Makes the plan for `trigger` from `listing` (nil: the directory could not be
        /// listed) and remembers it (and the listing).
        mutating func plan(_ trigger: Trigger, from listing: Listing?) -> SiblingFiles.Plan? {
            let id = trigger.directory.identity
            runs[id]?.planQueued = nil
            guard let listing else { return nil }
            runs[id]?.listing = listing
            guard let plan = listing.files?.plan(after: trigger.opened, window: SiblingReadahead.window,
                                                  readThrough: runs[id]?.readThrough) else { return nil }
            runs[id]?.readThrough = plan.readThrough
            runs[id]?.nextPlanAt = plan.nextPlanAt
            return plan
        }
    }

    private let runs = Mutex(Runs())
    private let reads = BackgroundReads<Trigger>(label: "protfs.sibling-readahead", readers: 1)

    /// Nothing is queued and no plan is being carried out.
    var isIdle: Bool { reads.isIdle }

    /// A regular file was opened: reads ahead the next files of its directory when that is
    /// due, without waiting for any of it.
    func opened(_ file: BackingNode) {
        guard let directory = file.directory else { return }
        let trigger = Trigger(directory: directory, opened: file.identity.inode)
        guard runs.withLock({ $0.opened(trigger.opened, in: directory.identity) }) else { return }
        reads.prefetch([trigger]) { [self] in carryOut($0) }
    }

    /// Lists the directory if its last listing is stale, plans, and reads the files ahead.
    private func carryOut(_ trigger: Trigger) {
        let directory = trigger.directory
        var listing: Listing?
        if let status = try? directory.status() {
            listing = runs.withLock { $0.listing(of: directory.identity, for: status) }
            if listing == nil {
                listing = try? Listing(modified: status.st_mtim,
                                       files: SiblingFiles.list(directory.descriptor, limit: Self.largestDirectory))
            }
        }
        guard let plan = runs.withLock({ $0.plan(trigger, from: listing) }) else { return }
        for name in plan.names { Self.readAhead(name, in: directory.descriptor) }
    }

    /// Asks the kernel to read the start of the backing file `name` in `directory`, opened
    /// only if it is a regular file (never a FIFO or device planted there), and at once closed.
    static func readAhead(_ name: String, in directory: FileDescriptor) {
        let file: OwnedDescriptor
        do {
            file = try OwnedDescriptor.openRegularFile(name, in: directory, [.readOnly, .noAccessTime])
        } catch .notPermitted {
            guard let plain = try? OwnedDescriptor.openRegularFile(name, in: directory, .readOnly) else { return }
            file = plain
        } catch {
            return
        }
        try? file.borrowed.adviseWillNeed(offset: 0, length: bytesPerFile)
    }
}
