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
/// Requests are served one at a time (`status` counts without waiting on them): the index of
/// which record belongs to which owner (built at the first request from the sealed
/// attributes, so the per-owner bounds need no scan afterwards) and the records change
/// together. Every change is written to a temporary file,
/// synced, renamed into place and the directory synced: a crash leaves the old record or the
/// new one.
public final class ItemStore: Sendable {
    struct Entry {
        /// nil for a record that does not authenticate.
        var owner: UInt32?
        var secretLength: Int
        /// The bytes of its sealed attributes (`ItemRecord.attributeLength`).
        var attributeLength: Int = 0
        /// What a search can rule out without reading the record (`ItemSearchKeys`).
        var searchKeys: ItemSearchKeys = ItemSearchKeys()
    }

    let vault: Vault
    let controller: LockController
    let bounds: Bounds
    /// Owners outside the shared bound of the others: root and the mounting user.
    let privilege: MountPrivilege
    let reportDamage: @Sendable (String) -> Void
    /// By record name; nil until the first request.
    let index = Mutex<[String: Entry]?>(nil)
    /// Items per owner, published by every request when it releases the index (`ownerCounts`).
    let publishedCounts = Mutex<[UInt32: Int]?>(nil)

    /// Item changes are namespace changes for a backup of the mounted vault: they wait for it.
    let snapshots: SnapshotGate

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
    var keyring: ClassKeyring { vault.keyring }

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
                var attributes = given
                attributes.created = Self.now()
                attributes.modified = attributes.created
                let metadata = ItemMetadata(owner: owner, attributes: attributes)
                let record = try guarded([(.create, attributes.accessibility)], identity) { () throws(Errno) in
                    try ItemRecord.seal(metadata, secret: secret, itemID: .random(), recordName: name, keyring: keyring, keys: keys)
                }
                let entry = Entry(record, metadata)
                try checkRoom(owner: owner, replacing: [], with: [entry], in: index)
                try write(record, named: name, in: directory)
                index[name] = entry
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
        try Self.check(changes, service: identity.service, account: identity.account, secret: secret)
        try snapshots.changingNamespace { () throws(ItemError) in
            try withIndex(creating: false) { (index, directory) throws(ItemError) in
                let name = identity.recordName(keys: keys)
                let (record, old) = try load(name, identity, in: directory)
                let new = try updated(record, old, named: name, changes: changes, secret: secret)
                let entry = Entry(new.record, new.metadata)
                try checkRoom(owner: identity.owner, replacing: [name], with: [entry], in: index)
                try write(new.record, named: name, in: directory)
                index[name] = entry
            }
        }
    }

    /// Refused unless the attributes of an update fit an item.
    static func check(_ changes: ItemChanges, service: String, account: String, secret: SecureBuffer?) throws(ItemError) {
        if let problem = ItemLimits.problem(service: service, account: account, label: changes.label,
                                            description: changes.description, comment: changes.comment,
                                            generic: changes.generic)
            ?? ItemLimits.problem(lookupAttributes: changes.lookupAttributes, contentType: changes.contentType) {
            throw .invalid(problem)
        }
        if let secret { try checkLength(secret) }
    }

    /// The new version of `record` (whose attributes are `old`, stored as `name`) with `changes`,
    /// `rename` and, when given, `secret`; its record name is another when the rename gives it
    /// another service or account. The secret, the accessibility and a new name need the item's
    /// class key (and the new class's: every part is bound to the name); the rest needs none.
    func updated(_ record: ItemRecord, _ old: ItemMetadata, named name: String, changes: ItemChanges,
                 rename: ItemRename = ItemRename(), secret: SecureBuffer?) throws(ItemError) -> Updated {
        var attributes = old.attributes
        attributes.service = rename.service ?? old.attributes.service
        attributes.account = rename.account ?? old.attributes.account
        attributes.label = changes.label ?? old.attributes.label
        attributes.description = changes.description ?? old.attributes.description
        attributes.comment = changes.comment ?? old.attributes.comment
        attributes.generic = changes.generic ?? old.attributes.generic
        attributes.accessibility = changes.accessibility ?? old.attributes.accessibility
        attributes.lookupAttributes = changes.lookupAttributes ?? Self.renamed(old.attributes, to: attributes)
        attributes.contentType = changes.contentType ?? old.attributes.contentType
        attributes.modified = Self.now()
        let metadata = ItemMetadata(owner: old.owner, attributes: attributes)
        let identity = ItemIdentity(owner: old.owner, service: attributes.service, account: attributes.account)
        let target = identity.recordName(keys: keys)
        let before = old.attributes.accessibility, after = attributes.accessibility
        if secret == nil && target == name && record.canReplaceMetadata(with: metadata, accessibility: before) {
            return Updated(record: record.replacingMetadata(metadata, recordName: name, vaultID: vault.vaultID, keys: keys),
                           metadata: metadata, name: name)
        }
        // The new version is sealed under the new class; the old key is needed to read the
        // secret that stays (also when a version 1 record must become version 2 to hold
        // lookup attributes, or the item gets a new name), and (docs/CONTROL.md) to change the
        // accessibility.
        let needsOld = secret == nil || before != after
        let requirements: [(ContentAccess, ItemAccessibility)] = (needsOld ? [(.openExisting, before)] : []) + [(.create, after)]
        let sealed = try guarded(requirements, identity) { () throws(Errno) in
            let value: SecureBuffer
            if let secret { value = secret } else {
                value = try record.openSecret(accessibility: before, recordName: name, keyring: keyring)
            }
            return try ItemRecord.seal(metadata, secret: value, itemID: record.itemID, recordName: target,
                                       keyring: keyring, keys: keys)
        }
        return Updated(record: sealed, metadata: metadata, name: target)
    }

    /// A record's new version, and the name it is stored under.
    struct Updated {
        let record: ItemRecord
        let metadata: ItemMetadata
        let name: String
    }

    /// The lookup attributes of a renamed item: the Secret Service's `service` and `username`,
    /// by which its clients find an item, follow the rename when they named the old ones.
    private static func renamed(_ old: ItemAttributes, to new: ItemAttributes) -> [String: String] {
        var map = old.lookupAttributes
        if map["service"] == old.service { map["service"] = new.service }
        if map["username"] == old.account { map["username"] = new.account }
        return map
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

    /// How many items `owner` has (for `status`), without waiting on item requests; nil
    /// when the index cannot be read, or is being built by a request (`ownerCounts`).
    public func count(owner: UInt32) -> Int? {
        ownerCounts().map { $0[owner, default: 0] }
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

    static func checkLength(_ secret: SecureBuffer) throws(ItemError) {
        guard secret.count <= ItemLimits.maximumSecretLength else {
            throw .invalid("the secret has \(secret.count) bytes, more than the \(ItemLimits.maximumSecretLength) an item may "
                           + "hold; keep it in a file of the same class instead")
        }
    }

    static func now() -> Int64 { Int64(time(nil)) }

    /// Runs `body` under the lock state's shared hold once the table allows every access.
    func guarded<R>(_ requirements: [(ContentAccess, ItemAccessibility)], _ identity: ItemIdentity,
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
