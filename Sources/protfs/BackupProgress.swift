import Glibc
import ProtfsCommandLine
import ProtfsSystem

/// `protfs backup`'s progress line: on a terminal only (quiet in scripts and logs), redrawn
/// at most four times a second, ended with a newline once the archive is complete.
final class BackupProgress {
    private static let interval: UInt64 = 250_000_000
    private let onTerminal = isatty(STDERR_FILENO) == 1
    private var lastShown: UInt64 = 0
    private var shown = false

    func show(objects: UInt64, bytes: UInt64) {
        guard onTerminal else { return }
        let now = MonotonicClock.nanoseconds()
        guard now - lastShown >= Self.interval else { return }
        lastShown = now
        shown = true
        writeError("\rprotfs backup: \(objects) objects, \(bytes >> 20) MiB of files")
    }

    func end() {
        if shown { writeError("\n") }
    }
}
