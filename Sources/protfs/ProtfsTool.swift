import CProtfsSys
import ProtfsCore

/// The `protfs` command: a table of subcommands. Adding one is a file that defines its
/// `Command` and a line here.
enum ProtfsTool {
    static let commands: [Command] = [
        InitCommand.command,
        MountCommand.command,
        FsckCommand.command,
        VersionCommand.command,
    ]

    /// Runs the subcommand named by the first argument; returns the exit code.
    static func run(_ arguments: [String]) -> Int32 {
        // Every protfs command may hold keys or a passcode: no core dump may carry them.
        _ = protfs_set_undumpable()
        guard let name = arguments.first else {
            writeError(usage)
            return ExitCode.usage.rawValue
        }
        if ["help", "--help", "-h"].contains(name) {
            print(usage, terminator: "")
            return ExitCode.success.rawValue
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            writeError("protfs: unknown command '\(name)'\n" + usage)
            return ExitCode.usage.rawValue
        }
        return command.execute(Array(arguments.dropFirst()))
    }

    static var usage: String {
        "usage:\n" + commands.map { "  protfs \($0.name) \($0.synopsis)".trimmingTrailingSpaces + "\n" }.joined()
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
