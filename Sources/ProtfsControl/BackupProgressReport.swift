import ProtfsControlProtocol
import ProtfsSystem

/// A backup's progress, sent to its client at most four times a second; the way the walk
/// learns that the client is gone (it closed its end, or stopped reading for longer than
/// the send timeout), so that it stops and lets go of the vault.
final class BackupProgressReport {
    private static let interval = Duration.milliseconds(250)
    private let connection: SharedSocket
    private var lastSent: UInt64 = 0

    init(connection: SharedSocket) { self.connection = connection }

    /// False once the client is gone.
    func send(objects: UInt64, bytes: UInt64) -> Bool {
        guard !connection.socket.peerHasHungUp else { return false }
        let now = MonotonicClock.nanoseconds()
        guard now - lastSent >= UInt64(Self.interval.wholeNanoseconds) else { return true }
        lastSent = now
        return (try? connection.socket.writing { sink throws(ControlWireError) in
            try ControlWire.write(.backupProgress(objects: objects, bytes: bytes), to: &sink)
        }) != nil
    }
}
