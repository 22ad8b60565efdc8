import Glibc
import ProtfsCommandLine
import ProtfsControlProtocol

/// `protfsctl passwd MOUNTPOINT [--remove [--yes]]`: the current passcode, then the new one
/// (twice on a terminal), a line each; on a vault without a passcode, only the new one; with
/// `--remove`, the current one, after a confirmation. Works in every lock state and does not
/// change it.
enum PasswdCommand {
    static let command = Command(name: "passwd", synopsis: "MOUNTPOINT [--remove [--yes]]",
                                 flags: ["--remove", "--yes"]) { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        let remove = arguments.isSet("--remove")
        if arguments.isSet("--yes") && !remove { throw UsageError("--yes goes with --remove") }
        let client = try ControlClient(mountpoint: mountpoint)
        let reader = PasscodeReader(passcodeFile: nil)
        let hasPasscode = try client.passcodeSet()
        if remove {
            guard hasPasscode else { throw UsageError("\(client.mountpoint) has no passcode to remove") }
            try confirmRemoval(of: client.mountpoint, given: arguments.isSet("--yes"))
            try client.perform(.removePasscode, secrets: [try reader.read(prompt: "Current passcode: ")])
            writeError("protfsctl passwd: the passcode of \(client.mountpoint) was removed; its "
                       + "whenPasscodeSetThisDeviceOnly items were deleted\n")
        } else if hasPasscode {
            let old = try reader.read(prompt: "Current passcode: ")
            let new = try reader.readNew()
            try client.perform(.changePasscode, secrets: [old, new])
            writeError("protfsctl passwd: the passcode of \(client.mountpoint) was changed\n")
        } else {
            try client.perform(.setPasscode, secrets: [try reader.readNew()])
            writeError("protfsctl passwd: \(client.mountpoint) now has a passcode\n")
        }
    }

    /// `--yes` for scripts; otherwise a `yes` typed on the terminal. Without a terminal and
    /// without `--yes` the removal is refused: nothing may answer for the user.
    private static func confirmRemoval(of mountpoint: String, given yes: Bool) throws {
        if yes { return }
        guard isatty(STDIN_FILENO) == 1 else {
            throw UsageError("removing a passcode needs a confirmation: answer on a terminal, or pass --yes")
        }
        writeError("Remove the passcode of \(mountpoint)? Whoever holds the device key will read every class, and the "
                   + "whenPasscodeSetThisDeviceOnly items are deleted. Type 'yes' to go on: ")
        guard let answer = Swift.readLine(strippingNewline: true), answer == "yes" else {
            throw CommandExit(code: .failure)
        }
    }
}
