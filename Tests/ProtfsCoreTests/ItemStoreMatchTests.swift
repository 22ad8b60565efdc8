import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import Testing
@testable import ProtfsCore

/// Searches, updates and deletes by query in the store: one state of the store per request,
/// each secret with its own item, and an update that changes all matches or none.
@Suite struct ItemStoreMatchTests {
    typealias Fixture = ItemStoreTests.Fixture

    static func secret(_ text: String) -> SecureBuffer { Array(text.utf8).withUnsafeBytes { SecureBuffer(copying: $0) } }

    static func add(_ fixture: Fixture, _ account: String, _ secret: String, label: String = "",
                    _ accessibility: ItemAccessibility = .whenUnlocked, owner: UInt32 = 1) throws {
        try fixture.store.add(ItemAttributes(service: "svc", account: account, label: label, accessibility: accessibility),
                              owner: owner, secret: Self.secret(secret))
    }

    static func withSecrets(_ query: ItemQuery) -> ItemQuery {
        var query = query
        query.returnsSecrets = true
        return query
    }

    static func secrets(_ matches: ItemStore.Matches) -> [String] {
        var offset = 0
        return matches.secrets.withUnsafeBytes { bytes in
            matches.secretLengths.map { length in
                defer { offset += length }
                return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
            }
        }
    }

    /// Owner 1's "a" and "c" labelled `label`, "b" not; owner 2's "a" labelled too.
    static func fixture(labelling label: String) throws -> Fixture {
        let fixture = try Fixture()
        try Self.add(fixture, "c", "secret of c", label: label)
        try Self.add(fixture, "a", "", label: label)
        try Self.add(fixture, "b", "secret of b")
        try Self.add(fixture, "a", "other owner's", label: label, owner: 2)
        return fixture
    }

    @Test func aSearchAnswersEachMatchWithItsOwnSecret() throws {
        let fixture = try Self.fixture(labelling: "l")
        var query = ItemQuery(service: "svc")
        query.label = "l"
        let found = try fixture.store.searchWithSecrets(owner: 1, Self.withSecrets(query))
        #expect(found.items.map(\.account) == ["a", "c"] && Self.secrets(found) == ["", "secret of c"])
        query.limit = 1
        #expect(try fixture.store.search(owner: 1, query).map(\.account) == ["a"])
        #expect(try fixture.store.searchWithSecrets(owner: 3, Self.withSecrets(query)).items.isEmpty)
    }

    @Test func secretsAreRefusedWhenOneClassIsLockedAndAttributesAreNot() throws {
        let fixture = try Fixture()
        try Self.add(fixture, "a", "always", .always)
        try Self.add(fixture, "b", "when unlocked")
        fixture.controller.lock(.now)
        #expect(throws: ItemError.refusedByLock(accessibility: .whenUnlocked, state: .locked)) {
            try fixture.store.searchWithSecrets(owner: 1, Self.withSecrets(ItemQuery()))
        }
        #expect(try fixture.store.search(owner: 1, ItemQuery()).count == 2)
        var always = ItemQuery()
        always.accessibility = .always
        #expect(try Self.secrets(fixture.store.searchWithSecrets(owner: 1, Self.withSecrets(always))) == ["always"])
    }

    @Test func secretsBeyondOneReplyAreRefusedBeforeAnyIsRead() throws {
        let fixture = try Fixture()
        let count = ItemLimits.maximumMatchedSecretBytes / ItemLimits.maximumSecretLength + 1
        for number in 0..<count {
            try fixture.store.add(ItemAttributes(service: "svc", account: "\(number)"), owner: 1,
                                  secret: SecureBuffer(count: ItemLimits.maximumSecretLength))
        }
        do throws(ItemError) {
            _ = try fixture.store.searchWithSecrets(owner: 1, Self.withSecrets(ItemQuery()))
            Issue.record("\(count) secrets of 64 KiB were answered at once")
        } catch {
            #expect(error.exitCode == .usage && error.description.contains("limit"))
        }
        var fewer = Self.withSecrets(ItemQuery())
        fewer.limit = count - 1
        #expect(try fixture.store.searchWithSecrets(owner: 1, fewer).items.count == count - 1)
    }

    @Test func anUpdateChangesEveryMatchOrNone() throws {
        let fixture = try Fixture()
        try Self.add(fixture, "a", "1", label: "old")
        try Self.add(fixture, "b", "2", label: "old")
        try Self.add(fixture, "c", "3", label: "kept")
        var old = ItemQuery()
        old.label = "old"
        try fixture.store.updateMatches(owner: 1, old, changes: ItemChanges(label: "new"), rename: ItemRename(),
                                        secret: Self.secret("same"))
        var new = ItemQuery()
        new.label = "new"
        let changed = try fixture.store.searchWithSecrets(owner: 1, Self.withSecrets(new))
        #expect(changed.items.map(\.account) == ["a", "b"] && Self.secrets(changed) == ["same", "same"])

        // Two items renamed to one name, or one renamed to another's: nothing changes.
        #expect(throws: ItemError.duplicate(service: "svc", account: "z")) {
            try fixture.store.updateMatches(owner: 1, new, changes: ItemChanges(label: "x"), rename: ItemRename(account: "z"), secret: nil)
        }
        #expect(throws: ItemError.duplicate(service: "svc", account: "c")) {
            try fixture.store.updateMatches(owner: 1, ItemQuery(account: "a"), changes: ItemChanges(), rename: ItemRename(account: "c"),
                                            secret: nil)
        }
        #expect(try fixture.store.search(owner: 1, new).map(\.account) == ["a", "b"])

        // A class locked for one match: the other is not changed either.
        try Self.add(fixture, "d", "4", label: "new", .always)
        fixture.controller.lock(.now)
        #expect(throws: ItemError.refusedByLock(accessibility: .whenUnlocked, state: .locked)) {
            try fixture.store.updateMatches(owner: 1, new, changes: ItemChanges(), rename: ItemRename(), secret: Self.secret("x"))
        }
        var always = ItemQuery(account: "d")
        always.returnsSecrets = true
        #expect(try Self.secrets(fixture.store.searchWithSecrets(owner: 1, always)) == ["4"])
        #expect(throws: ItemError.noMatch) {
            try fixture.store.updateMatches(owner: 1, ItemQuery(account: "nobody"), changes: ItemChanges(), rename: ItemRename(), secret: nil)
        }
    }

    @Test func aRenameMovesTheSecretAndTheServiceAttributes() throws {
        let fixture = try Fixture()
        try fixture.store.add(ItemAttributes(service: "svc", account: "a", lookupAttributes: ["service": "svc", "username": "a"]),
                              owner: 1, secret: Self.secret("kept"))
        try fixture.store.updateMatches(owner: 1, ItemQuery(account: "a"), changes: ItemChanges(), rename: ItemRename(account: "b"),
                                        secret: nil)
        let moved = try fixture.store.searchWithSecrets(owner: 1, Self.withSecrets(ItemQuery()))
        #expect(moved.items.map(\.account) == ["b"] && Self.secrets(moved) == ["kept"])
        #expect(moved.items.first?.lookupAttributes == ["service": "svc", "username": "b"])
        #expect(try fixture.store.get(ItemIdentity(owner: 1, service: "svc", account: "b")).1.count == 4)
    }

    @Test func aDeleteRemovesEveryMatchInEveryState() throws {
        let fixture = try Self.fixture(labelling: "gone")
        fixture.controller.lock(.now)
        var gone = ItemQuery()
        gone.label = "gone"
        #expect(try fixture.store.deleteMatches(owner: 1, gone) == 2)
        #expect(try fixture.store.list(owner: 1).map(\.account) == ["b"])
        #expect(try fixture.store.list(owner: 2).count == 1)
        #expect(throws: ItemError.noMatch) { try fixture.store.deleteMatches(owner: 1, gone) }
    }
}
