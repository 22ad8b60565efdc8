import Foundation
import Glibc
import ProtfsTestSupport
import Testing
@testable import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCore
import Synchronization

/// Whatever a client sends, the server answers with a clear failure or closes the
/// connection, and goes on serving.
@Suite struct ControlRobustnessTests {
    private func failureMessage(_ reply: ControlReply?) -> String? {
        guard case .failure(let failure)? = reply else { return nil }
        #expect(failure.exitCode == .failure)
        return failure.message
    }

    @Test func garbageIsRefused() throws {
        let fixture = try ServerFixture()
        let connection = try fixture.rawConnection()
        try connection.send(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        let message = try #require(failureMessage(try connection.reply()))
        #expect(message.contains("not a protfs control message"))
        #expect((try? connection.reply()) == nil)  // and closed (reset: the rest was never read)
        #expect(try fixture.client().send(.status) == .status(fixture.handler.status()))
    }

    @Test func overLongFieldsAreRefusedBeforeAnythingIsRead() throws {
        let fixture = try ServerFixture()
        let cases: [([UInt8], String)] = [
            (ControlWire.magic + [0x7F, 0xFF, 0xFF, 0xFF], "header length 2147483647 is outside 1...65536"),
            (ControlWire.magic + [0, 0, 0, 0], "header length 0 is outside"),
            (try encodedRequest(.unlock, secrets: [[1]]).dropLast(5) + [0, 0, 0x10, 0x01], "passcode length 4097 is outside 1...4096"),
            (try encodedRequest(.unlock, secrets: [[1]]).dropLast(5) + [0, 0, 0, 0], "passcode length 0"),
        ]
        for (bytes, expected) in cases {
            let connection = try fixture.rawConnection()
            try connection.send(bytes)
            let message = try #require(failureMessage(try connection.reply()))
            #expect(message.contains(expected), "\(message)")
        }
    }

    @Test func malformedHeadersAreRefused() throws {
        let fixture = try ServerFixture()
        let headers = [
            #"{"request":"reboot"}"#: "unknown request 'reboot'",
            #"{"request":"status","extra":1}"#: "unexpected key extra",
            #"{"request":"lock"}"#: "missing key mode",
            #"{"request":"lock","mode":"later"}"#: "mode",
            #"{"request":"backingPath","components":[[46,46]]}"#: "'.' or '..'",
            #"{"request":"backingPath","components":[[97,47,98]]}"#: "'/' or NUL",
            #"{"request":"backingPath","components":[[256]]}"#: "malformed message",
            #"[[[[[[[[[[[[1]]]]]]]]]]]]"#: "nested deeper",
            "not json": "malformed message",
        ]
        for (header, expected) in headers {
            let bytes = Array(header.utf8)
            let connection = try fixture.rawConnection()
            try connection.send(ControlWire.magic + ControlWire.frame(bytes))
            let message = try #require(failureMessage(try connection.reply()), "\(header)")
            #expect(message.contains(expected), "\(header): \(message)")
        }
        #expect(try fixture.client().send(.status) == .status(fixture.handler.status()))
    }

    @Test func aHalfSentMessageTimesOut() throws {
        let fixture = try ServerFixture()
        let connection = try fixture.rawConnection()
        let whole = try encodedRequest(.unlock, secrets: [FakeHandler.passcode])
        try connection.send(Array(whole.dropLast(3)))
        let started = Date()
        let message = try #require(failureMessage(try connection.reply(within: .seconds(15))))
        #expect(message.contains("not complete within 5 s"))
        #expect(Date().timeIntervalSince(started) < 8)
        #expect(fixture.handler.record.withLock { $0.state } == .unlocked)
    }

    @Test func aClientThatLeavesMidMessageIsForgotten() throws {
        let fixture = try ServerFixture()
        for length in [1, 4, 6, 20] {
            let connection = try fixture.rawConnection()
            try connection.send(Array(try encodedRequest(.status).prefix(length)))
            _ = consume connection  // closes it
        }
        #expect(try fixture.client().send(.status) == .status(fixture.handler.status()))
    }

    @Test func manyClientsAtOnce() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        let results = Mutex<[Result<ControlReply, ControlFailure>]>([])
        let clients = 150
        let go = Mutex(false)
        for index in 0..<clients {
            Thread.detachNewThread {
                while !go.withLock({ $0 }) { usleep(1_000) }
                let reply = Result { () throws(ControlFailure) in try client.send(index % 2 == 0 ? .status : .lock(.normal)) }
                results.withLock { $0.append(reply) }
            }
        }
        go.withLock { $0 = true }
        let deadline = Date().addingTimeInterval(30)
        while results.withLock({ $0.count }) < clients && Date() < deadline { usleep(10_000) }
        // Every request is answered: served, or refused as busy when more than the cap
        // arrive at the same moment; none is lost or garbled.
        #expect(results.withLock { $0.count } == clients)
        for result in results.withLock({ $0 }) {
            switch result {
            case .success(.done), .success(.status): break
            case .success(let other): Issue.record("unexpected reply \(other)")
            case .failure(let failure): #expect(failure.message.contains("busy"), "\(failure.message)")
            }
        }
        #expect(try client.send(.status) == .status(fixture.handler.status()))
    }
}

