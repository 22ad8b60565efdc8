import Foundation
import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem
import Synchronization

/// Which protfs mount holds the process's keychain items.
public enum ProtfsKeychain {
    private static let chosen = Mutex<String?>(nil)

    /// The keychain vault's mount point for this process, chosen in code; when nil (the
    /// default), `SecItem*` use the mount point in the `PROTFS_KEYCHAIN` environment
    /// variable, else the only protfs mount on the machine, else return
    /// `errSecNotAvailable`. Setting it is safe from any thread, unlike `setenv`.
    public static var mountpoint: String? {
        get { chosen.withLock { $0 } }
        set { chosen.withLock { $0 = newValue } }
    }
}

/// The keychain vault's daemon, and the item requests `SecItem*` make of it for the calling
/// user (the daemon learns the uid from the socket).
struct KeychainVault {
    /// Names the keychain vault's mount point.
    static let environmentVariable = "PROTFS_KEYCHAIN"

    let client: ControlClient

    /// The mount chosen in code or in `PROTFS_KEYCHAIN`, else the only protfs mount;
    /// `errSecNotAvailable` when neither names a live daemon (with why on standard error,
    /// once per reason: a status alone cannot say it).
    static func find() throws(KeychainStatus) -> KeychainVault {
        let mountpoint: String
        switch choice() {
        case .found(let found): mountpoint = found
        case .none(let reason):
            DataProtectionDiagnostics.report(reason)
            throw .notAvailable
        }
        do {
            return KeychainVault(client: try ControlClient(mountpoint: mountpoint))
        } catch {
            DataProtectionDiagnostics.report("the keychain vault \(mountpoint) has no daemon answering: \(error.message)")
            throw .notAvailable
        }
    }

    /// The keychain vault's mount point, or why there is none.
    enum Choice: Equatable {
        case found(String)
        case none(String)
    }

    static func choice() -> Choice {
        choice(named: ProtfsKeychain.mountpoint ?? ProcessInfo.processInfo.environment[environmentVariable],
               mounts: MountTable.protfsMountPoints(), holding: ProtfsLocation.mountpoint(holding:))
    }

    /// The keychain vault's mount point: the protfs mount holding the path named (when not
    /// empty: a mount point or any path inside one), else the only protfs mount. A named
    /// path is never replaced by another mount.
    static func choice(named: String?, mounts: [String], holding: (String) -> String?) -> Choice {
        if let named, !named.isEmpty {
            guard let mountpoint = holding(named) else {
                return .none("\(environmentVariable) (or ProtfsKeychain.mountpoint) names \(named), which is on no protfs mount")
            }
            return .found(mountpoint)
        }
        let distinct = Set(mounts).sorted()
        switch distinct.count {
        case 1: return .found(distinct[0])
        case 0: return .none("there is no protfs mount on this machine, and \(environmentVariable) is not set")
        default:
            return .none("there are \(distinct.count) protfs mounts (\(distinct.joined(separator: ", "))) and "
                         + "\(environmentVariable) is not set; set it (or ProtfsKeychain.mountpoint) to the keychain vault's mount point")
        }
    }

    func add(_ item: ItemAttributes, secret: Data) throws(KeychainStatus) {
        let buffer = Self.lockedCopy(secret)
        defer { buffer.wipe() }
        _ = try send(.add(item), secrets: [buffer])
    }

    /// The caller's items `query` matches, and their secrets when it asks for them: one
    /// request, answered by the daemon from one state of the store. Each secret is copied once
    /// from locked memory into the object handed to the caller (whose it then is); the locked
    /// copy is wiped. `errSecItemNotFound` for none.
    func search(_ query: ItemQuery) throws(KeychainStatus) -> [(item: ItemAttributes, secret: NSData?)] {
        let message = try send(.search(query))
        let found: [(item: ItemAttributes, secret: NSData?)]
        switch (message.reply, message.secret) {
        case (.items(let items), nil) where !query.returnsSecrets:
            found = items.map { ($0, nil) }
        case (.itemsWithSecrets(let items, let lengths), let secrets?) where query.returnsSecrets:
            defer { secrets.wipe() }
            var offset = 0
            found = secrets.withUnsafeBytes { bytes in
                zip(items, lengths).map { item, length in
                    defer { offset += length }
                    return (item, length == 0 ? NSData() : NSData(bytes: bytes.baseAddress! + offset, length: length))
                }
            }
        default: throw .notAvailable
        }
        guard !found.isEmpty else { throw .itemNotFound }
        return found
    }

    /// Changes every item of the caller `query` matches, in one request.
    func update(_ query: ItemQuery, changes: ItemChanges, rename: ItemRename, secret: Data?) throws(KeychainStatus) {
        let buffer = secret.map(Self.lockedCopy)
        defer { buffer?.wipe() }
        _ = try send(.updateMatches(query, changes: changes, rename: rename, changesSecret: buffer != nil),
                     secrets: buffer.map { [$0] } ?? [])
    }

    /// Deletes every item of the caller `query` matches, in one request.
    func delete(_ query: ItemQuery) throws(KeychainStatus) {
        _ = try send(.deleteMatches(query))
    }

    /// How many requests this process sent each keychain daemon, by mount point: tests count
    /// the round trips of a call with it.
    private static let requestCounts = Mutex<[String: Int]>([:])

    static func requestCount(mountpoint: String) -> Int {
        requestCounts.withLock { $0[ControlSocketPath.canonicalMountpoint(mountpoint), default: 0] }
    }

    private func send(_ operation: ItemRequest.Operation, secrets: [SecureBuffer] = []) throws(KeychainStatus) -> ControlReplyMessage {
        Self.requestCounts.withLock { $0[client.mountpoint, default: 0] += 1 }
        do {
            return try client.exchange(.item(ItemRequest(uid: nil, operation)), secrets: secrets)
        } catch {
            throw KeychainStatus(error)
        }
    }

    private static func lockedCopy(_ data: Data) -> SecureBuffer {
        data.withUnsafeBytes { SecureBuffer(copying: $0) }
    }
}
