import Dispatch
import Glibc
import ProtfsSystem
import Synchronization

/// Reads the backing directory ahead of a backup's walk, on a thread of its own.
///
/// The walk reads one object at a time, and after a cache drop each small file is a disk
/// read it waits for while the CPU idles, then sealing it while the disk idles. This reader
/// goes through the same names in the same order (sorted, depth first) a little ahead: it
/// lists directories, looks files up and asks the kernel to read their first piece
/// (`POSIX_FADV_WILLNEED`), so the walk finds them in memory and the disk works while the
/// walk seals. It is a hint only: it reads nothing itself, and a name that changed or
/// failed is skipped; the walk decides what goes in the archive.
///
/// The walk reports every name it passes; the reader stays at most `window` names ahead,
/// so it holds no more of the page cache than that many pieces, whatever the vault's size.
final class BackupReadAhead: Sendable {
    static let window = 256

    private let root: FileDescriptor
    private let pieceByteCount: Int64
    /// One permit per name the reader may pass: `window` at the start, one more for each
    /// name the walk passes. (Made at 0 and raised: libdispatch traps when a semaphore is
    /// freed below the value it was made with.)
    private let permits = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// The reader's thread (none if the system had none to give: a hint is not worth
    /// failing a backup for).
    private let reader = ThreadGroup()

    /// Starts reading ahead under `root`, which must stay open until `stop()` returns.
    init(root: FileDescriptor, pieceByteCount: Int) {
        self.root = root
        self.pieceByteCount = Int64(pieceByteCount)
        for _ in 0..<Self.window { permits.signal() }
        try? reader.start { [self] in
            ThreadPinning.undoInherited()
            readAhead(root)
        }
    }

    /// The walk has passed one more name.
    func passed() { permits.signal() }

    /// Stops the reader and waits for it: no descriptor of it outlives the backup.
    func stop() {
        stopping.store(true, ordering: .releasing)
        permits.signal()
        reader.joinAll()
    }

    /// The names of `directory` in the walk's order, each file's first piece asked for;
    /// false once stopped.
    @discardableResult
    private func readAhead(_ directory: FileDescriptor) -> Bool {
        guard let entries = try? directory.entries().sorted(by: { $0.name < $1.name }) else { return true }
        for entry in entries {
            permits.wait()
            if stopping.load(ordering: .acquiring) { return false }
            switch entry.type {
            case UInt8(DT_DIR):
                guard let inner = try? OwnedDescriptor.open(entry.name, in: directory, [.readOnly, .directory, .nonBlocking])
                else { continue }
                if !readAhead(inner.borrowed) { return false }
            case UInt8(DT_REG):
                // Through O_PATH and a check, so nothing but a regular file is ever opened.
                guard let file = try? OwnedDescriptor.openRegularFile(entry.name, in: directory, [.readOnly, .noAccessTime])
                else { continue }
                try? file.borrowed.adviseWillNeed(offset: 0, length: pieceByteCount)
            default:
                continue
            }
        }
        return true
    }
}
