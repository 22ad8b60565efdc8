import Glibc
import ProtfsSystem

/// Delays only tests ask for, through the daemon's environment (as `PROTFS_TEST_DELAY_SCALE`
/// shortens the rate limiter's): each can only slow the daemon down, is read once, and is
/// ignored unless it is a number in range. Whoever can set a daemon's environment can already
/// read its memory, so they give an attacker nothing.
enum TestDelays {
    /// `PROTFS_TEST_FSYNC_DELAY`: seconds (more than 0, at most 60) that each fsync waits
    /// before it syncs, as on a slow disk, so a test can lock while one is in flight.
    static let fsync = seconds(from: "PROTFS_TEST_FSYNC_DELAY")

    /// `PROTFS_TEST_BACKUP_PIECE_DELAY`: seconds a backup waits after each piece of a file
    /// it copies, so that writes have every chance to land in the middle of a copy.
    static let backupPiece = seconds(from: "PROTFS_TEST_BACKUP_PIECE_DELAY")

    /// `PROTFS_TEST_ITEM_RECORD_DELAY`: seconds a search waits before it reads each candidate
    /// record, under the item index's lock, so that a test can ask for `status` meanwhile.
    static let itemRecord = seconds(from: "PROTFS_TEST_ITEM_RECORD_DELAY")

    static func pause(_ delay: Duration?) {
        guard let delay else { return }
        sleep(for: delay)
    }

    private static func seconds(from variable: String) -> Duration? {
        guard let raw = getenv(variable), let value = Double(String(cString: raw)), value > 0, value <= 60 else { return nil }
        return .seconds(value)
    }
}
