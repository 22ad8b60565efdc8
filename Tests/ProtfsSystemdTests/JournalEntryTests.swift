import ProtfsDomain
@testable import ProtfsSystemd
import Testing

/// The daemon's journal records and service notifications, as fields (the journal itself is
/// not running on every machine the tests run on).
@Suite("journal and service notifications")
struct JournalEntryTests {
    @Test("each kind of event has its own fixed 128-bit MESSAGE_ID")
    func messageIDs() {
        let ids = DaemonEvent.allCases.map(JournalMessageID.of)
        #expect(Set(ids).count == DaemonEvent.allCases.count)
        for id in ids {
            #expect(id.count == 32 && id.allSatisfy(\.isHexDigit) && id == id.lowercased(), "\(id)")
        }
        #expect(JournalMessageID.of(.locked) == "c7f3b10a264247f1b99a61a9e61eaeec")  // documented: never changes
    }

    @Test("a record carries the message, priority, event, mount point and state")
    func fields() {
        let entry = JournalEntry(priority: 6, message: "/v is locked", event: .locked, mountpoint: "/v", state: .locked)
        #expect(entry.fields == ["MESSAGE=/v is locked", "PRIORITY=6", "SYSLOG_IDENTIFIER=protfs", "PROTFS_MOUNTPOINT=/v",
                                 "MESSAGE_ID=c7f3b10a264247f1b99a61a9e61eaeec", "PROTFS_EVENT=locked", "PROTFS_STATE=locked"])
        let plain = JournalEntry(priority: 4, message: "x", event: nil, mountpoint: "/v", state: nil)
        #expect(plain.fields == ["MESSAGE=x", "PRIORITY=4", "SYSLOG_IDENTIFIER=protfs", "PROTFS_MOUNTPOINT=/v"])
    }

    @Test("STATUS= names the mount point and its lock state")
    func status() {
        #expect(ServiceNotifier(mountpoint: "/home/a/Vault").status(.locking) == "STATUS=/home/a/Vault: locking")
    }
}
