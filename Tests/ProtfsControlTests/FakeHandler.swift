import ProtfsControl
@testable import ProtfsControlClient
import ProtfsCore
import ProtfsCrypto
import ProtfsDomain
import Synchronization

/// A daemon stand-in: remembers what it was asked, knows one passcode, and lets tests emit
/// lock events to whoever watches.
final class FakeHandler: ControlHandler {
    static let passcode: [UInt8] = Array("open sesame".utf8)

    struct Record {
        var state: LockState = .unlocked
        var locks: [LockRequest] = []
        var passcode = FakeHandler.passcode
        var listeners: [@Sendable (LockEvent) -> Bool] = []
        var eventsDuringSubscribe: [LockEvent] = []
    }

    let record = Mutex(Record())

    func status() -> StatusReport {
        let state = record.withLock { $0.state }
        return StatusReport(state: state, graceSecondsLeft: state == .locking ? 7 : nil, pid: 4242, mountpoint: "/mnt/fake",
                            backing: "/srv/backing", passcodeSet: true, grace: 10, autolock: 0, failedAttempts: 0,
                            retryAfterSeconds: nil)
    }

    func lock(_ request: LockRequest) throws(ControlFailure) {
        record.withLock {
            $0.locks.append(request)
            $0.state = request == .normal ? .locking : .locked
        }
    }

    func unlock(passcode: SecureBuffer) throws(ControlFailure) {
        try check(passcode)
        record.withLock { $0.state = .unlocked }
    }

    func changePasscode(old: SecureBuffer, new: SecureBuffer) throws(ControlFailure) {
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

    private func check(_ passcode: SecureBuffer) throws(ControlFailure) {
        let given = passcode.withUnsafeBytes { Array($0) }
        guard given == record.withLock({ $0.passcode }) else { throw ControlFailure(.wrongPasscode, "wrong passcode") }
    }
}
