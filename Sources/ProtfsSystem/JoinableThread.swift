import Glibc

/// A thread of its own for work that waits (on a handoff, on the disk), joined by its owner.
/// libdispatch's pool has as many threads as cores here: a block that waits there on
/// something else starves the blocks behind it (a restore's file making waited for the
/// chunk openers, which waited for it, until the pool grew a thread a while later).
public final class JoinableThread: @unchecked Sendable {
    private var thread = pthread_t()
    private var joined = false

    /// Starts `body` on a new thread; `Errno` when the system has none to give.
    public init(_ body: @escaping @Sendable () -> Void) throws(Errno) {
        try Self.create(&thread, body)
    }

    /// Starts `body` on a thread nobody joins (one that lives as long as what it serves).
    public static func detach(_ body: @escaping @Sendable () -> Void) throws(Errno) {
        var thread = pthread_t()
        try create(&thread, body)
        pthread_detach(thread)
    }

    private static func create(_ thread: inout pthread_t, _ body: @escaping @Sendable () -> Void) throws(Errno) {
        let start = Unmanaged.passRetained(Start(body))
        let created = pthread_create(&thread, nil, { raw in
            Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, start.toOpaque())
        guard created == 0 else {
            start.release()
            throw Errno(created)
        }
    }

    /// Waits for the body to return; only its owner calls it, at most once.
    public func join() {
        precondition(!joined, "a thread joined twice")
        joined = true
        pthread_join(thread, nil)
    }

    private final class Start {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
