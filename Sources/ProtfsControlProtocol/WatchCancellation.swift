import Synchronization

/// Ends a `ControlClient.watch` from another thread: a watch waits for the daemon's next
/// event without a deadline, so cancelling shuts its socket down, which wakes the read.
public final class WatchCancellation: Sendable {
    private struct State {
        var cancelled = false
        var socket: SharedSocket?
    }

    private let state = Mutex(State())

    public init() {}

    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Ends the watch in progress, if any, and every later one at once.
    public func cancel() {
        state.withLock { state in
            state.cancelled = true
            state.socket?.socket.shutdown()
        }
    }

    /// Records the socket of a starting watch; false when already cancelled.
    func register(_ socket: SharedSocket) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.socket = socket
            return true
        }
    }

    /// Lets go of the socket once the watch is over.
    func unregister() {
        state.withLock { $0.socket = nil }
    }
}
