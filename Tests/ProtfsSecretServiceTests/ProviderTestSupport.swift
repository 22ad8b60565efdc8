import CSystemd
import ProtfsBus
import ProtfsBusTestSupport
import ProtfsCrypto
import ProtfsDomain
@testable import ProtfsSecretService
import Synchronization
import Testing

/// The user's keychain in memory: items with their secrets, a lock state, and the lock
/// requests the provider made.
final class MemoryKeychain: ItemKeychain {
    struct Contents {
        var state = LockState.unlocked
        var items: [(attributes: ItemAttributes, secret: [UInt8])] = []
        var locks = 0
        var updates: [(ItemKey, ItemChanges)] = []
    }

    let contents: Mutex<Contents>

    init(state: LockState = .unlocked, items: [(ItemAttributes, [UInt8])] = []) {
        contents = Mutex(Contents(state: state, items: items.map { (attributes: $0.0, secret: $0.1) }))
    }

    func state() throws(BusErrorReply) -> LockState { contents.withLock { $0.state } }

    func search(_ query: ItemQuery) throws(BusErrorReply) -> (found: [KeychainRequests.Found], state: LockState) {
        contents.withLock { contents in
            let found = contents.items.map(\.attributes).filter(query.matches).map {
                KeychainRequests.Found(item: $0, locked: Self.isLocked($0.accessibility, in: contents.state))
            }
            return (found, contents.state)
        }
    }

    /// The daemon's verdict on an item's secret, as its access policy gives it (docs/CLASSES.md):
    /// `complete` items are refused once locked (not in the grace), those of
    /// `completeUntilFirstUserAuthentication` only before the first unlock, `none` never.
    static func isLocked(_ accessibility: ItemAccessibility, in state: LockState) -> Bool {
        switch accessibility.protectionClass {
        case .complete: state == .locked || state == .beforeFirstUnlock
        case .completeUntilFirstUserAuthentication: state == .beforeFirstUnlock
        default: false
        }
    }

    func secret(of identity: ItemKey) throws(BusErrorReply) -> (ItemAttributes, SecureBuffer) {
        let found = contents.withLock { contents in contents.items.first { ItemKey($0.attributes) == identity }.map { ($0, contents.state) } }
        guard let (item, state) = found else { throw .noSuchObject(identity.pathElement) }
        guard !Self.isLocked(item.attributes.accessibility, in: state) else { throw .isLocked("locked") }
        return (item.attributes, item.secret.withUnsafeBytes { SecureBuffer(copying: $0) })
    }

    func add(_ attributes: ItemAttributes, secret: SecureBuffer) throws(BusErrorReply) {
        let bytes = secret.withUnsafeBytes { Array($0) }
        contents.withLock { $0.items.append((attributes: attributes, secret: bytes)) }
    }

    func update(_ identity: ItemKey, _ changes: ItemChanges, secret: SecureBuffer?) throws(BusErrorReply) {
        contents.withLock { contents in
            contents.updates.append((identity, changes))
            guard let index = contents.items.firstIndex(where: { ItemKey($0.attributes) == identity }) else { return }
            if let label = changes.label { contents.items[index].attributes.label = label }
            if let attributes = changes.lookupAttributes { contents.items[index].attributes.lookupAttributes = attributes }
        }
    }

    func delete(_ identity: ItemKey) throws(BusErrorReply) {
        contents.withLock { $0.items.removeAll { ItemKey($0.attributes) == identity } }
    }

    func lockNow() throws(BusErrorReply) {
        contents.withLock {
            $0.locks += 1
            $0.state = .locked
        }
    }

    func unlock(passcode: SecureBuffer) throws(BusErrorReply) { contents.withLock { $0.state = .unlocked } }
}

/// Method calls made without a bus daemon (`LocalBus`), arrived from `sender`, dispatched to
/// a provider over a `MemoryKeychain`; its replies sealed and read back the same way.
final class ProviderHarness {
    let keychain: MemoryKeychain
    let provider: SecretServiceProvider
    private let bus: LocalBus

    init(_ keychain: MemoryKeychain = MemoryKeychain()) throws {
        self.keychain = keychain
        provider = SecretServiceProvider(SecretServiceProvider.Options(mountpoint: nil, replace: false, askpass: nil,
                                                                       promptTimeout: .seconds(1)), keychain: keychain)
        bus = try LocalBus()
    }

    /// The reply to `member` of `interface` on `path` with the arguments `append` writes:
    /// `body` reads it; nil when the provider leaves the call to sd-bus.
    @discardableResult
    func call<T>(_ path: String, _ interface: String, _ member: String, sender: String = ":1.7",
                 _ append: (OpaquePointer) -> Void = { _ in },
                 read body: (BusReader) throws -> T = { _ in () }) throws -> T? {
        // sd-bus writes no interface field for an empty one (a call that names none).
        let message = try bus.methodCall(to: SecretServiceProvider.busName, path, interface.isEmpty ? nil : interface, member)
        defer { sd_bus_message_unref(message) }
        append(message)
        try bus.arrive(message, from: sender)
        let call = MethodCall(message: message, path: path, interface: interface, member: member, sender: sender)
        guard let reply = try provider.dispatch(call, to: ObjectPaths.classify(path, aliases: provider.aliases)) else { return nil }
        try bus.seal(reply.message)
        return try body(BusReader(message: reply.message))
    }

    /// The error the provider answers the call with (nil when it answers).
    func error(_ path: String, _ interface: String, _ member: String, sender: String = ":1.7",
               _ append: (OpaquePointer) -> Void = { _ in }) throws -> String? {
        do {
            try call(path, interface, member, sender: sender, append)
            return nil
        } catch let error as BusErrorReply {
            return error.name
        }
    }
}

/// The arguments of a call: strings (or object paths) in order.
func strings(_ values: String..., type: Character = "s") -> (OpaquePointer) -> Void {
    { message in for value in values { MessageWriting.append(message, type, value) } }
}

enum Names {
    static let service = "org.freedesktop.Secret.Service"
    static let collection = "org.freedesktop.Secret.Collection"
    static let item = "org.freedesktop.Secret.Item"
    static let properties = "org.freedesktop.DBus.Properties"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let noSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
    static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
}
