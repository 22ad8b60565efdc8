import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// The vault's keychain items (docs/CONTROL.md): one sealed record per item in
/// `BACKING/protfs.items`, named by a keyed hash of its owner, service and account. Each
/// request acts for one owner uid and sees only that owner's items; the secret needs the class
/// key of the item's accessibility, decided by the same table as files (`AccessPolicy`,
/// through `LockController.perform`), while attributes, `list` and `delete` need none.
///
/// Requests are served one at a time: the index of which record belongs to which owner (built
/// at the first request from the sealed attributes, so the per-owner bounds need no scan
/// afterwards) and the records change together. Every change is written to a temporary file,
/// synced, renamed into place and the directory synced: a crash leaves the old record or the
/// new one.
public final class ItemStore: Sendable {
    struct Entry {
        /// nil for a record that does not authenticate.
        var owner: UInt32?
        var secretLength: Int
        /// What a search can rule out without reading the record (`ItemSearchKeys`).
        var searchKeys: ItemSearchKeys = ItemSearchKeys()
    }

    /// What one owner may keep, and what the owners other than the privileged ones (root and
    /// the mounting user) may keep between them.
    public struct Bounds: Sendable {
        public let items: Int
        public let secretBytes: Int
        public let othersItems: Int
        public let othersSecretBytes: Int

        public static let standard = Bounds(items: ItemLimits.maximumItemsPerOwner,
                                            secretBytes: ItemLimits.maximumSecretBytesPerOwner,
                                            othersItems: ItemLimits.maximumItemsOfOtherUsers,
                                            othersSecretBytes: ItemLimits.maximumSecretBytesOfOtherUsers)

        public init(items: Int, secretBytes: Int, othersItems: Int, othersSecretBytes: Int) {
            self.items = items
            self.secretBytes = secretBytes
            self.othersItems = othersItems
            self.othersSecretBytes = othersSecretBytes
        }
    }

    let vault: Vault
    private let controller: LockController
    private let bounds: Bounds
    /// Owners outside the shared bound of the others: root and the mounting user.
    private let privilege: MountPrivilege
    let reportDamage: @Sendable (String) -> Void
    /// By record name; nil until the first request.
    let index = Mutex<[String: Entry]?>(nil)

    /// Item changes are namespace changes for a backup of the mounted vault: they wait for it.
    private let snapshots: SnapshotGate

    public init(vault: Vault, controller: LockController, bounds: Bounds = .standard, snapshots: SnapshotGate = SnapshotGate(),
                privilege: MountPrivilege,
                reportDamage: @escaping @Sendable (String) -> Void = { _ in }) {
        self.vault = vault
        self.snapshots = snapshots
        self.controller = controller
        self.bounds = bounds
        self.privilege = privilege
        self.reportDamage = reportDamage
    }

    var keys: FilesystemKeys { vault.filesystemKeys }
    private var keyring: ClassKeyring { vault.keyring }

    // MARK: requests

    /// Adds an item; its times are set now. Refused when the owner has one with the same
    /// service and account (7), when the class forbids creating now (5), beyond the bounds.
    public func add(_ given: ItemAttributes, owner: UInt32, secret: SecureBuffer) throws(ItemError) {
        try Self.check(given, secret: secret)
        try snapshots.changingNamespace { () throws(ItemError) in
            try withIndex(creating: true) { (index, directory) throws(ItemError) in
                let identity = ItemIdentity(owner: owner, service: given.service, account: given.account)
                let name = identity.recordName(keys: keys)
                if let existing = index[name] {
                    if existing.owner == nil { throw .damaged(service: given.service, account: given.account) }
                    throw .duplicate(service: given.service, account: given.account)
                }
                let owned = index.values.filter { $0.owner == owner }
                guard owned.count < bounds.items else { throw .tooMany(limit: bounds.items) }
                try checkTotal(owned.reduce(0) { $0 + $1.secretLength } + secret.count)
                try checkOthersRoom(owner: owner, in: index, adding: 1, secretBytes: secret.count)
                var attributes = given
                attributes.created = Self.now()
                attributes.modified = attributes.created
                let metadata = ItemMetadata(owner: owner, attributes: attributes)
                let record = try guarded([(.create, attributes.accessibility)], identity) { () throws(Errno) in
                    try ItemRecord.seal(metadata, secret: secret, itemID: .random(), recordName: name, keyring: keyring, keys: keys)
                }
                try write(record, named: name, in: directory)
                index[name] = Entry(owner: owner, secretLength: secret.count, searchKeys: ItemSearchKeys(attributes))
            }
        }
    }

    /// The attributes and the secret (in locked memory, for the caller to wipe).
    public func get(_ identity: ItemIdentity) throws(ItemError) -> (ItemAttributes, SecureBuffer) {
        try withIndex(creating: false) { (_, directory) throws(ItemError) in
            let name = identity.recordName(keys: keys)
            let (record, metadata) = try load(name, identity, in: directory)
            let accessibility = metadata.attributes.accessibility
            let secret = try guarded([(.openExisting, accessibility)], identity) { () throws(Errno) in
                try record.openSecret(accessibility: accessibility, recordName: name, keyring: keyring)
            }
            return (metadata.attributes, secret)
        }
    }

    /// Changes attributes and, when `secret` is given, the secret. The secret and the
    /// accessibility need the item's class key (and the new class's); the rest needs none.
    public func update(_ identity: ItemIdentity, changes: ItemChanges, secret: SecureBuffer?) throws(ItemError) {
        if let problem = ItemLimits.problem(service: identity.service, account: identity.account, label: changes.label,
                                            description: changes.description, comment: changes.comment,
                                            generic: changes.generic) {
            throw .invalid(problem)
        }
        if let problem = ItemLimits.problem(lookupAttributes: changes.lookupAttributes, contentType: changes.contentType) {
            throw .invalid(problem)
        }
        if let secret { try Self.checkLength(secret) }
        try snapshots.changingNamespace { () throws(ItemError) in
            try withIndex(creating: false) { (index, directory) throws(ItemError) in
                let name = identity.recordName(keys: keys)
                let (record, old) = try load(name, identity, in: directory)
                var metadata = old
                metadata.attributes.label = changes.label ?? old.attributes.label
                metadata.attributes.description = changes.description ?? old.attributes.description
                metadata.attributes.comment = changes.comment ?? old.attributes.comment
                metadata.attributes.generic = changes.generic ?? old.attributes.generic
                metadata.attributes.accessibility = changes.accessibility ?? old.attributes.accessibility
                metadata.attributes.lookupAttributes = changes.lookupAttributes ?? old.attributes.lookupAttributes
                metadata.attributes.contentType = changes.contentType ?? old.attributes.contentType
                metadata.attributes.modified = Self.now()
                let before = old.attributes.accessibility, after = metadata.attributes.accessibility
                let updated: ItemRecord
                if secret == nil && record.canReplaceMetadata(with: metadata, accessibility: before) {
                    updated = record.replacingMetadata(metadata, recordName: name, vaultID: vault.vaultID, keys: keys)
                } else {
                    if let secret {
                        let others = index.filter { $0.key != name && $0.value.owner == identity.owner }
                        try checkTotal(others.values.reduce(0) { $0 + $1.secretLength } + secret.count)
                        let growth = secret.count - (index[name]?.secretLength ?? 0)
                        if growth > 0 {
                            try checkOthersRoom(owner: identity.owner, in: index, adding: 0, secretBytes: growth)
                        }
                    }
                    // The new version is sealed under the new class; the old key is needed to read the
                    // secret that stays (also when a version 1 record must become version 2 to hold
                    // lookup attributes), and (docs/CONTROL.md) to change the accessibility.
                    let needsOld = secret == nil || before != after
                    let requirements: [(ContentAccess, ItemAccessibility)] = (needsOld ? [(.openExisting, before)] : []) + [(.create, after)]
                    updated = try guarded(requirements, identity) { () throws(Errno) in
                        let value: SecureBuffer
                        if let secret { value = secret } else {
                            value = try record.openSecret(accessibility: before, recordName: name, keyring: keyring)
                        }
                        return try ItemRecord.seal(metadata, secret: value, itemID: record.itemID, recordName: name,
                                                   keyring: keyring, keys: keys)
                    }
                }
                try write(updated, named: name, in: directory)
                index[name] = Entry(owner: identity.owner, secretLength: updated.secretLength,
                                    searchKeys: ItemSearchKeys(metadata.attributes))
            }
        }
    }

    /// Removes an item, in every state (a damaged record of the caller's too).
    public func delete(_ identity: ItemIdentity) throws(ItemError) {
        try snapshots.changingNamespace { () throws(ItemError) in
            try withIndex(creating: false) { (index, directory) throws(ItemError) in
                let name = identity.recordName(keys: keys)
                guard let directory, index[name] != nil else { throw .notFound(service: identity.service, account: identity.account) }
                do throws(Errno) {
                    try directory.removeFile(name)
                    try directory.syncDirectory()
                } catch {
                    throw .system(operation: "remove an item from", errno: error)
                }
                index[name] = nil
            }
        }
    }

    /// Removes every owner's items whose accessibility needs a passcode (docs/CONTROL.md: the
    /// passcode was removed); returns how many. Records that do not authenticate stay.
    @discardableResult
    public func deleteAll(requiringPasscode: Bool) throws(ItemError) -> Int {
        try snapshots.changingNamespace { () throws(ItemError) in
            try withIndex(creating: false) { (index, directory) throws(ItemError) in
                guard let directory else { return 0 }
                var removed = 0
                for name in index.keys.sorted() where index[name]?.owner != nil {
                    guard let (_, metadata) = try? loadRecord(name, in: directory),
                          metadata.attributes.accessibility.needsPasscode == requiringPasscode else { continue }
                    do throws(Errno) { try directory.removeFile(name) } catch {
                        throw .system(operation: "remove an item from", errno: error)
                    }
                    index[name] = nil
                    removed += 1
                }
                if removed > 0 {
                    do throws(Errno) { try directory.syncDirectory() } catch { throw .system(operation: "sync", errno: error) }
                }
                return removed
            }
        }
    }

    /// The owner's items (attributes only), by service then account; only `service`'s when given.
    public func list(owner: UInt32, service: String? = nil) throws(ItemError) -> [ItemAttributes] {
        try search(owner: owner, ItemQuery(service: service))
    }

    /// The owner's items that `query` matches (attributes only), by service then account. The
    /// index rules out the others, so only candidates are read.
    public func search(owner: UInt32, _ query: ItemQuery) throws(ItemError) -> [ItemAttributes] {
        let wanted = ItemSearchKeys(query)
        return try withIndex(creating: false) { (index, directory) throws(ItemError) in
            guard let directory else { return [] }
            var found: [ItemAttributes] = []
            for (name, entry) in index where entry.owner == owner && entry.searchKeys.contains(wanted) {
                guard let (_, metadata) = try? loadRecord(name, in: directory) else { continue }
                if query.matches(metadata.attributes) { found.append(metadata.attributes) }
            }
            return found.sorted { ($0.service, $0.account) < ($1.service, $1.account) }
        }
    }

    /// How many items `owner` has (for `status`).
    public func count(owner: UInt32) throws(ItemError) -> Int {
        try withIndex(creating: false) { (index, _) throws(ItemError) in index.values.count { $0.owner == owner } }
    }

    // MARK: checks

    private static func check(_ attributes: ItemAttributes, secret: SecureBuffer) throws(ItemError) {
        if let problem = ItemLimits.problem(service: attributes.service, account: attributes.account, label: attributes.label,
                                            description: attributes.description, comment: attributes.comment,
                                            generic: attributes.generic)
            ?? ItemLimits.problem(lookupAttributes: attributes.lookupAttributes, contentType: attributes.contentType) {
            throw .invalid(problem)
        }
        try checkLength(secret)
    }

    private static func checkLength(_ secret: SecureBuffer) throws(ItemError) {
        guard secret.count <= ItemLimits.maximumSecretLength else {
            throw .invalid("the secret has \(secret.count) bytes, more than the \(ItemLimits.maximumSecretLength) an item may "
                           + "hold; keep it in a file of the same class instead")
        }
    }

    private func checkTotal(_ total: Int) throws(ItemError) {
        guard total <= bounds.secretBytes else { throw .tooLarge(total: total, limit: bounds.secretBytes) }
    }

    /// For an owner other than the privileged ones: the others' items together, with `items`
    /// more and `secretBytes` more, stay within the shared bound.
    private func checkOthersRoom(owner: UInt32, in index: [String: Entry], adding items: Int, secretBytes: Int)
        throws(ItemError) {
        guard !privilege.isPrivileged(owner) else { return }
        let others = index.values.filter { entry in entry.owner.map { !privilege.isPrivileged($0) } ?? false }
        guard others.count + items <= bounds.othersItems,
              others.reduce(0, { $0 + $1.secretLength }) + secretBytes <= bounds.othersSecretBytes else {
            throw .othersRoomFull(items: bounds.othersItems, secretBytes: bounds.othersSecretBytes)
        }
    }

    private static func now() -> Int64 { Int64(time(nil)) }

    /// Runs `body` under the lock state's shared hold once the table allows every access.
    private func guarded<R>(_ requirements: [(ContentAccess, ItemAccessibility)], _ identity: ItemIdentity,
                            _ body: () throws(Errno) -> R) throws(ItemError) -> R {
        // docs/BACKUP.md: a vault without a passcode has no use for these items.
        if requirements.contains(where: { $0.1.needsPasscode }) && !vault.passcodeSet { throw .passcodeNotSet }
        do {
            return try controller.perform(requirements.map { ($0.0, $0.1.protectionClass) }, body)
        } catch .permissionDenied {
            let state = controller.state
            let refused = requirements.first {
                !AccessPolicy.decision(for: $0.0, of: $0.1.protectionClass, in: state).isAllowed
            } ?? requirements[0]
            throw .refusedByLock(accessibility: refused.1, state: state)
        } catch .io {
            reportDamage("item record \(ReservedNames.items)/\(identity.recordName(keys: keys)) is damaged")
            throw .damaged(service: identity.service, account: identity.account)
        } catch {
            throw .system(operation: "read", errno: error)
        }
    }
}
