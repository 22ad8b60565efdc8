import Glibc
import CProtfsSys
import ProtfsDomain
import Synchronization

/// The daemon's log: stderr in the foreground, syslog once detached, or a structured sink
/// (the journal under systemd) when one is set and takes the line. Damage is reported once
/// per message, and never with plaintext names unless `-o debug` asked for them.
public final class DaemonLog: Sendable {
    /// A structured destination: gets each line with its priority and kind of event, and
    /// answers whether it took it (if not, the line goes to stderr or syslog).
    public typealias StructuredSink = @Sendable (_ priority: Int32, _ message: String, _ event: DaemonEvent?) -> Bool

    /// How many damage messages are remembered as already logged. A hostile backing directory
    /// can offer endless distinct damage: the oldest is forgotten first (and may be logged
    /// again), so the memory stays bounded.
    public static let rememberedDamage = 4096

    public let debug: Bool
    /// Where lines go until `detach()`: stderr, or a test's own file.
    private let output: Int32
    private let toSyslog: Atomic<Bool>
    private let reported = Mutex(RecentMessages(capacity: DaemonLog.rememberedDamage))
    private let structured = Mutex<StructuredSink?>(nil)

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

    /// Sends every later line to `sink` first.
    public func sendStructured(to sink: @escaping StructuredSink) { structured.withLock { $0 = sink } }

    public func info(_ message: String, event: DaemonEvent? = nil) { emit(LOG_INFO, message, event) }
    public func warning(_ message: String, event: DaemonEvent? = nil) { emit(LOG_WARNING, message, event) }

    /// A damaged or undecodable backing object: logged once, then the daemon goes on.
    public func damage(_ message: String) {
        guard reported.withLock({ $0.insert(message) }) else { return }
        emit(LOG_ERR, "damage: \(message)", .damage)
    }

    private func emit(_ priority: Int32, _ message: String, _ event: DaemonEvent?) {
        if let sink = structured.withLock({ $0 }), sink(priority, message, event) { return }
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
