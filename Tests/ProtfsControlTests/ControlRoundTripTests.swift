import Foundation
import ProtfsDomain
import ProtfsTestSupport
import Testing
import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCore
import ProtfsSystem
import Glibc

/// Every request through the real client and server, against the fake daemon.
@Suite struct ControlRoundTripTests {
    @Test func status() throws {
        let fixture = try ServerFixture()
        let reply = try fixture.client().send(.status)
        #expect(reply.uncounted == .status(fixture.handler.status()))
    }

    @Test func lockInEveryMode() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        for mode in [LockRequest.normal, .wait, .now] {
            #expect(try client.send(.lock(mode)) == .done)
        }
        #expect(fixture.handler.record.withLock { $0.locks } == [.normal, .wait, .now])
    }

    /// The daemon logs who asked (docs/SYSTEMD.md): the kernel's uid and pid of the peer and
    /// its command name, which here is this test process's.
    @Test func eachLockSaysWhoAsked() throws {
        let fixture = try ServerFixture()
        #expect(try fixture.client().send(.lock(.now)) == .done)
        let requester = try #require(fixture.handler.record.withLock { $0.requesters.first })
        #expect(requester.uid == getuid() && requester.pid == getpid())
        #expect(requester.command == Requester.commandName(of: getpid()) && requester.command?.isEmpty == false)
        #expect(requester.description.hasPrefix("uid \(getuid()) (pid \(getpid()), "), "\(requester)")
    }

    @Test func unlockWithTheRightAndTheWrongPasscode() throws {
        let fixture = try ServerFixture()
        fixture.handler.record.withLock { $0.state = .locked }
        let client = try fixture.client()
        #expect(throws: ControlFailure(.wrongPasscode, "wrong passcode")) {
            try client.send(.unlock, secrets: [secret(Array("guess".utf8))])
        }
        #expect(fixture.handler.record.withLock { $0.state } == .locked)
        #expect(try client.send(.unlock, secrets: [secret(FakeHandler.passcode)]) == .done)
        #expect(fixture.handler.record.withLock { $0.state } == .unlocked)
    }

    @Test func passcodeBytesArriveAsGiven() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        let new: [UInt8] = [0x00, 0xFF, 0x0A, 0x0D] + Array(repeating: 0x61, count: ControlLimits.maximumSecretLength - 4)
        #expect(try client.send(.changePasscode, secrets: [secret(FakeHandler.passcode), secret(new)]) == .done)
        #expect(fixture.handler.record.withLock { $0.passcode } == new)
        #expect(throws: ControlFailure(.wrongPasscode, "wrong passcode")) {
            try client.send(.changePasscode, secrets: [secret(FakeHandler.passcode), secret([1])])
        }
        #expect(try client.send(.unlock, secrets: [secret(new)]) == .done)
    }

    @Test func backingPath() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        #expect(try client.send(.backingPath([])) == .backingPath("."))
        #expect(try client.send(.backingPath([[0x61], [0xFF, 0x01]])) == .backingPath("61/ff1"))
        #expect(throws: ControlFailure(.notFound, "no such entry")) {
            try client.send(.backingPath([Array("missing".utf8)]))
        }
    }

    @Test("a backup request passes the archive's descriptor and its secrets, and streams progress")
    func backupPassesTheArchive() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        let path = NSTemporaryDirectory() + "/protfs-archive-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let archive = try FileDescriptor.open(path: path, [.readWrite, .create, .exclusive], mode: 0o600)
        defer {
            archive.close()
            unlink(path)
        }
        let passphrase: [UInt8] = [0x00, 0x0A, 0xFF] + Array("a backup passphrase".utf8)
        var reports: [[UInt64]] = []
        let leftOut = try client.backup(into: archive, passcode: secret(FakeHandler.passcode), passphrase: secret(passphrase)) {
            reports.append([$0, $1])
        }
        #expect(leftOut == BackupItemsLeftOut(deviceBound: 3, otherUsers: getuid() == 0 ? 0 : 1))
        #expect(reports == [[1, 10], [2, 20]])
        #expect(try archive.readAll() == passphrase)
        #expect(throws: ControlFailure(.wrongPasscode, "wrong passcode")) {
            try client.backup(into: archive, passcode: secret(Array("guess".utf8)), passphrase: secret(passphrase)) { _, _ in }
        }
    }

    @Test func noDaemonIsExitSix() throws {
        let fixture = try ServerFixture(start: false)
        #expect(throws: ControlFailure.self) { try fixture.client() }
        do {
            _ = try fixture.client()
        } catch {
            #expect(error.exitCode == .notFound)
            #expect(error.message.hasPrefix("no protfs daemon serves \(fixture.mountpoint)"))
        }
    }

    @Test func statusJSONHasEveryKey() throws {
        let fixture = try ServerFixture()
        guard case .status(let report) = try fixture.client().send(.status) else {
            Issue.record("no status")
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(report), as: UTF8.self)
        #expect(json == #"{"autolock":0,"backing":"/srv/backing","callerMayLock":true,"cipher":null,"failedAttempts":0,"grace":10,"graceSecondsLeft":null,"items":0,"mountpoint":"/mnt/fake","owner":\#(getuid()),"passcodeCountedByTPM":null,"passcodeSet":true,"pid":4242,"requestsServed":1,"retryAfterSeconds":null,"state":"unlocked","tpmLockoutRetryAfterSeconds":null}"#)
    }
}
