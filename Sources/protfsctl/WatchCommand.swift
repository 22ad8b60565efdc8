import ProtfsCommandLine
import ProtfsControlProtocol

/// `protfsctl watch MOUNTPOINT`: `state <current>` once subscribed, then one event per
/// line, each written at once, until the mount goes away or standard output does.
enum WatchCommand {
    static let command = Command(name: "watch", synopsis: "MOUNTPOINT") { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        let client = try ControlClient(mountpoint: mountpoint)
        var outputGone = false
        try client.watch { line in
            outputGone = !writeOutput("\(line)\n")
            return !outputGone
        }
        if !outputGone {
            writeError("protfsctl watch: the daemon of \(client.mountpoint) ended the stream (unmounted)\n")
        }
    }
}
