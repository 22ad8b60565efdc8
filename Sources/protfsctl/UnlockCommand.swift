import ProtfsCommandLine
import ProtfsControlClient

/// `protfsctl unlock MOUNTPOINT [--passcode-file FILE]`: the passcode from the file, the
/// terminal (no echo) or the first line of standard input, sent from locked memory. A vault
/// without a passcode unlocks with none (docs/BACKUP.md).
enum UnlockCommand {
    static let command = Command(name: "unlock", synopsis: "MOUNTPOINT [--passcode-file FILE]",
                                 valueOptions: ["--passcode-file"]) { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        let client = try ControlClient(mountpoint: mountpoint)  // "no daemon" before asking for a passcode
        guard try client.passcodeSet() else { return try client.perform(.unlockWithoutPasscode) }
        let passcode = try PasscodeReader(passcodeFile: arguments.value("--passcode-file")).read()
        try client.perform(.unlock, secrets: [passcode])
    }
}
