import CSystemd
import Glibc
import ProtfsDomain

/// One structured journal record of the daemon: the message, its priority, the kind of
/// event (`MESSAGE_ID`), the mount point and the lock state, sent with `sd_journal_sendv`.
public struct JournalEntry: Sendable {
    public let priority: Int32
    public let message: String
    public let event: DaemonEvent?
    public let mountpoint: String
    public let state: LockState?

    public init(priority: Int32, message: String, event: DaemonEvent?, mountpoint: String, state: LockState?) {
        self.priority = priority
        self.message = message
        self.event = event
        self.mountpoint = mountpoint
        self.state = state
    }

    /// The fields, as the journal takes them (`NAME=value`; a value may hold newlines).
    var fields: [String] {
        var fields = ["MESSAGE=\(message)", "PRIORITY=\(priority)", "SYSLOG_IDENTIFIER=protfs", "PROTFS_MOUNTPOINT=\(mountpoint)"]
        if let event { fields += ["MESSAGE_ID=\(JournalMessageID.of(event))", "PROTFS_EVENT=\(event.rawValue)"] }
        if let state { fields.append("PROTFS_STATE=\(state.rawValue)") }
        return fields
    }

    /// Whether journald listens: sd-journal drops records silently when it does not, and a
    /// daemon under a service manager without a journal must still log somewhere.
    public static var isAvailable: Bool { access("/run/systemd/journal/socket", F_OK) == 0 }

    /// Sends it; false when the journal did not take it, for the caller to log elsewhere.
    public func send() -> Bool {
        var storage = fields.map { Array($0.utf8) }
        let count = Int32(storage.count)
        return storage.withUnsafeMutableBufferPointer { fields in
            var vectors = fields.indices.map { index in
                fields[index].withUnsafeMutableBytes { iovec(iov_base: $0.baseAddress, iov_len: $0.count) }
            }
            return sd_journal_sendv(&vectors, count) >= 0
        }
    }
}

/// The fixed 128-bit identity of each kind of event, as `journalctl MESSAGE_ID=...` selects it
/// (docs/SYSTEMD.md lists them). Made once with `systemd-id128 new`; never change one.
public enum JournalMessageID {
    public static func of(_ event: DaemonEvent) -> String {
        switch event {
        case .mounted: "b77d78c76c05464c8e7f18791eee156e"
        case .locking: "e9da8a1802bc4439b416de98ab49d657"
        case .locked: "c7f3b10a264247f1b99a61a9e61eaeec"
        case .unlocked: "88314df196cc4bacb61728bd85a061ed"
        case .wrongPasscode: "50397ffac97742799bb468291a7e0714"
        case .lockRequested: "1eb2d079b2eb44f4a70c88885439add8"
        case .unlockRequested: "bceb08112ee34cee8c9f781a4e50e517"
        case .autolock: "c51886afecf84f3f806d272228b288bf"
        case .damage: "f7edd9f91dfa4e5286e1ddcac01a3020"
        case .unmounted: "a956442d3710475eb52c3cf19bc89223"
        }
    }
}
