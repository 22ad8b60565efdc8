import Glibc
import ProtfsSystem

/// SIGTERM, SIGINT and SIGHUP end the session cleanly. They are blocked in every thread
/// (`blockInThisThreadAndItsChildren` runs before any thread exists) and taken by one
/// watcher thread with `sigwait`: a handler could land in any thread, and libfuse's loop only
/// notices the exit flag when one of its own threads wakes up.
public enum TerminationSignals {
    static let all: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    static var set: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in all { sigaddset(&signals, signal) }
        return signals
    }

    /// Leaves exactly the termination signals blocked (whatever mask the parent handed
    /// down), so that every thread created from here on has them blocked too.
    public static func blockInThisThreadAndItsChildren() {
        var blocked = set
        sigprocmask(SIG_SETMASK, &blocked, nil)
    }

    /// Waits on a thread of its own for a termination signal, then calls `stop`; `Errno`
    /// when the system has no thread to give.
    static func watch(_ stop: @escaping @Sendable () -> Void) throws(Errno) {
        try JoinableThread.detach {
            var signals = set
            // sigwait needs the signals blocked in its own thread too, whatever mask it got.
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            var received: Int32 = 0
            while sigwait(&signals, &received) != 0 {}
            stop()
        }
    }
}
