/// The exit codes of docs/CONTROL.md, shared by every command.
public enum ExitCode: Int32, Sendable {
    case success = 0
    case failure = 1
    case usage = 2
    case wrongPasscode = 3
    case rateLimited = 4
    case refusedByLockState = 5
    case notFound = 6
    case alreadyExists = 7
    case damage = 8
    /// `protfsctl class get`/`set` of a path outside every protfs mount, which has no class.
    case notOnProtfs = 9
}

/// An error that knows its exit code and says what failed and what to do.
public protocol CommandError: Error, CustomStringConvertible {
    var exitCode: ExitCode { get }
}
