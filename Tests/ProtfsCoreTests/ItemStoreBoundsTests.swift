import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import Testing
@testable import ProtfsCore

/// The bounds issue 38 added: attribute bytes per owner and for the other users together,
/// counted in the index as secret bytes are, and listings judged before any record is read
/// (one user's 16,384 items of 62 KB of attributes each took the daemon to 4 GB).
@Suite struct ItemStoreBoundsTests {
    typealias Fixture = ItemStoreTests.Fixture

    /// An item whose attributes take about `bytes` bytes (in its comment and label).
    static func item(_ account: String, attributeBytes bytes: Int) -> ItemAttributes {
        ItemAttributes(service: "svc", account: account, label: String(repeating: "l", count: min(bytes, 1024)),
                       comment: String(repeating: "c", count: max(0, min(bytes - 1024, 1024))), accessibility: .whenUnlocked)
    }

    @Test func attributeBytesAreBoundedPerOwnerAndOnlyGrowthIsRefused() throws {
        let fixture = try Fixture(bounds: ItemStore.Bounds(items: 100, secretBytes: 1000, othersItems: 100, othersSecretBytes: 1000,
                                                           attributeBytes: 5000, othersAttributeBytes: 100_000))
        try fixture.store.add(Self.item("1", attributeBytes: 2000), owner: 1, secret: ItemStoreTests.secret(0))
        try fixture.store.add(Self.item("2", attributeBytes: 2000), owner: 1, secret: ItemStoreTests.secret(0))
        #expect {
            try fixture.store.add(Self.item("3", attributeBytes: 2000), owner: 1, secret: ItemStoreTests.secret(0))
        } throws: { error in
            guard case .attributesTooLarge(let total, 5000) = error as? ItemError else { return false }
            return total > 5000
        }
        // Another owner has room of its own; a smaller label is no growth, a larger one is.
        try fixture.store.add(Self.item("3", attributeBytes: 2000), owner: 7, secret: ItemStoreTests.secret(0))
        let identity = ItemIdentity(owner: 1, service: "svc", account: "2")
        try fixture.store.update(identity, changes: ItemChanges(label: "short"), secret: nil)
        #expect(throws: ItemError.self) {
            try fixture.store.update(identity, changes: ItemChanges(comment: String(repeating: "x", count: 1024),
                                                                   generic: [UInt8](repeating: 1, count: 4096)), secret: nil)
        }
        try fixture.store.add(Self.item("3", attributeBytes: 500), owner: 1, secret: ItemStoreTests.secret(0))
    }

    @Test func theOtherUsersShareOneRoomOfAttributes() throws {
        let fixture = try Fixture(bounds: ItemStore.Bounds(items: 100, secretBytes: 1000, othersItems: 100, othersSecretBytes: 1000,
                                                           attributeBytes: 5000, othersAttributeBytes: 5000))
        try fixture.store.add(Self.item("a", attributeBytes: 2000), owner: 1000, secret: ItemStoreTests.secret(0))
        try fixture.store.add(Self.item("a", attributeBytes: 2000), owner: 1001, secret: ItemStoreTests.secret(0))
        #expect(throws: ItemError.othersRoomFull(items: 100, secretBytes: 1000, attributeBytes: 5000)) {
            try fixture.store.add(Self.item("a", attributeBytes: 2000), owner: 1002, secret: ItemStoreTests.secret(0))
        }
        // Root and the mounting user keep theirs.
        for owner: UInt32 in [0, 1] {
            try fixture.store.add(Self.item("a", attributeBytes: 2000), owner: owner, secret: ItemStoreTests.secret(0))
        }
    }

    /// Judged from the index before any record is read: refused with the reason, and a
    /// narrower query (a limit, a service no large item has) is answered.
    @Test func aListingTooLargeForOneReplyIsRefusedBeforeItIsBuilt() throws {
        let items = 8, bytes = 2000
        let fixture = try Fixture(bounds: ItemStore.Bounds(items: 100, secretBytes: 1000, othersItems: 100, othersSecretBytes: 1000,
                                                           listingBytes: 4 * ItemLimits.listingBytes(attributeBytes: bytes)))
        for account in 0 ..< items {
            try fixture.store.add(Self.item(String(account), attributeBytes: bytes), owner: 5, secret: ItemStoreTests.secret(1))
        }
        try fixture.store.add(ItemAttributes(service: "small", account: "a", accessibility: .whenUnlocked), owner: 5,
                              secret: ItemStoreTests.secret(1))
        #expect {
            try fixture.store.list(owner: 5)
        } throws: { error in
            guard case .listingTooLarge(items + 1, let total, let limit) = error as? ItemError else { return false }
            return total > limit && "\(error)".contains("narrow the query")
        }
        #expect(throws: ItemError.self) { try fixture.store.searchWithSecrets(owner: 5, ItemQuery(returnsSecrets: true)) }
        #expect(try fixture.store.search(owner: 5, ItemQuery(limit: 3)).count == 3)
        #expect(try fixture.store.list(owner: 5, service: "small").count == 1)
    }
}
