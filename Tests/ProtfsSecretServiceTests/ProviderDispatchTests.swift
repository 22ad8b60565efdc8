import CSystemd
import ProtfsDomain
import ProtfsBusTestSupport
@testable import ProtfsSecretService
import Testing

/// The provider's method dispatch over an in-memory keychain, without a bus daemon: each
/// call goes to the method its object and interface name, is checked against its
/// signature, and is answered as the Secret Service API says, or with its error.
@Suite("Secret Service dispatch")
struct ProviderDispatchTests {
    static let root = "/org/freedesktop/secrets"
    static let collection = root + "/collection/default"

    static let token = ItemAttributes(service: "web", account: "ann", accessibility: .whenUnlocked)
    static let wifi = ItemAttributes(service: "wifi", account: "home", accessibility: .afterFirstUnlock,
                                     lookupAttributes: ["ssid": "home"])
    static let boot = ItemAttributes(service: "boot", account: "disk", accessibility: .always)

    static func path(_ item: ItemAttributes) -> String { ObjectPaths.item(ItemKey(item)) }

    @Test("OpenSession: plain answers an empty output and a session; other algorithms and arguments are refused")
    func openSession() throws {
        let harness = try ProviderHarness()
        let session = try harness.call(Self.root, Names.service, "OpenSession", { m in
            MessageWriting.append(m, "s", "plain")
            MessageWriting.open(m, "v", "s") { MessageWriting.append(m, "s", "") }
        }) { reply throws in
            #expect(reply.signature == "vo")
            #expect(try reply.variant("s") { () throws(BusErrorReply) in try reply.string() } == "")
            return try reply.objectPath()
        }
        #expect(session?.hasPrefix(Self.root + "/session/s") == true)
        #expect(try harness.error(Self.root, Names.service, "OpenSession", { m in
            MessageWriting.append(m, "s", "rot13")
            MessageWriting.open(m, "v", "s") { MessageWriting.append(m, "s", "") }
        }) == Names.notSupported)
        #expect(try harness.error(Self.root, Names.service, "OpenSession", strings("plain")) == Names.invalidArgs)
    }

    @Test("SearchItems parts the matches into unlocked and locked by each item's class in the vault's state")
    func searchPartsByLockState() throws {
        let keychain = MemoryKeychain(state: .locked, items: [(Self.token, [1]), (Self.wifi, [2]), (Self.boot, [3])])
        let harness = try ProviderHarness(keychain)
        func search() throws -> (unlocked: Set<String>, locked: Set<String>)? {
            try harness.call(Self.root, Names.service, "SearchItems", { m in MessageWriting.open(m, "a", "{ss}") {} }) { reply throws in
                (Set(try reply.objectPaths()), Set(try reply.objectPaths()))
            }
        }
        #expect(try search()?.unlocked == [Self.path(Self.wifi), Self.path(Self.boot)])
        #expect(try search()?.locked == [Self.path(Self.token)])
        keychain.contents.withLock { $0.state = .beforeFirstUnlock }
        #expect(try search()?.locked == [Self.path(Self.token), Self.path(Self.wifi)])
        keychain.contents.withLock { $0.state = .unlocked }
        #expect(try search()?.locked == [])
        // A search by attributes: the item's own, or service and username for one without any.
        let found = try harness.call(Self.root, Names.service, "SearchItems", { m in
            MessageWriting.open(m, "a", "{ss}") {
                MessageWriting.open(m, "e", "ss") { MessageWriting.append(m, "s", "service"); MessageWriting.append(m, "s", "web") }
            }
        }) { reply throws in try reply.objectPaths() }
        #expect(found == [Self.path(Self.token)])
    }

    @Test("a secret comes only through a session of the caller's own, in its clear form under plain")
    func secretsOnlyInTheCallersSession() throws {
        let harness = try ProviderHarness(MemoryKeychain(items: [(Self.token, Array("s3cret".utf8))]))
        let session = try #require(try harness.call(Self.root, Names.service, "OpenSession", sender: ":1.5", { m in
            MessageWriting.append(m, "s", "plain")
            MessageWriting.open(m, "v", "s") { MessageWriting.append(m, "s", "") }
        }) { reply throws in _ = try reply.variantContents(); try reply.skip("v"); return try reply.objectPath() })
        let item = Self.path(Self.token)
        #expect(try harness.error(item, Names.item, "GetSecret", sender: ":1.6", strings(session, type: "o"))
                == "org.freedesktop.Secret.Error.NoSession")
        let secret = try harness.call(item, Names.item, "GetSecret", sender: ":1.5", strings(session, type: "o")) { reply throws in
            try reply.enter("r", "oayays")
            #expect(try reply.objectPath() == session)
            #expect(try reply.bytes().count == 0)
            let value = Array(try reply.bytes())
            #expect(try reply.string() == "text/plain")
            return value
        }
        #expect(secret == Array("s3cret".utf8))
        // Closing someone else's session is refused; the owner's closes it.
        #expect(try harness.error(session, "org.freedesktop.Secret.Session", "Close", sender: ":1.6") == Names.noSuchObject)
        try harness.call(session, "org.freedesktop.Secret.Session", "Close", sender: ":1.5")
        #expect(try harness.error(item, Names.item, "GetSecret", sender: ":1.5", strings(session, type: "o"))
                == "org.freedesktop.Secret.Error.NoSession")
    }

    @Test("Lock locks the vault through the keychain and names what it locked")
    func lockLocksTheVault() throws {
        let keychain = MemoryKeychain()
        let harness = try ProviderHarness(keychain)
        let answer = try harness.call(Self.root, Names.service, "Lock", { m in
            MessageWriting.open(m, "a", "o") { MessageWriting.append(m, "o", Self.collection) }
        }) { reply throws in (try reply.objectPaths(), try reply.objectPath()) }
        #expect(answer?.0 == [Self.collection] && answer?.1 == "/")
        #expect(keychain.contents.withLock { $0.locks } == 1)
    }

    @Test("Unlock of what is open answers at once; of what is locked, with a prompt")
    func unlockPrompts() throws {
        let keychain = MemoryKeychain(state: .locked, items: [(Self.boot, [1]), (Self.token, [2])])
        let harness = try ProviderHarness(keychain)
        func unlock(_ paths: [String]) throws -> ([String], String)? {
            try harness.call(Self.root, Names.service, "Unlock", { m in
                MessageWriting.open(m, "a", "o") { for path in paths { MessageWriting.append(m, "o", path) } }
            }) { reply throws in (try reply.objectPaths(), try reply.objectPath()) }
        }
        let open = try unlock([Self.path(Self.boot)])
        #expect(open?.0 == [Self.path(Self.boot)] && open?.1 == "/")
        let locked = try #require(try unlock([Self.path(Self.token)]))
        #expect(locked.0.isEmpty && locked.1.hasPrefix(Self.root + "/prompt/p"))
        // Its outcome (Completed) goes out after the reply; dismissed, it is gone.
        try harness.call(locked.1, "org.freedesktop.Secret.Prompt", "Dismiss")
        #expect(harness.provider.afterReply != nil && harness.provider.prompts[locked.1] == nil)
        #expect(try harness.error(locked.1, "org.freedesktop.Secret.Prompt", "Prompt", strings("")) == Names.noSuchObject)
    }

    @Test("an unknown member is left to sd-bus; an absent item is NoSuchObject; the collection is not deleted")
    func unknownsAndRefusals() throws {
        let harness = try ProviderHarness(MemoryKeychain(items: [(Self.token, [1])]))
        #expect(try harness.call(Self.root, Names.service, "Frobnicate") == nil)
        #expect(try harness.call(Self.root + "/elsewhere", Names.service, "SearchItems") == nil)
        let absent = Self.collection + "/i" + String(repeating: "0", count: 32)
        #expect(try harness.error(absent, Names.item, "Delete") == Names.noSuchObject)
        #expect(try harness.error(Self.collection, Names.collection, "Delete") == Names.notSupported)
        #expect(try harness.error(Self.path(Self.token), Names.item, "GetSecret") == Names.invalidArgs)
        // An empty interface is taken as the object's own.
        #expect(try harness.error(Self.path(Self.token), "", "Delete") == nil)
        #expect(try harness.error(Self.path(Self.token), Names.item, "Delete") == Names.noSuchObject)
    }

    @Test("aliases: set, read and served as the collection; malformed or too many refused")
    func aliases() throws {
        let harness = try ProviderHarness()
        func readAlias(_ name: String) throws -> String? {
            try harness.call(Self.root, Names.service, "ReadAlias", strings(name)) { reply throws in try reply.objectPath() }
        }
        #expect(try readAlias("default") == Self.collection)
        #expect(try readAlias("login") == "/")
        try harness.call(Self.root, Names.service, "SetAlias", { m in
            MessageWriting.append(m, "s", "login")
            MessageWriting.append(m, "o", Self.collection)
        })
        #expect(try readAlias("login") == Self.collection)
        #expect(ObjectPaths.classify(Self.root + "/aliases/login", aliases: harness.provider.aliases) == .collection)
        #expect(try harness.error(Self.root, Names.service, "SetAlias", { m in
            MessageWriting.append(m, "s", "not an alias")
            MessageWriting.append(m, "o", Self.collection)
        }) == Names.invalidArgs)
        for index in harness.provider.aliases.count..<SecretServiceProvider.maximumAliases {
            try harness.call(Self.root, Names.service, "SetAlias", { m in
                MessageWriting.append(m, "s", "a\(index)")
                MessageWriting.append(m, "o", Self.collection)
            })
        }
        #expect(try harness.error(Self.root, Names.service, "SetAlias", { m in
            MessageWriting.append(m, "s", "one_more")
            MessageWriting.append(m, "o", Self.collection)
        }) == "org.freedesktop.DBus.Error.Failed")
    }
}
