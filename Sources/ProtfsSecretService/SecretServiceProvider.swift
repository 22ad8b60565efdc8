import CSystemd
import Glibc
import ProtfsBus
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem
import Synchronization

/// `org.freedesktop.secrets` on the session bus over the user's protfs items
/// (docs/SECRETS.md). One thread runs the bus: every message arrives through one sd-bus
/// fallback handler on `/org/freedesktop/secrets` and is answered before the next; an
/// `Unlock` prompt asks for the passcode on a thread of its own and hands its outcome back.
/// Nothing here logs a secret; a malformed call gets the API's error.
public final class SecretServiceProvider: @unchecked Sendable {
    public struct Options: Sendable {
        public var mountpoint: String?
        public var replace: Bool
        public var askpass: String?
        public var promptTimeout: Duration

        public init(mountpoint: String?, replace: Bool, askpass: String?, promptTimeout: Duration) {
            self.mountpoint = mountpoint
            self.replace = replace
            self.askpass = askpass
            self.promptTimeout = promptTimeout
        }
    }

    public static let busName = "org.freedesktop.secrets"
    static let maximumAliases = 16
    static let maximumPrompts = 64

    let keychain: KeychainConnection
    let agent: PasscodeAgent
    private let replace: Bool
    private var bus: OpaquePointer?
    var sessions = SecretSessions()
    /// Alias names of the one collection besides `default`.
    var aliases: Set<String> = ["default"]
    var collectionLabel = "protfs keychain"
    let started = UInt64(time(nil))
    /// Item path elements seen in answers, to their items; refreshed by a full search on a miss.
    var knownItems: [String: ItemKey] = [:]
    /// Pending prompts: the objects each `Unlock` is about.
    var prompts: [String: [String]] = [:]
    private var nextPrompt = 1
    /// Prompts whose agent runs: at most `maximumPrompts`, each run once, so a client cannot
    /// start agent processes without bound.
    private(set) var runningPrompts: Set<String> = []
    /// Outcomes of prompts that finished on their own thread: (prompt, unlocked).
    let finishedPrompts = Mutex<[(String, Bool)]>([])
    /// What a method does once its reply is sent (a prompt's `Completed`).
    var afterReply: ((SecretServiceProvider) -> Void)?
    private var running = true

    public init(_ options: Options) {
        keychain = KeychainConnection(given: options.mountpoint)
        agent = PasscodeAgent(program: options.askpass, timeout: options.promptTimeout)
        replace = options.replace
    }

    /// Connects, takes the name, serves until the bus goes or another provider takes the name.
    public func run() throws(BusErrorReply) {
        // A launcher (a test runner, a session manager) may hand down a mask that blocks these:
        // the provider must stop when told to, by their default action.
        var stopping = sigset_t()
        sigemptyset(&stopping)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&stopping, signal) }
        pthread_sigmask(SIG_UNBLOCK, &stopping, nil)
        var connection: OpaquePointer?
        let opened = sd_bus_open_user(&connection)
        guard opened >= 0, let connection else { throw .failed("cannot connect to the session bus: \(Errno(-opened))") }
        bus = connection
        defer { sd_bus_flush_close_unref(connection) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard sd_bus_add_fallback(connection, nil, ObjectPaths.root, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            return Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue().handle(message)
        }, context) >= 0,
              sd_bus_match_signal(connection, nil, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameLost",
                                  { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            // Any peer may send this connection a NameLost of its own: only the bus driver's counts.
            let sender = sd_bus_message_get_sender(message).map { String(cString: $0) }
            let name = try? BusReader(message: message).string()
            if sender == "org.freedesktop.DBus", name == SecretServiceProvider.busName {
                Unmanaged<SecretServiceProvider>.fromOpaque(userdata).takeUnretainedValue().running = false
            }
            return 0
        }, context) >= 0 else { throw .failed("cannot register the provider's objects on the bus") }
        var flags = UInt64(SD_BUS_NAME_ALLOW_REPLACEMENT)
        if replace { flags |= UInt64(SD_BUS_NAME_REPLACE_EXISTING) }
        let requested = sd_bus_request_name(connection, Self.busName, flags)
        guard requested >= 0 else {
            throw .failed(requested == -EEXIST
                ? "\(Self.busName) is owned by another provider (gnome-keyring?); give --replace to take it"
                : "cannot own \(Self.busName): \(Errno(-requested))")
        }
        while running {
            var processed: Int32
            repeat { processed = sd_bus_process(connection, nil) } while processed > 0
            guard processed >= 0 else { throw .failed("the session bus connection failed: \(Errno(-processed))") }
            completeFinishedPrompts()
            let waited = sd_bus_wait(connection, 100_000)
            guard waited >= 0 || waited == -EINTR else { throw .failed("the session bus connection failed: \(Errno(-waited))") }
        }
    }

    // MARK: dispatch

    /// Every method call on our paths; 0 leaves it to sd-bus (unknown method or object).
    private func handle(_ message: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_method_call(message, nil, nil) > 0,
              let pathPointer = sd_bus_message_get_path(message), let memberPointer = sd_bus_message_get_member(message) else {
            return 0
        }
        let call = MethodCall(message: message, path: String(cString: pathPointer),
                              interface: sd_bus_message_get_interface(message).map { String(cString: $0) } ?? "",
                              member: String(cString: memberPointer),
                              sender: sd_bus_message_get_sender(message).map { String(cString: $0) } ?? "")
        let object = ObjectPaths.classify(call.path, aliases: aliases)
        do {
            afterReply = nil
            guard let reply = try dispatch(call, to: object) else { return 0 }
            reply.send()
            afterReply?(self)
            afterReply = nil
        } catch {
            var busError = sd_bus_error()
            sd_bus_error_set(&busError, error.name, error.message)
            sd_bus_reply_method_error(message, &busError)
            sd_bus_error_free(&busError)
        }
        return 1
    }

    private func dispatch(_ call: MethodCall, to object: ObjectPaths.Object) throws(BusErrorReply) -> BusWriter? {
        if call.interface == "org.freedesktop.DBus.Properties" { return try properties(call, of: object) }
        switch object {
        case .service where call.interface == "org.freedesktop.Secret.Service" || call.interface.isEmpty:
            return try serviceMethod(call)
        case .collection where call.interface == "org.freedesktop.Secret.Collection" || call.interface.isEmpty:
            return try collectionMethod(call)
        case .item(let element) where call.interface == "org.freedesktop.Secret.Item" || call.interface.isEmpty:
            return try itemMethod(call, key: try itemKey(element, path: call.path))
        case .session(let path) where call.member == "Close":
            try call.arguments.requireSignature("")
            guard (try? sessions.session(path, for: call.sender)) != nil else { throw .noSuchObject(path) }
            sessions.close(path)
            return try call.reply()
        case .prompt(let path) where call.interface == "org.freedesktop.Secret.Prompt" || call.interface.isEmpty:
            return try promptMethod(call, path: path)
        default:
            return nil
        }
    }

    // MARK: items

    /// The item a path element names, from what was seen, else after a full search.
    func itemKey(_ element: String, path: String) throws(BusErrorReply) -> ItemKey {
        if let key = knownItems[element] { return key }
        _ = try find([:])
        guard let key = knownItems[element] else { throw .noSuchObject(path) }
        return key
    }

    /// The items whose shown attributes (`ItemKey.shownAttributes`) hold every pair of `attributes`.
    func find(_ attributes: [String: String]) throws(BusErrorReply) -> [ItemAttributes] {
        var found = try keychain.search(ItemQuery(lookupAttributes: attributes))
        if !attributes.isEmpty, Set(attributes.keys).isSubset(of: ["service", "username"]) {
            found += try keychain.search(ItemQuery(service: attributes["service"], account: attributes["username"]))
                .filter { $0.lookupAttributes.isEmpty }
        }
        var seen: Set<ItemKey> = []
        found = found.filter { seen.insert(ItemKey($0)).inserted }
        if attributes.isEmpty { knownItems = [:] }
        for item in found { knownItems[ItemKey(item).pathElement] = ItemKey(item) }
        return found
    }

    /// The item's attributes now; `NoSuchObject` when it went.
    func attributes(of key: ItemKey) throws(BusErrorReply) -> ItemAttributes {
        guard let item = try keychain.search(ItemQuery(service: key.service, account: key.account)).first else {
            knownItems[key.pathElement] = nil
            throw .noSuchObject(ObjectPaths.item(key))
        }
        return item
    }

    /// Whether the class of `accessibility` forbids reading in `state` (the "content" column
    /// of the access table in docs/GUARANTEES.md: `complete` after the grace period,
    /// `completeUntilFirstUserAuthentication` before the first unlock).
    static func isLocked(_ accessibility: ItemAccessibility, in state: LockState) -> Bool {
        switch accessibility.protectionClass {
        case .complete: state == .beforeFirstUnlock || state == .locked
        case .completeUntilFirstUserAuthentication: state == .beforeFirstUnlock
        case .none, .completeUnlessOpen: false
        }
    }

    // MARK: signals and prompts

    func emit(_ member: String, item key: ItemKey) {
        guard let bus else { return }
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, ObjectPaths.collection, "org.freedesktop.Secret.Collection", member) >= 0,
              let message else { return }
        let writer = BusWriter(message)
        writer.objectPath(ObjectPaths.item(key))
        writer.send()
    }

    func newPrompt(for objects: [String]) -> String {
        let path = ObjectPaths.promptPrefix + String(nextPrompt)
        nextPrompt += 1
        // A client that opens prompts and never runs them cannot grow the table: one that is
        // not running goes (the running ones are bounded on their own).
        if prompts.count >= Self.maximumPrompts, let idle = prompts.keys.first(where: { !runningPrompts.contains($0) }) {
            prompts[idle] = nil
        }
        prompts[path] = objects
        return path
    }

    /// Asks for the passcode on a thread of its own, unlocks, and queues the outcome.
    func startUnlock(prompt path: String) {
        runningPrompts.insert(path)
        let agent = agent, keychain = keychain
        let started = (try? JoinableThread.detach { [weak self] in
            var unlocked = false
            if let passcode = agent.ask() {
                unlocked = (try? keychain.unlock(passcode: passcode)) != nil
                passcode.wipe()
            }
            self?.finishedPrompts.withLock { $0.append((path, unlocked)) }
        }) != nil
        if !started { finishedPrompts.withLock { $0.append((path, false)) } }
    }

    private func completeFinishedPrompts() {
        for (path, unlocked) in finishedPrompts.withLock({ queue in defer { queue = [] }; return queue }) {
            runningPrompts.remove(path)
            guard let objects = prompts.removeValue(forKey: path) else { continue }
            complete(path, dismissed: !unlocked, objects: unlocked ? objects : [])
        }
    }

    func complete(_ path: String, dismissed: Bool, objects: [String]) {
        guard let bus else { return }
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, "org.freedesktop.Secret.Prompt", "Completed") >= 0, let message else { return }
        let writer = BusWriter(message)
        writer.bool(dismissed)
        writer.openContainer("v", "ao")
        writer.objectPaths(objects)
        writer.closeContainer()
        writer.send()
    }
}

/// One incoming method call.
struct MethodCall {
    let message: OpaquePointer
    let path: String
    let interface: String
    let member: String
    let sender: String

    var arguments: BusReader { BusReader(message: message) }

    /// An empty method return to fill.
    func reply() throws(BusErrorReply) -> BusWriter {
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { throw .failed("cannot build a reply") }
        return BusWriter(reply)
    }
}
