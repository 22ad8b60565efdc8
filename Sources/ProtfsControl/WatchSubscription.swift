import ProtfsControlProtocol
import ProtfsDomain
import Synchronization

/// One `protfsctl watch` connection as a listener of the daemon. Events are sent at once,
/// without blocking: the daemon calls the listener from its lock transition, which must not
/// wait for a slow reader. A watcher whose socket is full or gone is dropped.
final class WatchSubscription: Sendable {
    /// Events that may arrive between subscribing and the `watching` frame.
    static let maximumPending = 64

    private struct State {
        var started = false
        var ended = false
        var pending: [LockEvent] = []
    }

    private let connection: SharedSocket
    private let state = Mutex(State())

    init(connection: SharedSocket) { self.connection = connection }

    /// The listener handed to `ControlHandler.watch`; false once the watcher is gone.
    func deliver(_ event: LockEvent) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            if !state.started {
                state.pending.append(event)
                if state.pending.count > Self.maximumPending { end(&state) }
            } else if !send(.event(event)) {
                end(&state)
            }
            return !state.ended
        }
    }

    /// Sends the `watching` frame with the state at subscription, then what came meanwhile,
    /// so the client sees the state line first and every event in order.
    func start(current: LockState) {
        state.withLock { state in
            guard !state.ended else { return }
            state.started = true
            for reply in [.watching(current)] + state.pending.map(ControlReply.event) where !send(reply) {
                end(&state)
                return
            }
            state.pending = []
        }
    }

    /// The connection is over (the peer left, or the server stops): no more sends.
    func finish() {
        state.withLock { state in state.ended = true }
    }

    private func end(_ state: inout State) {
        state.ended = true
        connection.socket.shutdown()  // wakes the connection thread, which closes the socket
    }

    private func send(_ reply: ControlReply) -> Bool {
        guard let frame = try? ControlWire.encoded(reply) else { return false }
        return frame.withUnsafeBytes { bytes in (try? connection.socket.send(bytes, nonBlocking: true)) != nil }
    }
}
