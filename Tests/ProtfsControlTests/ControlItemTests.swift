import Glibc
import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsDomain
import ProtfsTestSupport
import Testing

/// Item requests and replies through the real client and server (docs/CONTROL.md): secrets of
/// every length cross the wire byte-exact outside the JSON, and each request acts for the
/// peer's uid.
@Suite struct ControlItemTests {
    private func add(_ client: ControlClient, _ account: String, secret bytes: [UInt8], uid: UInt32? = nil) throws {
        let item = ItemAttributes(service: "svc", account: account, label: "label \(account)", generic: [0, 1, 2],
                                  accessibility: .afterFirstUnlockThisDeviceOnly)
        #expect(try client.send(.item(ItemRequest(uid: uid, .add(item))), secrets: [secret(bytes)]) == .done)
    }

    private func get(_ client: ControlClient, _ account: String) throws -> (ItemAttributes, [UInt8]) {
        let message = try client.exchange(.item(ItemRequest(uid: nil, .get(service: "svc", account: account))))
        guard case .item(let item) = message.reply, let secret = message.secret else {
            throw ControlFailure(.failure, "unexpected \(message.reply)")
        }
        return (item, secret.withUnsafeBytes { Array($0) })
    }

    @Test func secretsOfEveryLengthRoundTrip() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        let secrets: [String: [UInt8]] = [
            "empty": [],
            "binary": [0x00, 0x0A, 0xFF, 0x0D, 0x00, 0x0A],
            "largest": (0..<ItemLimits.maximumSecretLength).map { UInt8(truncatingIfNeeded: $0 &* 7) },
        ]
        for (account, bytes) in secrets { try add(client, account, secret: bytes) }
        for (account, bytes) in secrets {
            let (item, got) = try get(client, account)
            #expect(got == bytes)
            #expect(item.generic == [0, 1, 2] && item.accessibility == .afterFirstUnlockThisDeviceOnly)
        }
        #expect(fixture.handler.record.withLock { Set($0.itemOwners) } == [getuid()])
    }

    /// Issue 38: a reply beyond the protocol's bound was dropped in silence (the client saw the
    /// connection close). The daemon's item store refuses such listings before it builds them;
    /// whatever still exceeds the bound is answered with a failure that says so.
    @Test func aReplyTooLargeForTheWireIsRefusedWithTheReason() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        let label = String(repeating: "x", count: 60_000)
        for account in 0 ... ControlLimits.maximumReplyLength / label.utf8.count {
            let item = ItemAttributes(service: "svc", account: String(account), label: label)
            #expect(try client.send(.item(ItemRequest(uid: nil, .add(item))), secrets: [secret([1])]) == .done)
        }
        let refusal = #expect(throws: ControlFailure.self) { try client.send(.item(ItemRequest(uid: nil, .list(service: nil)))) }
        #expect(refusal?.message.contains("the answer would take") == true, "\(refusal?.message ?? "")")
    }

    @Test func updateListAndDelete() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        try add(client, "a", secret: [1])
        let changes = ItemChanges(label: "new", accessibility: .always)
        let update = ItemRequest(uid: nil, .update(service: "svc", account: "a", changes: changes, changesSecret: true))
        #expect(try client.send(.item(update), secrets: [secret([9, 9])]) == .done)
        let (item, bytes) = try get(client, "a")
        #expect(item.label == "new" && item.accessibility == .always && bytes == [9, 9])
        let labelOnly = ItemRequest(uid: nil, .update(service: "svc", account: "a", changes: ItemChanges(label: "x"), changesSecret: false))
        #expect(try client.send(.item(labelOnly)) == .done)
        guard case .items(let listed) = try client.send(.item(ItemRequest(uid: nil, .list(service: nil)))) else {
            Issue.record("no list")
            return
        }
        #expect(listed.map(\.label) == ["x"])
        #expect(try client.send(.item(ItemRequest(uid: nil, .delete(service: "svc", account: "a")))) == .done)
        #expect(throws: ControlFailure(.notFound, "no item")) {
            try client.send(.item(ItemRequest(uid: nil, .delete(service: "svc", account: "a"))))
        }
    }

    /// `SecItemCopyMatching`'s request: the whole query in the header, every match's secret
    /// after it in one frame, each as long as the reply says; updates and deletes of matches.
    @Test func matchesCarryTheirSecretsInOneReply() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        try add(client, "a", secret: [1])
        try add(client, "b", secret: [])
        try add(client, "c", secret: [3, 3, 3])
        var query = ItemQuery(service: "svc")
        query.generic = [0, 1, 2]
        query.accessibility = .afterFirstUnlockThisDeviceOnly
        query.absentLookupAttributes = ["protfs:class"]
        query.returnsSecrets = true
        let message = try client.exchange(.item(ItemRequest(uid: nil, .search(query))))
        guard case .itemsWithSecrets(let items, let lengths) = message.reply, let secrets = message.secret else {
            Issue.record("unexpected \(message.reply)")
            return
        }
        #expect(items.map(\.account) == ["a", "b", "c"] && lengths == [1, 0, 3])
        #expect(secrets.withUnsafeBytes { Array($0) } == [1, 3, 3, 3])

        var some = ItemQuery(service: "svc", account: "c")
        some.label = "label c"
        some.limit = 1
        let update = ItemRequest(uid: nil, .updateMatches(some, changes: ItemChanges(label: "x"), rename: ItemRename(account: "d"),
                                                          changesSecret: true))
        #expect(try client.send(.item(update), secrets: [secret([4])]) == .done)
        #expect(try get(client, "c").0.label == "x" && get(client, "c").1 == [4])
        #expect(try client.send(.item(ItemRequest(uid: nil, .deleteMatches(ItemQuery(service: "svc"))))) == .done)
        #expect(throws: ControlFailure(.notFound, "no item")) { try get(client, "a") }
    }

    /// Secrets are sent only after a reply that announces them, exactly as long as it says.
    @Test func aSecretFrameOfAnotherLengthIsRefused() throws {
        let reply = ControlReply.itemsWithSecrets([ItemAttributes(service: "s", account: "a")], secretLengths: [2])
        var sink = MemorySink()
        try ControlWire.write(reply, secret: SecureBuffer(count: 2), to: &sink)
        var fits = MemorySource(sink.bytes)
        #expect(try ControlWire.readReplyMessage(from: &fits)?.secret?.count == 2)
        let header = sink.bytes.prefix(sink.bytes.count - 6)
        var longer = MemorySource(Array(header) + [0, 0, 0, 3, 1, 2, 3])
        #expect(throws: ControlWireError.lengthOutOfRange(field: "secret", length: 3, range: 2...2)) {
            try ControlWire.readReplyMessage(from: &longer)
        }
        let json = #"{"reply":"itemsWithSecrets","items":[],"secretLengths":[5]}"#
        var bad = MemorySource([0, 0, 0, UInt8(json.utf8.count)] + Array(json.utf8))
        #expect(throws: ControlWireError.malformed("secretLengths: secret lengths that do not fit the items")) {
            try ControlWire.readReplyMessage(from: &bad)
        }
    }

    @Test(.enabled(if: getuid() == 0)) func rootNamesAnotherOwnerWithUid() throws {
        let fixture = try ServerFixture()
        try add(try fixture.client(), "for 1234", secret: [7], uid: 1234)
        #expect(fixture.handler.record.withLock { $0.itemOwners } == [1234])
    }

    @Test func theWireCarriesTheSecretOutsideTheHeader() throws {
        let marker: [UInt8] = Array("SECRET-MARKER".utf8)
        let item = ItemAttributes(service: "s", account: "a")
        let bytes = try encodedRequest(.item(ItemRequest(uid: nil, .add(item))), secrets: [marker])
        let headerLength = Int(bytes[4]) << 24 | Int(bytes[5]) << 16 | Int(bytes[6]) << 8 | Int(bytes[7])
        let header = Array(bytes[8..<(8 + headerLength)])
        #expect(String(decoding: header, as: UTF8.self).hasPrefix(#"{"#))
        #expect(!String(decoding: header, as: UTF8.self).contains("SECRET"))
        #expect(Array(bytes[(8 + headerLength + 4)...]) == marker)
        var source = MemorySource(bytes)
        let message = try ControlWire.readRequest(from: &source)
        #expect(message.request == .item(ItemRequest(uid: nil, .add(item))))
        #expect(message.secrets.map { $0.withUnsafeBytes { Array($0) } } == [marker])
    }

    @Test func anUnknownAttributeIsRefused() throws {
        let header = #"{"request":"itemGet","uid":null,"service":"s","account":"a","secret":"x"}"#
        var source = MemorySource(ControlWire.magic + [0, 0, 0, UInt8(header.utf8.count)] + Array(header.utf8))
        #expect(throws: ControlWireError.malformed("unexpected key secret")) { try ControlWire.readRequest(from: &source) }
    }
}
