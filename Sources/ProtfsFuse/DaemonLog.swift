import Glibc
import CProtfsSys
import Synchronization

/// The daemon's log: stderr in the foreground, syslog once detached. Damage is reported once
/// per message, and never with plaintext names unless `-o debug` asked for them.
public final class DaemonLog: Sendable {
    /// How many damage messages are remembered as already logged. A hostile backing directory
    /// can offer endless distinct damage: the oldest is forgotten first (and may be logged
    /// again), so the memory stays bounded.
    public static let rememberedDamage = 4096

    public let debug: Bool
    /// Where lines go until `detach()`: stderr, or a test's own file.
    private let output: Int32
    private let toSyslog: Atomic<Bool>
    private let reported = Mutex(RecentMessages(capacity: DaemonLog.rememberedDamage))

    public init(debug: Bool, output: Int32 = STDERR_FILENO) {
        self.debug = debug
        self.output = output
        toSyslog = Atomic(false)
    }

    /// Damage messages remembered now (at most `rememberedDamage`).
    var rememberedDamageCount: Int { reported.withLock { $0.count } }

    /// Switches to syslog (after the daemon detached its stderr).
    public func detach() {
        openlog("protfs", LOG_PID, LOG_DAEMON)
        toSyslog.store(true, ordering: .relaxed)
    }

    public func info(_ message: String) { emit(LOG_INFO, message) }
    public func warning(_ message: String) { emit(LOG_WARNING, message) }

    /// A damaged or undecodable backing object: logged once, then the daemon goes on.
    public func damage(_ message: String) {
        guard reported.withLock({ $0.insert(message) }) else { return }
        emit(LOG_ERR, "damage: \(message)")
    }

    private func emit(_ priority: Int32, _ message: String) {
        if toSyslog.load(ordering: .relaxed) {
            message.withCString { text in
                withVaList([text]) { vsyslog(priority, "%s", $0) }
            }
        } else {
            let line = "protfs: \(message)\n"
            line.withCString { protfs_write_all(output, $0, strlen($0)) }
        }
    }
}
