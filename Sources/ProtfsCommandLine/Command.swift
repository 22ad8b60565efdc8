import ProtfsDomain
/// One subcommand of `protfs` or `protfsctl`: how it is called and what it does. `run`
/// throws `UsageError` (exit 2), a `CommandError` (its own exit code and message) or
/// `CommandExit` (already reported); anything else exits 1.
public struct Command: Sendable {
    /// One or more words (`class get`), matched against the start of the arguments.
    public let name: String
    /// The arguments after the name, as the usage line shows them.
    public let synopsis: String
    /// Options that take a value (`--name VALUE` or `--name=VALUE`).
    public let valueOptions: Set<String>
    /// Options that take none.
    public let flags: Set<String>
    /// Options whose value is a comma-separated list of these words (`-o OPTIONS`), for
    /// completion; a word that ends in `=` takes a value of its own.
    public let valueLists: [String: [String]]
    public let run: @Sendable (ParsedArguments) throws -> Void

    public init(name: String, synopsis: String, valueOptions: Set<String> = [], flags: Set<String> = [],
                valueLists: [String: [String]] = [:], run: @escaping @Sendable (ParsedArguments) throws -> Void) {
        self.name = name
        self.synopsis = synopsis
        self.valueOptions = valueOptions
        self.flags = flags
        self.valueLists = valueLists
        self.run = run
    }

    var words: [String] { name.split(separator: " ").map(String.init) }

    /// Runs the command on the arguments after its name; `tool` prefixes its messages, and
    /// `--help` prints the usage and where the manual says more.
    func execute(_ arguments: [String], tool: String, manualPage: String) -> Int32 {
        let prefix = "\(tool) \(name)"
        do {
            try run(try ParsedArguments(arguments, valueOptions: valueOptions, flags: flags))
            return ExitCode.success.rawValue
        } catch let error as UsageError where error.wantsHelp {
            writeOutput("usage: \(prefix) \(synopsis)".trimmingTrailingSpaces + "\n\(manualPage) describes every option.\n")
            return ExitCode.success.rawValue
        } catch let exit as CommandExit {
            return exit.code.rawValue
        } catch let error as UsageError {
            writeError("\(prefix): \(error.message)\nusage: \(prefix) \(synopsis)\n")
            return ExitCode.usage.rawValue
        } catch let error as any CommandError {
            writeError("\(prefix): \(error.description)\n")
            return error.exitCode.rawValue
        } catch {
            writeError("\(prefix): \(error)\n")
            return ExitCode.failure.rawValue
        }
    }
}

/// A command that has already said what went wrong and only needs to exit with `code`.
public struct CommandExit: Error {
    public let code: ExitCode
    public init(code: ExitCode) { self.code = code }
}

/// A mistake in how a command was called (exit 2); the message names the culprit.
public struct UsageError: Error {
    public let message: String
    /// `--help` (or `-h`) stood where an option may: the usage is wanted, not the work.
    let wantsHelp: Bool
    public init(_ message: String) { self.init(message, wantsHelp: false) }
    private init(_ message: String, wantsHelp: Bool) {
        self.message = message
        self.wantsHelp = wantsHelp
    }
    static let helpRequested = UsageError("", wantsHelp: true)
}
