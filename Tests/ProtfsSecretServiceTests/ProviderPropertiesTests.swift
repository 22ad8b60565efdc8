import CSystemd
import ProtfsDomain
import ProtfsBusTestSupport
@testable import ProtfsSecretService
import Testing

/// `org.freedesktop.DBus.Properties` of the service, the collection and the items, over an
/// in-memory keychain and without a bus daemon.
@Suite("Secret Service properties")
struct ProviderPropertiesTests {
    static let collection = ProviderDispatchTests.collection
    static let token = ProviderDispatchTests.token

    static func get(_ harness: ProviderHarness, _ path: String, _ interface: String, _ name: String,
                    _ read: (BusReader) throws -> Void) throws {
        try harness.call(path, Names.properties, "Get", strings(interface, name), read: read)
    }

    @Test("the collection's Label reads, is set, and reads back; the collection is Locked unless the vault is unlocked")
    func collectionLabelAndLock() throws {
        let keychain = MemoryKeychain()
        let harness = try ProviderHarness(keychain)
        try Self.get(harness, Self.collection, Names.collection, "Label") { reply throws in
            #expect(try reply.variant("s") { () throws(BusErrorReply) in try reply.string() } == "protfs keychain")
        }
        try harness.call(Self.collection, Names.properties, "Set", { m in
            MessageWriting.append(m, "s", Names.collection)
            MessageWriting.append(m, "s", "Label")
            MessageWriting.open(m, "v", "s") { MessageWriting.append(m, "s", "mine") }
        })
        try Self.get(harness, Self.collection, Names.collection, "Label") { reply throws in
            #expect(try reply.variant("s") { () throws(BusErrorReply) in try reply.string() } == "mine")
        }
        for (state, locked) in [(LockState.unlocked, false), (.locked, true), (.locking, true), (.beforeFirstUnlock, true)] {
            keychain.contents.withLock { $0.state = state }
            try Self.get(harness, Self.collection, Names.collection, "Locked") { reply throws in
                #expect(try reply.variant("b") { () throws(BusErrorReply) in try reply.bool() } == locked, "in \(state)")
            }
        }
    }

    @Test("GetAll answers every property of the interface, by name")
    func getAll() throws {
        let harness = try ProviderHarness(MemoryKeychain(items: [(Self.token, [1])]))
        let names = try harness.call(Self.collection, Names.properties, "GetAll", strings(Names.collection)) { reply throws in
            var names: [String] = []
            try reply.enter("a", "{sv}")
            while try reply.enterIfMore("e", "sv") {
                let name = try reply.string()
                if name == "Items" {
                    #expect(try reply.variant("ao") { () throws(BusErrorReply) in try reply.objectPaths() }
                            == [ProviderDispatchTests.path(Self.token)])
                } else {
                    try reply.skip("v")
                }
                try reply.exit()
                names.append(name)
            }
            return names
        }
        #expect(names == ["Created", "Items", "Label", "Locked", "Modified"])
        let service = try harness.call(ProviderDispatchTests.root, Names.properties, "GetAll", strings(Names.service)) {
            reply in reply.signature
        }
        #expect(service == "a{sv}")
        // Another interface of the object has no properties here.
        let none = try harness.call(Self.collection, Names.properties, "GetAll", strings("org.example.Other")) {
            reply throws -> Bool in
            try reply.enter("a", "{sv}")
            return try !reply.enterIfMore("e", "sv")
        }
        #expect(none == true)
    }

    @Test("an item's Locked follows its class and the vault's state; its Attributes are its own or service and username")
    func itemProperties() throws {
        let keychain = MemoryKeychain(state: .locked, items: [(Self.token, [1]), (ProviderDispatchTests.wifi, [2])])
        let harness = try ProviderHarness(keychain)
        let token = ProviderDispatchTests.path(Self.token), wifi = ProviderDispatchTests.path(ProviderDispatchTests.wifi)
        for (path, locked) in [(token, true), (wifi, false)] {
            try Self.get(harness, path, Names.item, "Locked") { reply throws in
                #expect(try reply.variant("b") { () throws(BusErrorReply) in try reply.bool() } == locked, "\(path)")
            }
        }
        try Self.get(harness, token, Names.item, "Attributes") { reply throws in
            #expect(try reply.variant("a{ss}") { () throws(BusErrorReply) in try reply.stringMap() } == ["service": "web", "username": "ann"])
        }
        try Self.get(harness, wifi, Names.item, "Attributes") { reply throws in
            #expect(try reply.variant("a{ss}") { () throws(BusErrorReply) in try reply.stringMap() } == ["ssid": "home"])
        }
        // A Label set on an item goes to the keychain, in any lock state.
        try harness.call(token, Names.properties, "Set", { m in
            MessageWriting.append(m, "s", Names.item)
            MessageWriting.append(m, "s", "Label")
            MessageWriting.open(m, "v", "s") { MessageWriting.append(m, "s", "renamed") }
        })
        #expect(keychain.contents.withLock { $0.updates.map(\.1.label) } == ["renamed"])
    }

    @Test("an unknown property, a read-only one, a wrong type and an object without properties are refused by name")
    func refusals() throws {
        let harness = try ProviderHarness(MemoryKeychain(items: [(Self.token, [1])]))
        #expect(try harness.error(Self.collection, Names.properties, "Get", strings(Names.collection, "Colour"))
                == "org.freedesktop.DBus.Error.UnknownProperty")
        #expect(try harness.error(Self.collection, Names.properties, "Set", { m in
            MessageWriting.append(m, "s", Names.collection)
            MessageWriting.append(m, "s", "Locked")
            MessageWriting.open(m, "v", "b") { var no: Int32 = 0; _ = sd_bus_message_append_basic(m, CChar(UInt8(ascii: "b")), &no) }
        }) == Names.invalidArgs)
        #expect(try harness.error(Self.collection, Names.properties, "Set", { m in
            MessageWriting.append(m, "s", Names.collection)
            MessageWriting.append(m, "s", "Label")
            MessageWriting.open(m, "v", "o") { MessageWriting.append(m, "o", "/") }
        }) == Names.invalidArgs)
        #expect(try harness.error(Self.collection, Names.properties, "Get", strings(Names.collection)) == Names.invalidArgs)
        #expect(try harness.error(ProviderDispatchTests.root + "/prompt/p9", Names.properties, "GetAll",
                                  strings("org.freedesktop.Secret.Prompt")) == Names.noSuchObject)
        let absent = Self.collection + "/i" + String(repeating: "f", count: 32)
        #expect(try harness.error(absent, Names.properties, "Get", strings(Names.item, "Label")) == Names.noSuchObject)
    }
}
