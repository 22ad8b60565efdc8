import ProtfsBus
import ProtfsCrypto
import ProtfsDomain

/// `org.freedesktop.Secret.Service` on `/org/freedesktop/secrets`.
extension SecretServiceProvider {
    func serviceMethod(_ call: MethodCall) throws(BusErrorReply) -> BusWriter? {
        let arguments = call.arguments
        switch call.member {
        case "OpenSession":
            try arguments.requireSignature("sv")
            let algorithm = try arguments.string()
            let reply = try call.reply()
            switch algorithm {
            case "plain":
                reply.openContainer("v", "s")
                reply.string("")
                reply.closeContainer()
                reply.objectPath(sessions.open(.plain, owner: call.sender))
            case "dh-ietf1024-sha256-aes128-cbc-pkcs7":
                guard try arguments.variantContents() == "ay" else { throw .invalidArguments("the input of this algorithm is 'ay'") }
                try arguments.enter("v", "ay")
                let peer = Array(try arguments.bytes())
                guard let exchange = DiffieHellmanSession(peerPublicKey: peer) else {
                    throw .invalidArguments("not a public key of the 1024-bit group")
                }
                exchange.publicKey.withUnsafeBytes { bytes in
                    reply.openContainer("v", "ay")
                    reply.bytes(bytes)
                    reply.closeContainer()
                }
                reply.objectPath(sessions.open(.encrypted(key: exchange.key), owner: call.sender))
            default:
                throw .notSupported("the algorithm '\(algorithm)' is not supported: use plain or dh-ietf1024-sha256-aes128-cbc-pkcs7")
            }
            return reply
        case "CreateCollection":
            try arguments.requireSignature("a{sv}s")
            try arguments.skip("a{sv}")
            let alias = try arguments.string()
            if !alias.isEmpty { try addAlias(alias) }
            let reply = try call.reply()
            reply.objectPath(ObjectPaths.collection)
            reply.objectPath(ObjectPaths.none)
            return reply
        case "SearchItems":
            try arguments.requireSignature("a{ss}")
            let items = try find(try arguments.stringMap())
            let state = try keychain.state()
            let reply = try call.reply()
            reply.objectPaths(items.filter { !Self.isLocked($0.accessibility, in: state) }.map { ObjectPaths.item(ItemKey($0)) })
            reply.objectPaths(items.filter { Self.isLocked($0.accessibility, in: state) }.map { ObjectPaths.item(ItemKey($0)) })
            return reply
        case "Unlock":
            try arguments.requireSignature("ao")
            return try unlock(call, objects: try arguments.objectPaths())
        case "Lock":
            try arguments.requireSignature("ao")
            let objects = try arguments.objectPaths()
            try keychain.lockNow()
            let reply = try call.reply()
            reply.objectPaths(objects)
            reply.objectPath(ObjectPaths.none)
            return reply
        case "LockService":
            try arguments.requireSignature("")
            try keychain.lockNow()
            return try call.reply()
        case "GetSecrets":
            try arguments.requireSignature("aoo")
            let paths = try arguments.objectPaths()
            let session = try sessions.session(try arguments.string("o"), for: call.sender)
            let reply = try call.reply()
            reply.openContainer("a", "{o(oayays)}")
            for path in Set(paths) {
                guard case .item(let element) = ObjectPaths.classify(path, aliases: aliases),
                      let key = try? itemKey(element, path: path),
                      let (attributes, secret) = try? keychain.secret(of: key) else { continue }  // locked or gone: left out
                defer { secret.wipe() }
                reply.openContainer("e", "o(oayays)")
                reply.objectPath(path)
                try appendSecret(secret, contentType: attributes.contentType, session: session, to: reply)
                reply.closeContainer()
            }
            reply.closeContainer()
            return reply
        case "ReadAlias":
            try arguments.requireSignature("s")
            let name = try arguments.string()
            let reply = try call.reply()
            reply.objectPath(aliases.contains(name) ? ObjectPaths.collection : ObjectPaths.none)
            return reply
        case "SetAlias":
            try arguments.requireSignature("so")
            let name = try arguments.string()
            let target = try arguments.string("o")
            if target == ObjectPaths.none {
                if name != "default" { aliases.remove(name) }
            } else {
                guard ObjectPaths.classify(target, aliases: aliases) == .collection else { throw .noSuchObject(target) }
                try addAlias(name)
            }
            return try call.reply()
        default:
            return nil
        }
    }

    private func addAlias(_ name: String) throws(BusErrorReply) {
        guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || ($0 >= 0x30 && $0 <= 0x39)
            || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }) else {
            throw .invalidArguments("an alias is 1 to 64 letters, digits or '_'")
        }
        guard aliases.contains(name) || aliases.count < Self.maximumAliases else {
            throw .failed("at most \(Self.maximumAliases) aliases")
        }
        aliases.insert(name)
    }

    /// Unlocked objects at once; else a prompt that asks for the passcode when run.
    func unlock(_ call: MethodCall, objects: [String]) throws(BusErrorReply) -> BusWriter {
        let state = try keychain.state()
        var locked = false
        for path in objects {
            switch ObjectPaths.classify(path, aliases: aliases) {
            case .collection: locked = locked || state != .unlocked
            case .item(let element):
                if let key = try? itemKey(element, path: path), let item = try? attributes(of: key) {
                    locked = locked || Self.isLocked(item.accessibility, in: state)
                }
            default: break
            }
        }
        let reply = try call.reply()
        if locked {
            reply.objectPaths([])
            reply.objectPath(newPrompt(for: objects))
        } else {
            reply.objectPaths(objects)
            reply.objectPath(ObjectPaths.none)
        }
        return reply
    }

    /// `(oayays)`: the session, the IV (empty for `plain`), the value, the content type.
    func appendSecret(_ secret: SecureBuffer, contentType: String, session: SecretSessions.Session,
                      to reply: BusWriter) throws(BusErrorReply) {
        reply.openContainer("r", "oayays")
        reply.objectPath(session.path)
        switch session.algorithm {
        case .plain:
            reply.bytes(UnsafeRawBufferPointer(start: nil, count: 0))
            secret.withUnsafeBytes { reply.bytes($0) }
        case .encrypted(let key):
            guard let (iv, ciphertext) = SessionCipher.encrypt(secret, key: key) else { throw .failed("cannot encrypt the secret") }
            iv.withUnsafeBytes { reply.bytes($0) }
            ciphertext.withUnsafeBytes { reply.bytes($0) }
        }
        reply.string(contentType.isEmpty ? "text/plain" : contentType)
        reply.closeContainer()
    }

    /// A `(oayays)` argument's secret in locked memory, decrypted under its session.
    func readSecret(_ arguments: BusReader, sender: String) throws(BusErrorReply) -> (SecureBuffer, String) {
        try arguments.enter("r", "oayays")
        let session = try sessions.session(try arguments.string("o"), for: sender)
        let parameters = Array(try arguments.bytes())
        let value = try arguments.bytes()
        let contentType = try arguments.string()
        try arguments.exit()
        switch session.algorithm {
        case .plain:
            return (value.count == 0 ? SecureBuffer(count: 0) : SecureBuffer(copying: value), contentType)
        case .encrypted(let key):
            guard let secret = SessionCipher.decrypt(value, iv: parameters, key: key) else {
                throw .invalidArguments("the secret does not decrypt under its session")
            }
            return (secret, contentType)
        }
    }
}
