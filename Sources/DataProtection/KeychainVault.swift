import Foundation
import ProtfsControlClient
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

    /// Every item of the caller with `service` (all when nil): attributes, no secrets.
    func list(service: String?) throws(KeychainStatus) -> [ItemAttributes] {
        let message = try send(.list(service: service))
        guard case .items(let items) = message.reply else { throw .notAvailable }
        return items
    }

    /// The item's secret, copied once from locked memory into the object handed to the
    /// caller (whose it then is); the locked copy is wiped.
    func secret(of item: ItemAttributes) throws(KeychainStatus) -> NSData {
        let message = try send(.get(service: item.service, account: item.account))
        guard case .item = message.reply, let secret = message.secret else { throw .notAvailable }
        defer { secret.wipe() }
        return secret.withUnsafeBytes { bytes in
            bytes.isEmpty ? NSData() : NSData(bytes: bytes.baseAddress, length: bytes.count)
        }
    }

    func update(_ item: ItemAttributes, changes: ItemChanges, secret: Data?) throws(KeychainStatus) {
        let buffer = secret.map(Self.lockedCopy)
        defer { buffer?.wipe() }
        _ = try send(.update(service: item.service, account: item.account, changes: changes, changesSecret: buffer != nil),
                     secrets: buffer.map { [$0] } ?? [])
    }

    /// Gives `item` the service or account of `update` with its other changes: the renamed
    /// item is added (refused when it would be a duplicate, leaving everything as it was),
    /// then the old one deleted. protfs names a record by its owner, service and account, so a
    /// new name is a new record, and the secret must be read to be moved.
    func rename(_ item: ItemAttributes, to update: KeychainQuery, secret: Data?) throws(KeychainStatus) {
        let changes = update.changes
        var renamed = item
        renamed.service = update.service ?? item.service
        renamed.account = update.account ?? item.account
        renamed.label = changes.label ?? item.label
        renamed.description = changes.description ?? item.description
        renamed.comment = changes.comment ?? item.comment
        renamed.generic = changes.generic ?? item.generic
        renamed.accessibility = changes.accessibility ?? item.accessibility
        if AccountType.isData(item) { AccountType.markData(&renamed) }
        if let secret {
            try add(renamed, secret: secret)
        } else {
            let old = try send(.get(service: item.service, account: item.account))
            guard case .item = old.reply, let oldSecret = old.secret else { throw .notAvailable }
            defer { oldSecret.wipe() }
            _ = try send(.add(renamed), secrets: [oldSecret])
        }
        try delete(item)
    }

    func delete(_ item: ItemAttributes) throws(KeychainStatus) {
        _ = try send(.delete(service: item.service, account: item.account))
    }

    private func send(_ operation: ItemRequest.Operation, secrets: [SecureBuffer] = []) throws(KeychainStatus) -> ControlReplyMessage {
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
