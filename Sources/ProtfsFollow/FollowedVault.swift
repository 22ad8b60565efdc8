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

    /// How long the follower waits for a status it only logs: a daemon busy with other
    /// users' requests must not hold a lock back.
    static let statusWait = Duration.seconds(2)

    /// Starts the grace period (a screen lock), then returns the state the daemon reports
    /// afterwards, or nil when it did not tell within `statusWait`. The lock goes first and
    /// needs no status: locking is always safe.
    func lockWithGrace() throws(ControlFailure) -> StatusReport? {
        try perform(.lock(.normal))
        return try? client.status(within: Self.statusWait)
    }

    /// Locks with no grace (sleep) and returns the state the daemon reports afterwards, or nil
    /// when it did not tell within `statusWait`: the daemon answers the lock once the keys are
    /// wiped and the pages dropped.
    func lockNow() throws(ControlFailure) -> LockState? {
        try perform(.lock(.now))
        return try? client.status(within: Self.statusWait).state
    }

    private func perform(_ request: ControlRequest) throws(ControlFailure) {
        let reply = try client.send(request)
        guard reply == .done else { throw client.unexpected(reply) }
    }

    /// Watches the daemon's event stream on a thread of its own and raises `signal` when it
    /// ends: the daemon unmounted, or went away.
    func signalWhenStreamEnds(to signal: StreamEndSignal) throws(Errno) {
        try JoinableThread.detach { [client] in
            _ = try? client.watch { _ in true }
            signal.raise()
        }
    }
}
