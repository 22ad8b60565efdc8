import ProtfsDomain
/// A tool's subcommands (`protfs`, `protfsctl`): finds the command named by the first
/// arguments, prints the usage, and returns the exit code. Adding a command is a file that
/// defines its `Command` and a line in the tool's table.
public struct CommandTable: Sendable {
    public let tool: String
    /// The manual page that documents the tool in full, as `man` names it (`protfs(8)`).
    public let manualPage: String
    public let commands: [Command]

    public init(tool: String, manualPage: String, commands: [Command]) {
        self.tool = tool
        self.manualPage = manualPage
        self.commands = commands
    }

    public func run(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first else {
            writeError(usage)
            return ExitCode.usage.rawValue
        }
        // `help COMMAND` is `COMMAND --help`.
        if first == "help" && arguments.count > 1 { return run(Array(arguments.dropFirst()) + ["--help"]) }
        if ["help", "--help", "-h"].contains(first) {
            print(usage, terminator: "")
            return ExitCode.success.rawValue
        }
        if first == "--version" {
            print("\(tool) \(ProductVersion.release)")
            return ExitCode.success.rawValue
        }
        if first == "completion" { return completion(Array(arguments.dropFirst())) }
        // The longest name wins, so `class get` is not taken for a command `class`.
        let matching = commands.filter { arguments.starts(with: $0.words) }
        guard let command = matching.max(by: { $0.words.count < $1.words.count }) else {
            let isGroup = commands.contains { $0.words.count > 1 && $0.words.first == first }
            let named = isGroup ? arguments.prefix(2).joined(separator: " ") : first
            writeError("\(tool): unknown command '\(named)'\n" + usage)
            return ExitCode.usage.rawValue
        }
        return command.execute(Array(arguments.dropFirst(command.words.count)), tool: tool, manualPage: manualPage)
    }

    public var usage: String {
        "usage:\n" + commands.map { "  \(tool) \($0.name) \($0.synopsis)".trimmingTrailingSpaces + "\n" }.joined()
            + "  \(tool) completion \(CompletionScript.shells.joined(separator: "|"))\n"
            + "\(tool) COMMAND --help shows one command's usage, \(tool) --version the release;"
            + " \(manualPage) describes them all.\n"
    }

    /// `completion SHELL`: the shell's completion script, made from this table.
    private func completion(_ arguments: [String]) -> Int32 {
        guard arguments.count == 1, let script = CompletionScript.script(for: arguments[0], CompletionSpec(self)) else {
            writeError("usage: \(tool) completion \(CompletionScript.shells.joined(separator: "|"))\n")
            return ExitCode.usage.rawValue
        }
        writeOutput(script)
        return ExitCode.success.rawValue
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
