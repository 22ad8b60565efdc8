import ProtfsCommandLine
import ProtfsControlProtocol

/// `protfsctl unlock MOUNTPOINT [--passcode-file FILE | --passcode-command CMD]`: the passcode
/// from `PasscodeReader`'s sources, sent from locked memory. A vault
/// without a passcode unlocks with none (docs/BACKUP.md).
enum UnlockCommand {
    static let command = Command(name: "unlock", synopsis: "MOUNTPOINT [--passcode-file FILE | --passcode-command CMD]",
                                 valueOptions: PasscodeReader.options) { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        let client = try ControlClient(mountpoint: mountpoint)  // "no daemon" before asking for a passcode
        guard try client.passcodeSet() else { return try client.perform(.unlockWithoutPasscode) }
        let passcode = try PasscodeReader(options: arguments, vault: client.mountpoint).read()
        try client.perform(.unlock, secrets: [passcode])
    }
}
