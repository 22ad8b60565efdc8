import ProtfsCommandLine
import ProtfsControlProtocol
import ProtfsDomain

/// `protfsctl lock [--wait|--now] MOUNTPOINT`: starts the grace period (returns once the
/// state is `locking`), waits for `locked`, or locks at once.
enum LockCommand {
    static let command = Command(name: "lock", synopsis: "[--wait|--now] MOUNTPOINT", flags: ["--wait", "--now"]) { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        let mode: LockRequest
        switch (arguments.isSet("--wait"), arguments.isSet("--now")) {
        case (true, true): throw UsageError("options --wait and --now exclude each other")
        case (true, false): mode = .wait
        case (false, true): mode = .now
        case (false, false): mode = .normal
        }
        try ControlClient(mountpoint: mountpoint).perform(.lock(mode))
    }
}
