import ProtfsDomain
import ProtfsSystem

/// Why no passcode could be read: the reader's own failures, so that a command that reads one
/// (`protfsctl unlock`, `passwd`) needs no vault to report them. All exit 1; none carries a
/// secret.
public enum PasscodeInputError: CommandError, Sendable, Equatable {
    case empty
    case tooLong(limit: Int)
    case missing
    /// No terminal, no input, and no password agent that could be asked.
    case noSource
    /// The password agents were asked and gave nothing (`systemd-ask-password`'s status).
    case agentsGaveNone(reason: String)
    case entriesDiffer
    case system(operation: String, path: String, errno: Errno)
    /// A passcode command (or `systemd-ask-password`) that could not start or did not exit 0.
    case commandFailed(command: String, reason: String)

    public var exitCode: ExitCode { .failure }

    public var description: String {
        switch self {
        case .empty:
            "the passcode is empty; an empty passcode is refused"
        case .tooLong(let limit):
            "the passcode is longer than \(limit) bytes"
        case .missing:
            "no passcode given: the input ended before a line was read; give it with --passcode-file FILE or --passcode-command CMD, on the terminal, or as the first line of standard input"
        case .noSource:
            "no passcode source: standard input is no terminal and gives no line, and no password agent is running to ask; give --passcode-file FILE or --passcode-command CMD, run the command on a terminal, or write the passcode to its standard input"
        case .agentsGaveNone(let reason):
            "no password agent gave a passcode (systemd-ask-password \(reason)); give --passcode-file FILE or --passcode-command CMD, or run the command on a terminal"
        case .entriesDiffer:
            "the two passcodes differ; nothing was changed"
        case .system(let operation, let path, let errno):
            "cannot \(operation) \(path): \(errno)"
        case .commandFailed(let command, let reason):
            "the passcode command '\(command)' \(reason); no passcode was read"
        }
    }
}
