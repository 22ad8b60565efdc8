import Glibc
import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCore
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem
import Synchronization

/// A daemon stand-in: remembers what it was asked, knows one passcode, and lets tests emit
/// lock events to whoever watches.
final class FakeHandler: ControlHandler {
    static let passcode: [UInt8] = Array("open sesame".utf8)

    struct Record {
        var state: LockState = .unlocked
        var locks: [LockRequest] = []
        /// Who asked for each lock and unlock, in order.
        var requesters: [Requester] = []
        var passcode = FakeHandler.passcode
        var listeners: [@Sendable (LockEvent) -> Bool] = []
        var eventsDuringSubscribe: [LockEvent] = []
        /// Items by owner, then by service and account, with their secrets.
        var items: [uid_t: [[String]: (ItemAttributes, [UInt8])]] = [:]
        var itemOwners: [uid_t] = []
    }

    let record = Mutex(Record())

    /// The status as the tests' own uid sees it.
    /// The status as the server sends it to this process, the mounting user of the fixtures:
    /// the server adds the owner and whether the caller may lock.
    func status() -> StatusReport {
        var report = status(caller: getuid())
        report.owner = getuid()
        report.callerMayLock = true
        return report
    }

    func status(caller: uid_t?) -> StatusReport {
        let (state, items) = record.withLock { record in (record.state, caller.map { record.items[$0]?.count ?? 0 }) }
        return StatusReport(state: state, graceSecondsLeft: state == .locking ? 7 : nil, pid: 4242, mountpoint: "/mnt/fake",
                            backing: "/srv/backing", passcodeSet: true, grace: .seconds(10), autolock: .zero, failedAttempts: 0,
                            retryAfterSeconds: nil, items: items)
    }

    func lock(_ request: LockRequest, by requester: Requester) throws(ControlFailure) {
        record.withLock {
            $0.locks.append(request)
            $0.requesters.append(requester)
            $0.state = request == .normal ? .locking : .locked
        }
    }

    func unlock(passcode: SecureBuffer?, by requester: Requester) throws(ControlFailure) {
        guard let passcode else { throw ControlFailure(.usage, "this vault has a passcode") }
        try check(passcode)
        record.withLock {
            $0.state = .unlocked
            $0.requesters.append(requester)
        }
    }

    func changePasscode(old: SecureBuffer?, new: SecureBuffer?) throws(ControlFailure) {
        guard let old, let new else { throw ControlFailure(.usage, "this vault has a passcode") }
        try check(old)
        let bytes = new.withUnsafeBytes { Array($0) }
        record.withLock { $0.passcode = bytes }
    }

    func backingPath(of components: [[UInt8]]) throws(ControlFailure) -> String {
        guard !components.isEmpty else { return "." }
        if components.last == Array("missing".utf8) { throw ControlFailure(.notFound, "no such entry") }
        return components.map { $0.map { String($0, radix: 16) }.joined() }.joined(separator: "/")
    }

    func watch(_ listener: @escaping @Sendable (LockEvent) -> Bool) -> LockState {
        let (state, early) = record.withLock { record in
            record.listeners.append(listener)
            return (record.state, record.eventsDuringSubscribe)
        }
        // Events that race with the subscription must still come after the state line.
        for event in early { _ = listener(event) }
        return state
    }

    /// Calls every listener; drops those that say their watcher is gone.
    func emit(_ event: LockEvent) {
        let listeners = record.withLock { $0.listeners }
        let alive = listeners.map { $0(event) }
        record.withLock { record in
            record.listeners = zip(listeners, alive).filter(\.1).map(\.0) + record.listeners.dropFirst(listeners.count)
        }
    }

    var listenerCount: Int { record.withLock { $0.listeners.count } }

    /// Keeps items in memory, by the owner the server passes: enough to round-trip requests,
    /// replies and secrets over the wire.
    func item(_ operation: ItemRequest.Operation, owner: uid_t, secret: SecureBuffer?) throws(ControlFailure) -> ControlReplyMessage {
        let bytes = secret?.withUnsafeBytes { Array($0) }
        return try record.withLock { (record) throws(ControlFailure) -> ControlReplyMessage in
            record.itemOwners.append(owner)
            switch operation {
            case .add(let attributes):
                let key = [attributes.service, attributes.account]
                guard record.items[owner, default: [:]][key] == nil else { throw ControlFailure(.alreadyExists, "exists") }
                record.items[owner, default: [:]][key] = (attributes, bytes ?? [])
                return ControlReplyMessage(reply: .done)
            case .get(let service, let account):
                guard let (attributes, stored) = record.items[owner]?[[service, account]] else { throw ControlFailure(.notFound, "no item") }
                return ControlReplyMessage(reply: .item(attributes), secret: stored.withUnsafeBytes { SecureBuffer(copying: $0) })
            case .update(let service, let account, let changes, _):
                guard var (attributes, stored) = record.items[owner]?[[service, account]] else { throw ControlFailure(.notFound, "no item") }
                attributes.label = changes.label ?? attributes.label
                attributes.accessibility = changes.accessibility ?? attributes.accessibility
                if let bytes { stored = bytes }
                record.items[owner]![[service, account]] = (attributes, stored)
                return ControlReplyMessage(reply: .done)
            case .delete(let service, let account):
                guard record.items[owner]?.removeValue(forKey: [service, account]) != nil else { throw ControlFailure(.notFound, "no item") }
                return ControlReplyMessage(reply: .done)
            case .list(let service):
                let all = record.items[owner, default: [:]].values.map(\.0).filter { service == nil || $0.service == service }
                return ControlReplyMessage(reply: .items(all.sorted { $0.account < $1.account }))
            case .search(let query):
                let found = record.items[owner, default: [:]].values.filter { query.matches($0.0) }.sorted { $0.0.account < $1.0.account }
                guard query.returnsSecrets else { return ControlReplyMessage(reply: .items(found.map(\.0))) }
                let secrets = found.flatMap(\.1).withUnsafeBytes { SecureBuffer(copying: $0) }
                return ControlReplyMessage(reply: .itemsWithSecrets(found.map(\.0), secretLengths: found.map(\.1.count)), secret: secrets)
            case .updateMatches(let query, let changes, _, _):
                let keys = record.items[owner, default: [:]].filter { query.matches($0.value.0) }.keys
                guard !keys.isEmpty else { throw ControlFailure(.notFound, "no item") }
                for key in keys {
                    record.items[owner]![key]!.0.label = changes.label ?? record.items[owner]![key]!.0.label
                    if let bytes { record.items[owner]![key]!.1 = bytes }
                }
                return ControlReplyMessage(reply: .done)
            case .deleteMatches(let query):
                let before = record.items[owner, default: [:]].count
                record.items[owner] = record.items[owner]?.filter { !query.matches($0.value.0) }
                guard record.items[owner, default: [:]].count < before else { throw ControlFailure(.notFound, "no item") }
                return ControlReplyMessage(reply: .done)
            }
        }
    }

    /// Writes the passphrase it got into the archive, reports progress twice, and says 3
    /// items were left out.
    func backup(into archive: FileDescriptor, passcode: SecureBuffer?, passphrase: SecureBuffer, caller: uid_t,
                progress: @escaping (UInt64, UInt64) -> Bool) throws(ControlFailure) -> BackupItemsLeftOut {
        guard let passcode else { throw ControlFailure(.usage, "this vault has a passcode") }
        try check(passcode)
        do throws(Errno) {
            try passphrase.withUnsafeBytes { bytes throws(Errno) in try archive.write(bytes, at: 0) }
        } catch {
            throw ControlFailure(.failure, "cannot write the archive: \(error)")
        }
        _ = progress(1, 10)
        usleep(300_000)  // past the interval between progress reports
        _ = progress(2, 20)
        return BackupItemsLeftOut(deviceBound: 3, otherUsers: caller == 0 ? 0 : 1)
    }

    private func check(_ passcode: SecureBuffer) throws(ControlFailure) {
        let given = passcode.withUnsafeBytes { Array($0) }
        guard given == record.withLock({ $0.passcode }) else { throw ControlFailure(.wrongPasscode, "wrong passcode") }
    }
}
