import ProtfsTestSupport
import ProtfsDomain
import Testing
@testable import ProtfsControlProtocol

/// The wire format on its own: exact encodings, strict decoding, and a seeded fuzz loop
/// over the decoders.
@Suite struct ControlWireTests {
    static let requests: [(ControlRequest, [[UInt8]])] = [
        (.status, []),
        (.lock(.normal), []), (.lock(.wait), []), (.lock(.now), []),
        (.unlock, [Array("passcode".utf8)]),
        (.changePasscode, [Array("old".utf8), [0, 0xFF, 0x0A]]),
        (.backingPath([Array("dir".utf8), [0xC3, 0x28], Array(repeating: 0x61, count: 255)]), []),
        (.watch, []),
        (.item(ItemRequest(uid: nil, .add(ItemAttributes(service: "svc", account: "acct", label: "L", generic: [0, 0xFF],
                                                         accessibility: .afterFirstUnlock)))), [[0, 0x0A]]),
        (.item(ItemRequest(uid: 1000, .add(ItemAttributes(service: "s", account: "")))), [[]]),
        (.item(ItemRequest(uid: nil, .get(service: "s", account: "a"))), []),
        (.item(ItemRequest(uid: 0, .update(service: "s", account: "a", changes: ItemChanges(label: "x", accessibility: .always),
                                           changesSecret: true))), [[1, 2, 3]]),
        (.item(ItemRequest(uid: nil, .update(service: "s", account: "a", changes: ItemChanges(), changesSecret: false))), []),
        (.item(ItemRequest(uid: nil, .delete(service: "s", account: "a"))), []),
        (.item(ItemRequest(uid: nil, .list(service: nil))), []),
        (.item(ItemRequest(uid: 7, .list(service: "s"))), []),
        (.item(ItemRequest(uid: nil, .search(ItemQuery(lookupAttributes: ["xdg:schema": "org.example", "user": "a"])))), []),
        (.item(ItemRequest(uid: 3, .search(ItemQuery(service: "s", account: "a")))), []),
        (.item(ItemRequest(uid: nil, .update(service: "s", account: "a",
                                             changes: ItemChanges(lookupAttributes: ["k": "v"], contentType: "text/plain"),
                                             changesSecret: false))), []),
        (.item(ItemRequest(uid: nil, .search(Self.fullQuery))), []),
        (.item(ItemRequest(uid: nil, .updateMatches(Self.fullQuery, changes: ItemChanges(label: "x"), rename: ItemRename(account: "b"),
                                                    changesSecret: true))), [[]]),
        (.item(ItemRequest(uid: 2, .updateMatches(ItemQuery(), changes: ItemChanges(), rename: ItemRename(), changesSecret: false))), []),
        (.item(ItemRequest(uid: nil, .deleteMatches(Self.fullQuery))), []),
        (.backup(passcode: true), [Array("passcode".utf8), [0, 0x0A, 0xFF]]),
        (.backup(passcode: false), [Array("passphrase".utf8)]),
    ]

    /// A query that names every field (`SecItemCopyMatching`'s, matched by the daemon).
    static let fullQuery = ItemQuery(service: "s", account: "a", label: "L", description: "D", comment: "C", generic: [0, 0xFF],
                                     accessibility: .afterFirstUnlockThisDeviceOnly,
                                     lookupAttributes: ["protfs:accessGroup": "TEAM.g"],
                                     absentLookupAttributes: ["protfs:class", "x"],
                                     lookupAttributeChoices: ["protfs:accessGroup": LookupAttributeChoice(values: ["app", "b"], orAbsent: true)],
                                     limit: 3, returnsSecrets: true)

    static let replies: [ControlReply] = [
        .done,
        .status(StatusReport(state: .locking, graceSecondsLeft: 3, pid: 1, mountpoint: "/m", backing: "/b", passcodeSet: true,
                             grace: .seconds(10), autolock: .seconds(60), failedAttempts: 5, retryAfterSeconds: 55)),
        .backingPath("AbC/dEf"),
        .failure(ControlFailure(.rateLimited, "too many wrong passcodes: retry in 55 s")),
        .watching(.beforeFirstUnlock),
        .event(.didBecomeAvailable),
        .items([ItemAttributes(service: "s", account: "a", label: "L", description: "D", comment: "C", generic: [1],
                               accessibility: .whenPasscodeSetThisDeviceOnly, created: 1, modified: 2)]),
        .items([]),
        .items([ItemAttributes(service: "s", account: "a", created: 1, modified: 2, lookupAttributes: ["user": "\u{e9}", "k": ""],
                               contentType: "text/plain")]),
        .backupProgress(objects: 12, bytes: 1 << 40),
        .backedUp(BackupItemsLeftOut(deviceBound: 4, otherUsers: 2)),
    ]

    @Test func requestsRoundTrip() throws {
        for (request, secrets) in Self.requests {
            var source = MemorySource(try encodedRequest(request, secrets: secrets))
            let message = try ControlWire.readRequest(from: &source)
            #expect(message.request == request)
            #expect(message.secrets.map { $0.withUnsafeBytes { Array($0) } } == secrets)
            #expect(source.offset == source.bytes.count)
        }
    }

    @Test func theEncodingIsTheDocumentedOne() throws {
        let bytes = try encodedRequest(.unlock, secrets: [[0x70, 0x77]])
        let header = Array(#"{"request":"unlock"}"#.utf8)
        #expect(bytes == [0x50, 0x46, 0x43, 0x01, 0, 0, 0, UInt8(header.count)] + header + [0, 0, 0, 2, 0x70, 0x77])
    }

    @Test func repliesRoundTrip() throws {
        var sink = MemorySink()
        for reply in Self.replies { try ControlWire.write(reply, to: &sink) }
        var source = MemorySource(sink.bytes)
        for reply in Self.replies { #expect(try ControlWire.readReply(from: &source) == reply) }
        #expect(try ControlWire.readReply(from: &source) == nil)
    }

    /// `grace` and `autolock` are Durations in the programs and whole seconds under their old
    /// names on the wire (docs/CONTROL.md): a status of an older daemon still reads, and a new
    /// one still says what older clients and scripts read.
    @Test func statusDurationsTravelAsWholeSecondsUnderTheirNames() throws {
        let older = #"{"reply":"status","status":{"state":"unlocked","graceSecondsLeft":null,"pid":7,"mountpoint":"/m","#
            + #""backing":"/b","passcodeSet":true,"grace":30,"autolock":0,"failedAttempts":0,"retryAfterSeconds":null}}"#
        var source = MemorySource(ControlWire.frame(Array(older.utf8)))
        guard case .status(let report)? = try ControlWire.readReply(from: &source) else {
            Issue.record("an older daemon's status was not read")
            return
        }
        #expect(report.grace == .seconds(30) && report.autolock == .zero && report.cipher == nil)
        let sent = String(decoding: try ControlWire.encoded(.status(report)).dropFirst(4), as: UTF8.self)
        #expect(sent.contains(#""grace":30"#) && sent.contains(#""autolock":0"#), "\(sent)")
    }

    @Test func aSecretTooLongForTheWireIsAnErrorAndNothingIsSent() {
        var sink = MemorySink()
        let tooLong = secret([UInt8](repeating: 0, count: ItemLimits.maximumSecretLength + 1))
        let request = ControlRequest.item(ItemRequest(uid: nil, .add(ItemAttributes(service: "s", account: "a"))))
        #expect(throws: ControlWireError.self) { try ControlWire.write(request, secrets: [tooLong], to: &sink) }
        #expect(sink.bytes.isEmpty)
    }

    @Test func aStreamThatEndsInsideAMessageIsTruncated() throws {
        let whole = try encodedRequest(.changePasscode, secrets: [[1, 2], [3]])
        for length in 1..<whole.count {
            var source = MemorySource(Array(whole.prefix(length)))
            #expect(throws: ControlWireError.self) { try ControlWire.readRequest(from: &source) }
        }
        var empty = MemorySource([])
        #expect(throws: ControlWireError.closed) { try ControlWire.readRequest(from: &empty) }
    }

    @Test func depthIsCountedOutsideStrings() {
        #expect(JSONDepth.isWithin(2, Array(#"{"a":["[[[[{{{{"]}"#.utf8)))
        #expect(!JSONDepth.isWithin(2, Array(#"{"a":[[1]]}"#.utf8)))
        #expect(JSONDepth.isWithin(2, Array(#"{"a":"\"[[[["}"#.utf8)))
    }

    /// Random bytes, and valid messages with bytes flipped, inserted, dropped or lengths
    /// rewritten: every input decodes or throws; nothing crashes or loops.
    @Test func fuzzedDecoders() throws {
        var random = SeededGenerator(seed: 0x5EED_C0DE)
        let requests = try Self.requests.map { try encodedRequest($0.0, secrets: $0.1) }
        var replies: [[UInt8]] = []
        for reply in Self.replies {
            var sink = MemorySink()
            try ControlWire.write(reply, to: &sink)
            replies.append(sink.bytes)
        }
        var decoded = 0
        for round in 0..<4000 {
            let seed = (round % 2 == 0 ? requests : replies).randomElement(using: &random)!
            let input = mutate(seed, round: round, using: &random)
            var source = MemorySource(input)
            if round % 2 == 0 {
                if (try? ControlWire.readRequest(from: &source)) != nil { decoded += 1 }
            } else {
                if (try? ControlWire.readReply(from: &source)) != nil { decoded += 1 }
            }
        }
        #expect(decoded > 0)  // some mutations leave a valid message; most do not
    }

    private func mutate(_ seed: [UInt8], round: Int, using random: inout SeededGenerator) -> [UInt8] {
        var bytes = seed
        switch round % 7 {
        case 0:
            return (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case 1:
            for _ in 0...Int.random(in: 0...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0...7, using: &random))
            }
        case 2:
            bytes.insert(UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...bytes.count, using: &random))
        case 3:
            bytes.remove(at: Int.random(in: 0..<bytes.count, using: &random))
        case 4:
            // A length field rewritten: where requests and replies keep their header length.
            let at = bytes.starts(with: ControlWire.magic) ? 4 : 0
            let length = UInt32.random(in: 0...UInt32.max, using: &random)
            bytes.replaceSubrange(at..<at + 4, with: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        case 5:
            // JSON-level damage: a structural byte swapped for another.
            let structural: [UInt8] = Array("{}[]\":,0-9ae\\".utf8)
            for _ in 0...Int.random(in: 0...3, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = structural.randomElement(using: &random)!
            }
        default:
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
                + (0..<Int.random(in: 0...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        return bytes
    }
}
