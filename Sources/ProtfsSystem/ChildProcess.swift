import CProtfsSys
import Glibc

/// A program started with `posix_spawnp` (never fork: no Swift runs in a child that has not
/// exec'd), its standard output on a descriptor of the caller's, its standard input and error
/// shared, no other descriptor, this process's environment.
public struct ChildProcess: Sendable {
    public let pid: pid_t

    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case killed(signal: Int32)

        public var description: String {
            switch self {
            case .exited(let code): "exited with \(code)"
            case .killed(let signal): "was killed by signal \(signal)"
            }
        }
    }

    /// Starts `arguments[0]` (searched in PATH when it has no `/`) with `arguments`.
    public static func spawn(_ arguments: [String], standardOutput: Int32) throws(Errno) -> ChildProcess {
        precondition(!arguments.isEmpty, "a child needs a program")
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let error = protfs_spawn_with_output(arguments[0], argv, environ, standardOutput, &pid)
        guard error == 0 else { throw Errno(error) }
        return ChildProcess(pid: pid)
    }

    /// Waits for the child to end.
    public func wait() -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .killed(signal: status & 0x7f)
    }
}
