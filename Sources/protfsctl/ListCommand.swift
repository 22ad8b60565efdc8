import Foundation
import ProtfsCommandLine
import ProtfsControlProtocol
import ProtfsSystem

/// `protfsctl list [--json]`: every protfs mount this process can see (its mount namespace,
/// `/proc/self/mountinfo`), each with what its daemon answers to `status`. The daemon
/// decides what the caller may see; a mount whose daemon cannot be reached (its socket in
/// another user's runtime directory, a dead mount) is listed with what the kernel says.
enum ListCommand {
    static let command = Command(name: "list", synopsis: "[--json]", flags: ["--json"]) { arguments in
        _ = try arguments.operands()
        let entries = MountTable.protfsMounts().map(ListedMount.init)
        writeOutput(arguments.isSet("--json") ? try json(entries) : text(entries))
    }

    /// A daemon gets this long to answer: one that never does must not hold the listing.
    static let statusTimeout = Duration.seconds(2)

    static func json(_ entries: [ListedMount]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(entries), as: UTF8.self) + "\n"
    }

    /// One line per mount under a header; `-` where the daemon did not say.
    static func text(_ entries: [ListedMount]) -> String {
        let rows = [["MOUNTPOINT", "STATE", "OWNER", "MAY LOCK", "BACKING"]] + entries.map { entry in
            var state = entry.state ?? "-"
            if let left = entry.graceSecondsLeft { state += " (\(left) s)" }
            return [entry.mountpoint, state, entry.ownerName ?? entry.owner.map(String.init) ?? "-",
                    entry.callerMayLock.map { $0 ? "yes" : "no" } ?? "-", entry.backing ?? "-"]
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max()! + 2 }
        return rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined() + row[4] + "\n"
        }.joined()
    }
}

/// One mount of `protfsctl list --json`; null members when the daemon did not answer
/// (`error` says why).
struct ListedMount: Encodable {
    let mountpoint: String
    let backing: String?
    let owner: UInt32?
    let ownerName: String?
    let state: String?
    let graceSecondsLeft: Int?
    /// Whole seconds, as in `status --json`.
    let grace: Int?
    let callerMayLock: Bool?
    let pid: Int32?
    let error: String?

    init(_ mount: MountTable.ProtfsMount) {
        mountpoint = mount.mountpoint
        let report: StatusReport?
        do {
            report = try ControlClient(mountpoint: mount.mountpoint, directories: Self.socketDirectories(of: mount))
                .status(within: ListCommand.statusTimeout)
            error = nil
        } catch {
            report = nil
            self.error = error.message
        }
        backing = report?.backing
        owner = report?.owner ?? mount.mountingUser
        ownerName = owner.flatMap(accountName(of:))
        state = report?.state.rawValue
        graceSecondsLeft = report?.graceSecondsLeft
        grace = report?.grace.secondsRoundedUp
        callerMayLock = report?.callerMayLock
        pid = report?.pid
    }

    /// Where `protfsctl` looks, then the mounting user's runtime directory (for root, who
    /// may look there, and sees every user's mounts).
    static func socketDirectories(of mount: MountTable.ProtfsMount) -> [ControlSocketDirectory] {
        let usual = ControlSocketPath.clientDirectories()
        guard let uid = mount.mountingUser, uid != 0 else { return usual }
        let users = "/run/user/\(uid)/protfs"
        return usual.contains { $0.path == users } ? usual : usual + [ControlSocketDirectory(users, trusting: [uid, ControlSocketPath.rootAsSeen()])]
    }

    private enum CodingKeys: String, CodingKey {
        case mountpoint, backing, owner, ownerName, state, graceSecondsLeft, grace, callerMayLock, pid, error
    }

    /// Every key, null where it does not apply, so that every entry has the same shape.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mountpoint, forKey: .mountpoint)
        try container.encode(backing, forKey: .backing)
        try container.encode(owner, forKey: .owner)
        try container.encode(ownerName, forKey: .ownerName)
        try container.encode(state, forKey: .state)
        try container.encode(graceSecondsLeft, forKey: .graceSecondsLeft)
        try container.encode(grace, forKey: .grace)
        try container.encode(callerMayLock, forKey: .callerMayLock)
        try container.encode(pid, forKey: .pid)
        try container.encode(error, forKey: .error)
    }
}
