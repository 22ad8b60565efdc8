import Foundation
import ProtfsDomain
import Testing
import ProtfsControl
@testable import ProtfsControlClient
import ProtfsCore

/// Every request through the real client and server, against the fake daemon.
@Suite struct ControlRoundTripTests {
    @Test func status() throws {
        let fixture = try ServerFixture()
        let reply = try fixture.client().send(.status)
        #expect(reply == .status(fixture.handler.status()))
    }

    @Test func lockInEveryMode() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        for mode in [LockRequest.normal, .wait, .now] {
            #expect(try client.send(.lock(mode)) == .done)
        }
        #expect(fixture.handler.record.withLock { $0.locks } == [.normal, .wait, .now])
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
        #expect(json == #"{"autolock":0,"backing":"/srv/backing","failedAttempts":0,"grace":10,"graceSecondsLeft":null,"items":0,"mountpoint":"/mnt/fake","passcodeSet":true,"pid":4242,"retryAfterSeconds":null,"state":"unlocked"}"#)
    }
}
