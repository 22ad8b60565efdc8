import ProtfsBus
import ProtfsDomain

/// `org.freedesktop.DBus.Properties` of the service, the collection and the items.
extension SecretServiceProvider {
    private enum Value {
        case string(String)
        case bool(Bool)
        case uint64(UInt64)
        case paths([String])
        case map([String: String])
    }

    func properties(_ call: MethodCall, of object: ObjectPaths.Object) throws(BusErrorReply) -> BusWriter? {
        let arguments = call.arguments
        switch call.member {
        case "Get":
            try arguments.requireSignature("ss")
            let interface = try arguments.string()
            let name = try arguments.string()
            guard let value = try values(of: object, call: call, interface: interface)?[name] else {
                throw .unknownProperty("no property \(interface).\(name) here")
            }
            let computed = try value()
            let reply = try call.reply()
            append(computed, to: reply)
            return reply
        case "GetAll":
            try arguments.requireSignature("s")
            let interface = try arguments.string()
            var computed: [(String, Value)] = []
            for (name, value) in (try values(of: object, call: call, interface: interface) ?? [:]).sorted(by: { $0.key < $1.key }) {
                computed.append((name, try value()))
            }
            let reply = try call.reply()
            reply.openContainer("a", "{sv}")
            for (name, value) in computed {
                reply.openContainer("e", "sv")
                reply.string(name)
                append(value, to: reply)
                reply.closeContainer()
            }
            reply.closeContainer()
            return reply
        case "Set":
            try arguments.requireSignature("ssv")
            _ = try arguments.string()
            let name = try arguments.string()
            try set(name, of: object, from: arguments, path: call.path)
            return try call.reply()
        default:
            return nil
        }
    }

    /// The properties of `interface` on `object`, each computed only when asked for: a `Get` of
    /// the collection's `Label` (which secretstorage sends first) must not list every item.
    private func values(of object: ObjectPaths.Object, call: MethodCall,
                        interface: String) throws(BusErrorReply) -> [String: () throws(BusErrorReply) -> Value]? {
        switch object {
        case .service where interface == "org.freedesktop.Secret.Service":
            return ["Collections": { .paths([ObjectPaths.collection]) }]
        case .collection where interface == "org.freedesktop.Secret.Collection":
            return ["Items": { () throws(BusErrorReply) in .paths(try self.find([:]).map { ObjectPaths.item(ItemKey($0)) }) },
                    "Label": { .string(self.collectionLabel) },
                    "Locked": { () throws(BusErrorReply) in .bool(try self.keychain.state() != .unlocked) },
                    "Created": { .uint64(self.started) }, "Modified": { .uint64(self.started) }]
        case .item(let element) where interface == "org.freedesktop.Secret.Item":
            let item = try attributes(of: try itemKey(element, path: call.path))
            return ["Locked": { () throws(BusErrorReply) in .bool(Self.isLocked(item.accessibility, in: try self.keychain.state())) },
                    "Attributes": { .map(ItemKey.shownAttributes(of: item)) }, "Label": { .string(item.label) },
                    "Created": { .uint64(UInt64(max(item.created, 0))) }, "Modified": { .uint64(UInt64(max(item.modified, 0))) }]
        case .unknown, .session, .prompt:
            throw .noSuchObject(call.path)
        default:
            return nil
        }
    }

    private func append(_ value: Value, to reply: BusWriter) {
        switch value {
        case .string(let text):
            reply.openContainer("v", "s")
            reply.string(text)
        case .bool(let bit):
            reply.openContainer("v", "b")
            reply.bool(bit)
        case .uint64(let number):
            reply.openContainer("v", "t")
            reply.uint64(number)
        case .paths(let paths):
            reply.openContainer("v", "ao")
            reply.objectPaths(paths)
        case .map(let map):
            reply.openContainer("v", "a{ss}")
            reply.stringMap(map)
        }
        reply.closeContainer()
    }

    /// `Label` of the collection (kept while the provider runs), `Label` and `Attributes` of
    /// an item (kept in the vault, in every lock state).
    private func set(_ name: String, of object: ObjectPaths.Object, from arguments: BusReader, path: String) throws(BusErrorReply) {
        let contents = try arguments.variantContents()
        switch (object, name, contents) {
        case (.collection, "Label", "s"):
            try arguments.enter("v", "s")
            collectionLabel = try arguments.string()
        case (.item(let element), "Label", "s"):
            let key = try itemKey(element, path: path)
            try arguments.enter("v", "s")
            try keychain.update(key, ItemChanges(label: try arguments.string()), secret: nil)
            emit("ItemChanged", item: key)
        case (.item(let element), "Attributes", "a{ss}"):
            let key = try itemKey(element, path: path)
            try arguments.enter("v", "a{ss}")
            try keychain.update(key, ItemChanges(lookupAttributes: try arguments.stringMap()), secret: nil)
            emit("ItemChanged", item: key)
        default:
            throw .invalidArguments("no writable property \(name) of type '\(contents)' here")
        }
    }
}
