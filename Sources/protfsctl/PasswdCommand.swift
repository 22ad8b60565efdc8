import ProtfsCommandLine
import ProtfsControlProtocol

/// `protfsctl passwd MOUNTPOINT [--remove [--yes]]`: `PasscodeChange`'s dialogue, the change
/// made by the daemon. Works in every lock state and does not change it. An unmounted
/// vault's passcode is changed by `protfs passwd`.
enum PasswdCommand {
    static let command = Command(name: "passwd", synopsis: "MOUNTPOINT [--remove [--yes]]",
                                 flags: PasscodeChange.flags) { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        let client = try ControlClient(mountpoint: mountpoint)
        try PasscodeChange.run(arguments, vault: client.mountpoint, hasPasscode: try client.passcodeSet(), prefix: "protfsctl passwd",
                               .init(change: { old, new in try client.perform(.changePasscode, secrets: [old, new]) },
                                     set: { new in try client.perform(.setPasscode, secrets: [new]) },
                                     remove: { old in try client.perform(.removePasscode, secrets: [old]) }, itemsGo: "were deleted"))
    }
}
