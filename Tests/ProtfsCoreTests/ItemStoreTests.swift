import Foundation
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import Testing
import ProtfsTestSupport
@testable import ProtfsCore

/// The item store on a real vault without FUSE: owners, duplicates, the per-owner bounds
/// (small ones here; the daemon uses `Bounds.standard`), and accessibility changes under the
/// lock, which need the old class and the new one.
@Suite struct ItemStoreTests {
    struct Fixture {
        let directory = TemporaryDirectory()
        let vault: Vault
        let controller: LockController
        let store: ItemStore

        /// Owners 0 and 1 are privileged, as root and the mounting user are in the daemon.
        init(bounds: ItemStore.Bounds = .standard) throws {
            let backing = directory.child("backing")
            _ = try Vault.initialize(backing: backing, protectionClass: .complete, deviceKeyPath: directory.child("device.key"),
                                     passcode: { passcode("right") }, kdf: .interactive)
            vault = try Vault.open(backing: backing, deviceKeyPath: directory.child("device.key"))
            try vault.unlock(passcode: passcode("right"))
            controller = LockController(vault: vault, initialState: .unlocked, grace: .zero, autolock: .zero)
            store = ItemStore(vault: vault, controller: controller, bounds: bounds, privilege: MountPrivilege(owner: 1))
        }
    }

    static func secret(_ count: Int) -> SecureBuffer { SecureBuffer(count: count) }

    static func item(_ account: String, _ accessibility: ItemAccessibility = .whenUnlocked) -> ItemAttributes {
        ItemAttributes(service: "svc", account: account, accessibility: accessibility)
    }

    @Test func ownersDuplicatesAndMissingItems() throws {
        let fixture = try Fixture()
        try fixture.store.add(Self.item("a"), owner: 1, secret: Self.secret(3))
        #expect(throws: ItemError.duplicate(service: "svc", account: "a")) {
            try fixture.store.add(Self.item("a"), owner: 1, secret: Self.secret(3))
        }
        try fixture.store.add(Self.item("a"), owner: 2, secret: Self.secret(5))  // another owner's own item
        #expect(try fixture.store.get(ItemIdentity(owner: 2, service: "svc", account: "a")).1.count == 5)
        #expect(throws: ItemError.notFound(service: "svc", account: "a")) {
            try fixture.store.get(ItemIdentity(owner: 3, service: "svc", account: "a"))
        }
        #expect(try fixture.store.list(owner: 1).map(\.account) == ["a"])
        #expect(fixture.store.count(owner: 3) == 0)
        let tooLong = Self.secret(ItemLimits.maximumSecretLength + 1)
        do throws(ItemError) {
            try fixture.store.add(Self.item("b"), owner: 1, secret: tooLong)
            Issue.record("a secret of 64 KiB + 1 was accepted")
        } catch {
            #expect(error.exitCode == .usage && error.description.contains("file of the same class"))
        }
    }

    @Test func theBoundsHoldPerOwner() throws {
        let fixture = try Fixture(bounds: ItemStore.Bounds(items: 3, secretBytes: 100, othersItems: 100, othersSecretBytes: 1000))
        try fixture.store.add(Self.item("1"), owner: 7, secret: Self.secret(40))
        try fixture.store.add(Self.item("2"), owner: 7, secret: Self.secret(60))
        #expect(throws: ItemError.tooLarge(total: 101, limit: 100)) {
            try fixture.store.add(Self.item("3"), owner: 7, secret: Self.secret(1))
        }
        try fixture.store.add(Self.item("3"), owner: 7, secret: Self.secret(0))
        #expect(throws: ItemError.tooMany(limit: 3)) { try fixture.store.add(Self.item("4"), owner: 7, secret: Self.secret(0)) }
        try fixture.store.add(Self.item("4"), owner: 8, secret: Self.secret(100))  // another owner's bounds
        // A new secret counts instead of the old one.
        let identity = ItemIdentity(owner: 7, service: "svc", account: "2")
        try fixture.store.update(identity, changes: ItemChanges(), secret: Self.secret(59))
        #expect(throws: ItemError.tooLarge(total: 101, limit: 100)) {
            try fixture.store.update(identity, changes: ItemChanges(), secret: Self.secret(61))
        }
        try fixture.store.delete(identity)
        try fixture.store.add(Self.item("5"), owner: 7, secret: Self.secret(60))
    }

    /// Any uid reaching the control socket may add items, and a user namespace gives one user
    /// 65,536 uids: before the shared bound, each of them had the per-owner room of its own.
    @Test func theOtherUsersShareOneRoomThatLeavesRootAndTheOwnerTheirs() throws {
        let fixture = try Fixture(bounds: ItemStore.Bounds(items: 2, secretBytes: 100, othersItems: 5, othersSecretBytes: 150))
        for uid: UInt32 in 1000 ..< 1005 { try fixture.store.add(Self.item("a"), owner: uid, secret: Self.secret(10)) }
        #expect(throws: ItemError.othersRoomFull(items: 5, secretBytes: 150, attributeBytes: ItemLimits.maximumAttributeBytesOfOtherUsers)) {
            try fixture.store.add(Self.item("a"), owner: 1005, secret: Self.secret(0))
        }
        #expect(throws: ItemError.othersRoomFull(items: 5, secretBytes: 150, attributeBytes: ItemLimits.maximumAttributeBytesOfOtherUsers)) {
            try fixture.store.add(Self.item("b"), owner: 1000, secret: Self.secret(0))
        }
        // Root and the mounting user keep their own room.
        for owner: UInt32 in [0, 1] {
            try fixture.store.add(Self.item("a"), owner: owner, secret: Self.secret(100))
            try fixture.store.add(Self.item("b"), owner: owner, secret: Self.secret(0))
        }
        // The shared secret bytes: a larger secret in an update counts only its growth.
        let identity = ItemIdentity(owner: 1000, service: "svc", account: "a")
        try fixture.store.update(identity, changes: ItemChanges(), secret: Self.secret(100))  // 140 of 150
        #expect(throws: ItemError.othersRoomFull(items: 5, secretBytes: 150, attributeBytes: ItemLimits.maximumAttributeBytesOfOtherUsers)) {
            try fixture.store.update(ItemIdentity(owner: 1001, service: "svc", account: "a"), changes: ItemChanges(),
                                     secret: Self.secret(21))
        }
        try fixture.store.update(ItemIdentity(owner: 1001, service: "svc", account: "a"), changes: ItemChanges(),
                                 secret: Self.secret(20))
        // Room freed by one other user is room for another.
        try fixture.store.delete(identity)
        try fixture.store.add(Self.item("a"), owner: 1005, secret: Self.secret(0))
    }

    @Test func aChangeOfAccessibilityNeedsBothClasses() throws {
        let fixture = try Fixture()
        try fixture.store.add(Self.item("c", .afterFirstUnlock), owner: 1, secret: Self.secret(4))
        try fixture.store.add(Self.item("a", .whenUnlocked), owner: 1, secret: Self.secret(4))
        fixture.controller.lock(.now)
        let afterFirstUnlock = ItemIdentity(owner: 1, service: "svc", account: "c")
        let whenUnlocked = ItemIdentity(owner: 1, service: "svc", account: "a")
        #expect(throws: ItemError.refusedByLock(accessibility: .whenUnlocked, state: .locked)) {
            try fixture.store.update(afterFirstUnlock, changes: ItemChanges(accessibility: .whenUnlocked), secret: nil)
        }
        #expect(throws: ItemError.refusedByLock(accessibility: .whenUnlocked, state: .locked)) {
            try fixture.store.update(whenUnlocked, changes: ItemChanges(accessibility: .always), secret: nil)
        }
        try fixture.store.update(afterFirstUnlock, changes: ItemChanges(accessibility: .alwaysThisDeviceOnly), secret: nil)
        try fixture.store.update(whenUnlocked, changes: ItemChanges(label: "still locked"), secret: nil)
        #expect(try fixture.store.list(owner: 1).map(\.accessibility) == [.whenUnlocked, .alwaysThisDeviceOnly])
        #expect(try fixture.store.get(afterFirstUnlock).1.count == 4)
    }

    /// Lookup attributes are kept, changed and searched in every lock state; a search with
    /// several pairs needs all of them, and finds nothing of another owner's.
    @Test func lookupAttributesAreSearchedInEveryState() throws {
        let fixture = try Fixture()
        var mail = Self.item("mail")
        mail.lookupAttributes = ["xdg:schema": "org.example.Mail", "user": "alice"]
        mail.contentType = "text/plain"
        var web = Self.item("web")
        web.lookupAttributes = ["xdg:schema": "org.example.Web", "user": "alice"]
        try fixture.store.add(mail, owner: 1, secret: Self.secret(3))
        try fixture.store.add(web, owner: 1, secret: Self.secret(3))
        try fixture.store.add(mail, owner: 2, secret: Self.secret(3))
        fixture.controller.lock(.now)
        #expect(try fixture.store.search(owner: 1, ItemQuery(lookupAttributes: ["user": "alice"])).map(\.account) == ["mail", "web"])
        let found = try fixture.store.search(owner: 1, ItemQuery(lookupAttributes: ["user": "alice", "xdg:schema": "org.example.Mail"]))
        #expect(found.map(\.lookupAttributes) == [mail.lookupAttributes] && found.map(\.contentType) == ["text/plain"])
        #expect(try fixture.store.search(owner: 1, ItemQuery(account: "web", lookupAttributes: ["user": "bob"])).isEmpty)
        #expect(try fixture.store.search(owner: 3, ItemQuery(lookupAttributes: ["user": "alice"])).isEmpty)
        let identity = ItemIdentity(owner: 1, service: "svc", account: "web")
        try fixture.store.update(identity, changes: ItemChanges(lookupAttributes: ["user": "bob"]), secret: nil)
        #expect(try fixture.store.search(owner: 1, ItemQuery(lookupAttributes: ["user": "bob"])).map(\.account) == ["web"])
        #expect(throws: ItemError.invalid("a lookup attribute's name must have 1 to 255 bytes")) {
            try fixture.store.update(identity, changes: ItemChanges(lookupAttributes: ["": "x"]), secret: nil)
        }
    }
}
