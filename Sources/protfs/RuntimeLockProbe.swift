import Glibc
import ProtfsSystem

/// A test hook (`PROTFS_TEST_RUNTIME_LOCK_PROBE`): before the daemon reports the mount ready,
/// its main thread initialises a lazy global that another thread waits for meanwhile, so the
/// main thread holds a contended `swift_once` lock. A daemon whose main thread does not own
/// its runtime locks under its own thread id (a forked child that did not exec) can never
/// release that lock, and the mount never becomes ready; a sound daemon is ready as soon as
/// the initialiser's pause ends.
/// Nothing else changes, and without the variable nothing runs.
enum RuntimeLockProbe {
    static let variable = "PROTFS_TEST_RUNTIME_LOCK_PROBE"

    static func runIfAsked() {
        guard getenv(variable) != nil else { return }
        _ = contended
    }

    private static let contended: Bool = {
        // A test hook: no thread to give only weakens the probe, which then passes anyway.
        try? JoinableThread.detach { _ = RuntimeLockProbe.contended }
        sleep(for: .milliseconds(200))  // long enough for that thread to wait on the lock this initialiser holds
        return true
    }()
}
