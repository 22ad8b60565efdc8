import ProtfsBus
import ProtfsCrypto
import ProtfsDomain

/// `org.freedesktop.Secret.Collection` on the one collection, `org.freedesktop.Secret.Item`
/// on its items, and `org.freedesktop.Secret.Prompt`.
extension SecretServiceProvider {
    static let labelProperty = "org.freedesktop.Secret.Item.Label"
    static let attributesProperty = "org.freedesktop.Secret.Item.Attributes"
    static let accessibleAttribute = "protfs:accessible"

    func collectionMethod(_ call: MethodCall) throws(BusErrorReply) -> BusWriter? {
        let arguments = call.arguments
        switch call.member {
        case "SearchItems":
            try arguments.requireSignature("a{ss}")
            let reply = try call.reply()
            reply.objectPaths(try find(try arguments.stringMap()).map { ObjectPaths.item(ItemKey($0.item)) })
            return reply
        case "CreateItem":
            try arguments.requireSignature("a{sv}(oayays)b")
            let (label, attributes) = try readItemProperties(arguments)
            let (secret, contentType) = try readSecret(arguments, sender: call.sender)
            defer { secret.wipe() }
            let replace = try arguments.bool()
            let key = try createItem(label: label ?? "", attributes: attributes ?? [:], secret: secret, contentType: contentType,
                                     replace: replace)
            let reply = try call.reply()
            reply.objectPath(ObjectPaths.item(key))
            reply.objectPath(ObjectPaths.none)
            return reply
        case "Delete":
            // docs/SECRETS.md, "Deleting the collection": one unauthenticated call must not wipe
            // every app's items.
            throw .notSupported("the collection is the user's whole keychain (protfsctl item and SecItem items too) and is "
                                + "not deleted; delete items one by one")
        default:
            return nil
        }
    }

    func itemMethod(_ call: MethodCall, key: ItemKey) throws(BusErrorReply) -> BusWriter? {
        let arguments = call.arguments
        switch call.member {
        case "GetSecret":
            try arguments.requireSignature("o")
            let session = try sessions.session(try arguments.string("o"), for: call.sender)
            let (attributes, secret) = try keychain.secret(of: key)
            defer { secret.wipe() }
            let reply = try call.reply()
            try appendSecret(secret, contentType: attributes.contentType, session: session, to: reply)
            return reply
        case "SetSecret":
            try arguments.requireSignature("(oayays)")
            let (secret, contentType) = try readSecret(arguments, sender: call.sender)
            defer { secret.wipe() }
            try keychain.update(key, ItemChanges(contentType: contentType), secret: secret)
            emit("ItemChanged", item: key)
            return try call.reply()
        case "Delete":
            try arguments.requireSignature("")
            try keychain.delete(key)
            knownItems[key.pathElement] = nil
            emit("ItemDeleted", item: key)
            let reply = try call.reply()
            reply.objectPath(ObjectPaths.none)
            return reply
        default:
            return nil
        }
    }

    /// `Completed` must follow the method's reply, so it goes out after it (`afterReply`). A
    /// prompt runs once: asked again while its agent runs, it refuses (each run would start
    /// another agent process), and once it completed it is gone.
    func promptMethod(_ call: MethodCall, path: String) throws(BusErrorReply) -> BusWriter? {
        guard prompts[path] != nil else { throw .noSuchObject(path) }
        switch call.member {
        case "Prompt":
            try call.arguments.requireSignature("s")
            guard !runningPrompts.contains(path) else { throw .failed("the prompt \(path) is already running") }
            guard runningPrompts.count < Self.maximumPrompts else {
                throw .failed("\(Self.maximumPrompts) prompts are already asking for the passcode")
            }
            if agent.argv == nil {
                prompts[path] = nil
                afterReply = { $0.complete(path, dismissed: true, objects: []) }
            } else {
                afterReply = { $0.startUnlock(prompt: path) }
            }
            return try call.reply()
        case "Dismiss":
            try call.arguments.requireSignature("")
            prompts[path] = nil
            afterReply = { $0.complete(path, dismissed: true, objects: []) }
            return try call.reply()
        default:
            return nil
        }
    }

    /// `a{sv}` of `CreateItem`: the label and the attributes when given; other properties are
    /// ignored, as the specification allows.
    private func readItemProperties(_ arguments: BusReader) throws(BusErrorReply) -> (String?, [String: String]?) {
        var label: String?, attributes: [String: String]?
        try arguments.enter("a", "{sv}")
        while try arguments.enterIfMore("e", "sv") {
            let name = try arguments.string()
            let contents = try arguments.variantContents()
            if name == Self.labelProperty && contents == "s" {
                try arguments.enter("v", "s")
                label = try arguments.string()
                try arguments.exit()
            } else if name == Self.attributesProperty && contents == "a{ss}" {
                try arguments.enter("v", "a{ss}")
                attributes = try arguments.stringMap()
                try arguments.exit()
            } else {
                try arguments.skip("v")
            }
            try arguments.exit()
        }
        try arguments.exit()
        return (label, attributes)
    }

    /// docs/SECRETS.md: with `replace`, the item whose shown attributes are exactly these gets
    /// the new label and secret; otherwise a new item, named as that page says.
    private func createItem(label: String, attributes: [String: String], secret: SecureBuffer, contentType: String,
                            replace: Bool) throws(BusErrorReply) -> ItemKey {
        var accessibility: ItemAccessibility?
        if let name = attributes[Self.accessibleAttribute] {
            guard let value = ItemAccessibility(spelling: name) else {
                throw .invalidArguments("\(Self.accessibleAttribute) must name an accessibility, such as afterFirstUnlock")
            }
            accessibility = value
        }
        if replace, let existing = try find(attributes).first(where: { $0.item.shownAttributes == attributes }) {
            let key = ItemKey(existing.item)
            try keychain.update(key, ItemChanges(label: label, accessibility: accessibility, contentType: contentType), secret: secret)
            emit("ItemChanged", item: key)
            return key
        }
        let service = ItemKey.service(for: attributes)
        var account = ItemKey.randomAccount()
        if let preferred = ItemKey.preferredAccount(for: attributes),
           try keychain.search(ItemQuery(service: service, account: preferred)).found.isEmpty {
            account = preferred
        }
        let item = ItemAttributes(service: service, account: account, label: label, accessibility: accessibility ?? .whenUnlocked,
                                  lookupAttributes: attributes, contentType: contentType)
        try keychain.add(item, secret: secret)
        let key = ItemKey(item)
        knownItems[key.pathElement] = key
        emit("ItemCreated", item: key)
        return key
    }
}
