import CProtfsSys
import Glibc

/// A program started with `posix_spawnp` (never fork: no Swift runs in a child that has not
/// exec'd), its standard output on a descriptor of the caller's, its standard error shared,
/// no other descriptor, this process's environment.
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

    /// What the child reads: the caller's standard input (a command that prompts the user
    /// itself), or nothing (`/dev/null`).
    public enum StandardInput: Sendable {
        case shared
        case null
    }

    /// A child this process started some other way.
    public init(pid: pid_t) { self.pid = pid }

    /// Starts `arguments[0]` (searched in PATH when it has no `/`) with `arguments`.
    public static func spawn(_ arguments: [String], standardInput: StandardInput = .shared,
                             standardOutput: FileDescriptor) throws(Errno) -> ChildProcess {
        precondition(!arguments.isEmpty, "a child needs a program")
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let error = protfs_spawn_with_output(arguments[0], argv, environ, standardOutput.rawValue,
                                             standardInput == .null ? 1 : 0, &pid)
        guard error == 0 else { throw Errno(error) }
        return ChildProcess(pid: pid)
    }

    /// Starts `arguments` with its standard output into a new pipe, whose write end this
    /// process closes at once.
    public static func spawnReadingOutput(_ arguments: [String], standardInput: StandardInput = .shared)
        throws(Errno) -> ChildOutput {
        let pipe = try DescriptorPair.pipe()
        let process = try spawn(arguments, standardInput: standardInput, standardOutput: pipe.writeEnd.borrowed)
        return ChildOutput(process: process, output: pipe.closingWriteEnd())
    }

    /// Ends the child at once (a program that overran its time).
    public func kill() { _ = Glibc.kill(pid, SIGKILL) }

    /// Waits for the child to end.
    public func wait() -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .killed(signal: status & 0x7f)
    }
}

/// A child and the read end of the pipe that is its standard output.
public struct ChildOutput: ~Copyable, Sendable {
    public let process: ChildProcess
    public let output: OwnedDescriptor
}
