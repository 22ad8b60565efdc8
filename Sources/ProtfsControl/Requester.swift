import Glibc
import ProtfsControlProtocol
import ProtfsSystem

/// Who asked for a lock or an unlock, as the kernel tells it (SO_PEERCRED) and as the
/// daemon's log says it: the uid, the process and its command name (`/proc/PID/comm`, at
/// most 15 bytes, printable ASCII only: a process names itself, and its name goes into a
/// log). Never the command line, which may carry another program's secrets.
public struct Requester: Sendable, Equatable, CustomStringConvertible {
    public let uid: uid_t
    public let pid: pid_t
    /// The command name; nil when it could not be read (the process is gone).
    public let command: String?

    public init(uid: uid_t, pid: pid_t, command: String?) {
        (self.uid, self.pid, self.command) = (uid, pid, command)
    }

    init(_ peer: UnixSocket.Peer) {
        self.init(uid: peer.uid, pid: peer.pid, command: Self.commandName(of: peer.pid))
    }

    public var description: String {
        "uid \(uid) (pid \(pid)" + (command.map { ", \($0)" } ?? "") + ")"
    }

    public static func commandName(of pid: pid_t) -> String? {
        guard pid > 0, let comm = try? OwnedDescriptor.open(path: "/proc/\(pid)/comm", .readOnly).closeAfter({
            file throws(Errno) in try file.readAll(limit: 64)
        }) else { return nil }
        // The kernel ends it with a newline.
        let bytes = comm.prefix { $0 != 0 && $0 != 0x0A }.prefix(15)
        let printable = bytes.map { (0x20...0x7e).contains($0) && $0 != 0x5c ? Character(UnicodeScalar($0)) : "?" }
        return printable.isEmpty ? nil : String(printable)
    }
}
