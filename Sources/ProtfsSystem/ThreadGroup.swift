import Synchronization

/// The threads an owner starts for work that waits (lanes of a pipeline, a reader ahead),
/// each a `JoinableThread`, joined together once, whoever asks first.
public final class ThreadGroup: Sendable {
    private struct State {
        var threads: [JoinableThread] = []
        var joined = false
    }
    private let state = Mutex(State())

    public init() {}

    /// Starts `body` on a new thread of the group; `Errno` when the system has none to give.
    public func start(_ body: @escaping @Sendable () -> Void) throws(Errno) {
        let thread = try JoinableThread(body)
        state.withLock { $0.threads.append(thread) }
    }

    /// Waits for every thread started so far; true for the first call only (the owner
    /// releases what the threads used then), false for any later one.
    @discardableResult
    public func joinAll() -> Bool {
        let (running, first) = state.withLock { state in
            defer {
                state.threads = []
                state.joined = true
            }
            return (state.threads, !state.joined)
        }
        for thread in running { thread.join() }
        return first
    }
}
