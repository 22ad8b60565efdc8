import ProtfsCommandLine
import ProtfsCore

/// `protfs passwd BACKING [--device-key PATH] [--remove [--yes]]`: the passcode of an
/// unmounted vault (the backing lock refuses a mounted one: `protfsctl passwd` changes
/// that one through its daemon), with `PasscodeChange`'s dialogue. The attempt counter and
/// its delays apply as at an unlock.
enum PasswdCommand {
    static let command = Command(name: "passwd", synopsis: "BACKING [--device-key PATH] [--remove [--yes]]",
                                 valueOptions: ["--device-key"], flags: PasscodeChange.flags) { arguments in
        let backing = try arguments.operands("BACKING")[0]
        let vault = try Vault.open(backing: backing, deviceKeyPath: arguments.value("--device-key"), sealer: TPMDeviceKeySealer(tcti: nil))
        try PasscodeChange.run(arguments, vault: backing, hasPasscode: vault.passcodeSet, prefix: "protfs passwd",
                               .init(change: { old, new in try vault.changePasscode(old: old, new: new) },
                                     set: { new in try vault.changePasscode(old: nil, new: new) },
                                     remove: { old in try vault.changePasscode(old: old, new: nil) }, itemsGo: "go at its next mount"))
    }
}
