import CProtfsSys
import ProtfsCommandLine
import ProtfsCore

/// The `protfs` command: a table of subcommands. Adding one is a file that defines its
/// `Command` and a line here.
enum ProtfsTool {
    static let table = CommandTable(tool: "protfs", manualPage: "protfs(8)", commands: [
        InitCommand.command,
        MountCommand.command,
        FsckCommand.command,
        BackupCommand.command,
        RestoreCommand.command,
        PasswdCommand.command,
        DeviceKeyCommand.command,
        VersionCommand.command,
    ])

    /// Runs the subcommand named by the first argument; returns the exit code.
    static func run(_ arguments: [String]) -> Int32 {
        // Every protfs command may hold keys or a passcode: no core dump may carry them.
        _ = protfs_set_undumpable()
        return table.run(arguments)
    }
}
