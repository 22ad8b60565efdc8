import Glibc
import ProtfsControlProtocol
import ProtfsDomain
import ProtfsSystem

/// The mount the follower locks, reached through its daemon's control socket as
/// `protfsctl lock` reaches it.
public struct FollowedVault: Sendable {
    let client: ControlClient
    public var mountpoint: String { client.mountpoint }

    /// Exit 6 when no daemon serves `mountpoint`.
    public init(mountpoint: String) throws(ControlFailure) {
        client = try ControlClient(mountpoint: mountpoint)
    }

    func status() throws(ControlFailure) -> StatusReport {
        let reply = try client.send(.status)
        guard case .status(let report) = reply else { throw client.unexpected(reply) }
        return report
    }

    /// Starts the grace period (a screen lock); the state before the request.
    func lockWithGrace() throws(ControlFailure) -> StatusReport {
        let before = try status()
        try perform(.lock(.normal))
        return before
    }

    /// Locks with no grace (sleep) and returns the state the daemon reports afterwards: the
    /// daemon answers once the keys are wiped and the pages dropped.
    func lockNow() throws(ControlFailure) -> LockState {
        try perform(.lock(.now))
        return try status().state
    }

    private func perform(_ request: ControlRequest) throws(ControlFailure) {
        let reply = try client.send(request)
        guard reply == .done else { throw client.unexpected(reply) }
    }

    /// Watches the daemon's event stream on a thread of its own and writes a byte to `fd`
    /// when it ends: the daemon unmounted, or went away.
    func signalWhenStreamEnds(to fd: Int32) throws(Errno) {
        try JoinableThread.detach { [client] in
            _ = try? client.watch { _ in true }
            var byte: UInt8 = 1
            _ = write(fd, &byte, 1)
        }
    }
}
