import CSystemd
import Glibc
import ProtfsDomain

/// The daemon's messages to the service manager (`Type=notify` units): `READY=1` once the
/// mount is live, `STATUS=` with the lock state, `STOPPING=1` at unmount. Outside systemd
/// (`NOTIFY_SOCKET` unset) every call does nothing.
public struct ServiceNotifier: Sendable {
    public let mountpoint: String

    public init(mountpoint: String) { self.mountpoint = mountpoint }

    /// Whether the daemon runs under systemd: a notification socket, or standard streams
    /// connected to the journal.
    public static var isUnderSystemd: Bool { getenv("NOTIFY_SOCKET") != nil || getenv("JOURNAL_STREAM") != nil }

    public func ready(_ state: LockState) { notify("READY=1\n" + status(state)) }
    public func changed(to state: LockState) { notify(status(state)) }
    public func stopping() { notify("STOPPING=1\nSTATUS=unmounting \(mountpoint)") }

    func status(_ state: LockState) -> String { "STATUS=\(mountpoint): \(state.rawValue)" }

    private func notify(_ message: String) { _ = sd_notify(0, message) }
}
