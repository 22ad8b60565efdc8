import ProtfsCommandLine
import ProtfsControlClient

/// `protfsctl passwd MOUNTPOINT`: the current passcode, then the new one (twice on a
/// terminal), a line each; works in every lock state and does not change it.
enum PasswdCommand {
    static let command = Command(name: "passwd", synopsis: "MOUNTPOINT") { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        let client = try ControlClient(mountpoint: mountpoint)
        let reader = PasscodeReader(passcodeFile: nil)
        let old = try reader.read(prompt: "Current passcode: ")
        let new = try reader.readNew()
        try client.perform(.changePasscode, secrets: [old, new])
        writeError("protfsctl passwd: the passcode of \(client.mountpoint) was changed\n")
    }
}
