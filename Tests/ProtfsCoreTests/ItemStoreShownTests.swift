import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import Testing
@testable import ProtfsCore

/// The search the Secret Service makes (docs/CONTROL.md, `shown` and `locks`): items matched
/// by the attributes it shows, each answered with the lock the store's own table decides.
@Suite struct ItemStoreShownTests {
    typealias Fixture = ItemStoreTests.Fixture

    static func shown(_ attributes: [String: String]) -> ItemQuery {
        var query = ItemQuery(lookupAttributes: attributes)
        query.matchesShownAttributes = true
        return query
    }

    /// "web" has lookup attributes; "plain" has none, so it shows its service and account.
    static func fixture() throws -> Fixture {
        let fixture = try Fixture()
        try fixture.store.add(ItemAttributes(service: "svc", account: "web", lookupAttributes: ["service": "svc", "kind": "web"]),
                              owner: 1, secret: ItemStoreMatchTests.secret("w"))
        try fixture.store.add(ItemAttributes(service: "svc", account: "plain", accessibility: .afterFirstUnlock),
                              owner: 1, secret: ItemStoreMatchTests.secret("p"))
        return fixture
    }

    @Test func aSearchOfShownAttributesFindsItemsWithAndWithoutLookupAttributes() throws {
        let fixture = try Self.fixture()
        func accounts(_ attributes: [String: String]) throws -> [String] {
            try fixture.store.searchWithLocks(owner: 1, Self.shown(attributes)).items.map(\.account)
        }
        #expect(try accounts(["service": "svc"]) == ["plain", "web"])
        #expect(try accounts(["service": "svc", "username": "plain"]) == ["plain"])
        #expect(try accounts(["kind": "web"]) == ["web"])
        #expect(try accounts(["kind": "web", "username": "plain"]).isEmpty)
        #expect(try accounts([:]) == ["plain", "web"])
        // Without `shown`, the lookup attributes alone.
        #expect(try fixture.store.search(owner: 1, ItemQuery(lookupAttributes: ["service": "svc"])).map(\.account) == ["web"])
    }

    @Test func eachItemIsLockedAsTheStoreWouldRefuseItsSecret() throws {
        let fixture = try Self.fixture()
        let unlocked = try fixture.store.searchWithLocks(owner: 1, Self.shown([:]))
        #expect(unlocked.locked == [false, false] && unlocked.state == .unlocked)
        fixture.controller.lock(.now)
        let locked = try fixture.store.searchWithLocks(owner: 1, Self.shown([:]))
        #expect(locked.items.map(\.account) == ["plain", "web"] && locked.locked == [false, true] && locked.state == .locked)
        for (item, isLocked) in zip(locked.items, locked.locked) {
            let read = Result { () throws(ItemError) in
                try fixture.store.get(ItemIdentity(owner: 1, service: item.service, account: item.account)).1.wipe()
            }
            #expect((try? read.get()) == nil ? isLocked : !isLocked, "\(item.account)")
        }
    }
}
