import CProtfsSys
import ProtfsCommandLine

/// The `protfsctl` command: talks to a mounted vault's daemon over its control socket, and
/// reads or sets protection classes through the `user.protfs.class` attribute.
enum ProtfsctlTool {
    static let table = CommandTable(tool: "protfsctl", manualPage: "protfsctl(1)", commands: [
        LockCommand.command,
        UnlockCommand.command,
        StatusCommand.command,
        ListCommand.command,
        PasswdCommand.command,
        WatchCommand.command,
        FollowCommand.command,
        ClassCommands.get,
        ClassCommands.set,
        BackingPathCommand.command,
        ContainerCommand.command,
        SecretServiceCommand.command,
    ] + ItemCommands.all)

    static func run(_ arguments: [String]) -> Int32 {
        // unlock and passwd hold passcodes, item commands secrets: no core dump may carry them.
        _ = protfs_set_undumpable()
        return table.run(arguments)
    }
}
