import Foundation
import Glibc

/// The daemon killed as a crash kills it: no unmount, no write-out, its dead mount left on
/// the mount point for the next mount to clear.
extension TestVault {
    var daemonPID: Int32 { daemon?.processIdentifier ?? 0 }

    /// `kill -9` of the daemon, then waits for it to be gone.
    func killDaemon() throws {
        if let daemon { kill(daemon.processIdentifier, SIGKILL) }
        try reapKilledDaemon()
    }

    /// Waits for a daemon a client has killed, and forgets it. Its death is read from /proc:
    /// Foundation learns of it only once every process that inherited its descriptors is
    /// gone, and the daemon's auto-unmount helper outlives it.
    func reapKilledDaemon(within seconds: TimeInterval = 15) throws {
        guard let daemon else { return }
        let deadline = Date().addingTimeInterval(seconds)
        while !Self.hasDied(daemon.processIdentifier) && Date() < deadline { usleep(10_000) }
        guard Self.hasDied(daemon.processIdentifier) else { throw TestFailure("the daemon is still running \(seconds) s after kill -9") }
        self.daemon = nil
    }

    /// Gone, or a zombie its parent has not reaped yet.
    static func hasDied(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        return status.split(separator: ")").last?.split(separator: " ").first == "Z"
    }
}
