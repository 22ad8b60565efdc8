import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// Searches, updates and deletes by query (`SecItemCopyMatching`, `SecItemUpdate`,
/// `SecItemDelete`, the Secret Service's `SearchItems`): matched here, under the index's lock,
/// so that what a request reads, changes or removes is one state of the store, and a secret
/// returned is the secret of the item returned with it.
extension ItemStore {
    /// What a search with secrets answers: the items, and their secrets one after the other in
    /// one locked buffer (the caller wipes it), each as long as `secretLengths` says.
    public struct Matches: Sendable {
        public let items: [ItemAttributes]
        public let secrets: SecureBuffer
        public let secretLengths: [Int]
    }

    /// The owner's items that `query` matches (attributes only), by service then account;
    /// refused before any record is read when the reply could be too large (`checkListing`).
    public func search(owner: UInt32, _ query: ItemQuery) throws(ItemError) -> [ItemAttributes] {
        try withIndex(creating: false) { (index, directory) throws(ItemError) in
            try checkListing(owner: owner, query, in: index)
            return matching(owner: owner, query, in: index, directory).map(\.metadata.attributes)
        }
    }

    /// Like `search`, with each item's secret read in the same step. Refused when a secret's
    /// class key is not available now, or when the secrets would total more than one reply
    /// carries (the lengths are in the index: refused before any is read).
    public func searchWithSecrets(owner: UInt32, _ query: ItemQuery) throws(ItemError) -> Matches {
        try withIndex(creating: false) { (index, directory) throws(ItemError) in
            try checkListing(owner: owner, query, in: index)
            let found = matching(owner: owner, query, in: index, directory)
            let total = found.reduce(0) { $0 + $1.record.secretLength }
            guard total <= ItemLimits.maximumMatchedSecretBytes else {
                throw .invalid("the \(found.count) matching items' secrets total \(total) bytes, more than the "
                               + "\(ItemLimits.maximumMatchedSecretBytes) one answer carries; match fewer items "
                               + "(a limit, more attributes) or ask for their attributes alone")
            }
            let secrets = SecureBuffer(count: total)
            var lengths: [Int] = []
            for match in found {
                let accessibility = match.metadata.attributes.accessibility
                let secret = try guarded([(.openExisting, accessibility)], match.metadata.identity) { () throws(Errno) in
                    try match.record.openSecret(accessibility: accessibility, recordName: match.name, keyring: keyring)
                }
                let offset = lengths.reduce(0, +)
                guard offset + secret.count <= total else {
                    throw .damaged(service: match.metadata.attributes.service, account: match.metadata.attributes.account)
                }
                secret.withUnsafeBytes { source in
                    secrets.withUnsafeMutableBytes { target in
                        UnsafeMutableRawBufferPointer(rebasing: target[offset..<offset + source.count]).copyMemory(from: source)
                    }
                }
                lengths.append(secret.count)
            }
            return Matches(items: found.map(\.metadata.attributes), secrets: secrets, secretLengths: lengths)
        }
    }

    /// Like `search`, with whether each item is locked (its secret cannot be read now) and the
    /// lock state, decided here by the access table as `get` decides it, as of the search:
    /// the Secret Service shows what the daemon would do, not a copy of its rules.
    public func searchWithLocks(owner: UInt32, _ query: ItemQuery) throws(ItemError) -> (items: [ItemAttributes], locked: [Bool], state: LockState) {
        try withIndex(creating: false) { (index, directory) throws(ItemError) in
            try checkListing(owner: owner, query, in: index)
            let items = matching(owner: owner, query, in: index, directory).map(\.metadata.attributes)
            let state = controller.state
            return (items, items.map { isLocked($0.accessibility, in: state) }, state)
        }
    }

    /// Whether a secret of `accessibility` cannot be read in `state`: the table forbids opening
    /// it (`guarded`), or it needs a passcode the vault does not have.
    func isLocked(_ accessibility: ItemAccessibility, in state: LockState) -> Bool {
        (accessibility.needsPasscode && !vault.passcodeSet)
            || !AccessPolicy.decision(for: .openExisting, of: accessibility.protectionClass, in: state).isAllowed
    }

    /// Removes every item of the owner that `query` matches, at once; returns how many. Not
    /// found when none does.
    @discardableResult
    public func deleteMatches(owner: UInt32, _ query: ItemQuery) throws(ItemError) -> Int {
        try snapshots.changingNamespace { () throws(ItemError) in
            try withIndex(creating: false) { (index, directory) throws(ItemError) in
                let found = matching(owner: owner, query, in: index, directory)
                guard let directory, !found.isEmpty else { throw .noMatch }
                for match in found {
                    do throws(Errno) { try directory.removeFile(match.name) } catch {
                        throw .system(operation: "remove an item from", errno: error)
                    }
                    index[match.name] = nil
                }
                do throws(Errno) { try directory.syncDirectory() } catch { throw .system(operation: "sync", errno: error) }
                return found.count
            }
        }
    }

    /// Changes every item of the owner that `query` matches (as iOS's `SecItemUpdate`): every
    /// new version is made before any is written, so a refusal (a duplicate name, a class key
    /// not available now, a bound) changes nothing. A rename applies to one match only: several
    /// items renamed to one name, or to the name of another item, are a duplicate.
    public func updateMatches(owner: UInt32, _ query: ItemQuery, changes: ItemChanges, rename: ItemRename,
                              secret: SecureBuffer?) throws(ItemError) {
        try Self.check(changes, service: rename.service ?? "", account: rename.account ?? "", secret: secret)
        try snapshots.changingNamespace { () throws(ItemError) in
            try withIndex(creating: false) { (index, directory) throws(ItemError) in
                let found = matching(owner: owner, query, in: index, directory)
                guard !found.isEmpty else { throw .noMatch }
                var versions: [Updated] = []
                for match in found {
                    let new = try updated(match.record, match.metadata, named: match.name, changes: changes, rename: rename,
                                          secret: secret)
                    if new.name != match.name && (found.count > 1 || index[new.name] != nil) {
                        throw .duplicate(service: new.metadata.attributes.service, account: new.metadata.attributes.account)
                    }
                    versions.append(new)
                }
                try checkRoom(owner: owner, replacing: Set(found.map(\.name)),
                              with: versions.map { Entry($0.record, $0.metadata) }, in: index)
                // Each record is synced before its rename; the directory once after every rename,
                // before the answer (docs/PERFORMANCE.md, "Syncs of the item store"), except
                // around a rename of the item, whose new record is in place (and synced) before
                // the old goes.
                var renamesToSync = false
                for (match, new) in zip(found, versions) {
                    let renamed = new.name != match.name
                    try write(new.record, named: new.name, in: directory, syncDirectory: renamed)
                    index[new.name] = Entry(new.record, new.metadata)
                    guard renamed, let directory else {
                        renamesToSync = true
                        continue
                    }
                    do throws(Errno) {
                        try directory.removeFile(match.name)
                        try directory.syncDirectory()
                    } catch {
                        throw .system(operation: "remove an item from", errno: error)
                    }
                    index[match.name] = nil
                }
                guard renamesToSync, let directory else { return }
                do throws(Errno) { try directory.syncDirectory() } catch { throw .system(operation: "sync", errno: error) }
            }
        }
    }

    /// One matching record.
    struct Match {
        let name: String
        let record: ItemRecord
        let metadata: ItemMetadata
    }

    /// The owner's records that `query` matches, by service then account, at most its limit.
    /// The index rules most others out, so only candidates are read; a record that does not
    /// authenticate matches nothing.
    func matching(owner: UInt32, _ query: ItemQuery, in index: [String: Entry], _ directory: FileDescriptor?) -> [Match] {
        guard let directory else { return [] }
        let filter = ItemSearchKeys.Filter(query)
        var found: [Match] = []
        for (name, entry) in index where entry.owner == owner && filter.admits(entry.searchKeys) {
            TestDelays.pause(TestDelays.itemRecord)
            guard let (record, metadata) = try? loadRecord(name, in: directory), query.matches(metadata.attributes) else { continue }
            found.append(Match(name: name, record: record, metadata: metadata))
        }
        found.sort { ($0.metadata.attributes.service, $0.metadata.attributes.account) < ($1.metadata.attributes.service, $1.metadata.attributes.account) }
        return query.limit.map { Array(found.prefix($0)) } ?? found
    }
}
