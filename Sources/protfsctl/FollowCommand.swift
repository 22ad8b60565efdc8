import ProtfsCommandLine
import ProtfsControlProtocol
import ProtfsFollow

/// `protfsctl follow MOUNTPOINT [--session ID] [--on screen-lock,sleep]`: locks the vault when
/// the session's screen locks and before the machine sleeps (docs/FOLLOW.md), until the
/// mount goes away. Logs to standard error (the journal, under a user unit).
enum FollowCommand {
    static let command = Command(name: "follow", synopsis: "MOUNTPOINT [--session ID] [--on screen-lock,sleep]",
                                 valueOptions: ["--session", "--on"]) { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        var triggers = FollowTriggers.all
        if let list = arguments.value("--on") {
            guard let parsed = FollowTriggers(list: list) else {
                throw UsageError("option --on takes a list of screen-lock and sleep, not '\(list)'")
            }
            triggers = parsed
        }
        if let session = arguments.value("--session"), session.isEmpty { throw UsageError("option --session needs a session id") }
        let vault = try FollowedVault(mountpoint: mountpoint)
        try Follower(vault: vault, session: arguments.value("--session"), triggers: triggers) {
            writeError("protfsctl follow: \($0)\n")
        }.run()
    }
}
