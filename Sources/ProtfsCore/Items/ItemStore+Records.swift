import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// The record files behind the item store: the directory, the index of owners built from the
/// sealed attributes at the first request, and reads and atomic writes of records.
extension ItemStore {
    /// Runs `body` with the index (built on first use) and the directory (nil when there is
    /// none yet and `creating` is false), one request at a time.
    func withIndex<R>(creating: Bool,
                              _ body: (inout [String: Entry], FileDescriptor?) throws(ItemError) -> R) throws(ItemError) -> sending R {
        try index.withLock { (cached) throws(ItemError) -> R in try withEntries(&cached, creating: creating, body) }
    }

    /// How many items each owner has, as the last request left the index; built now when no
    /// request has built it yet and none holds it. nil while one holds it before the first
    /// count: `status` reads this and never waits on item work (a search of another user's
    /// held it for seconds, and a login's unlock timed out waiting).
    func ownerCounts() -> [UInt32: Int]? {
        if let counts = publishedCounts.withLock({ $0 }) { return counts }
        return try? index.withLockIfAvailable { (cached) throws(ItemError) -> [UInt32: Int] in
            try withEntries(&cached, creating: false) { (entries, _) in Self.counts(of: entries) }
        }
    }

    private func withEntries<R>(_ cached: inout [String: Entry]?, creating: Bool,
                                _ body: (inout [String: Entry], FileDescriptor?) throws(ItemError) -> R) throws(ItemError) -> sending R {
        let owned = try openDirectory(creating: creating)
        let directory = owned.borrowed
        var entries: [String: Entry]
        if let cached { entries = cached } else { entries = try buildIndex(directory) }
        defer {
            cached = entries
            let counts = Self.counts(of: entries)
            publishedCounts.withLock { $0 = counts }
        }
        return try body(&entries, directory)
    }

    private static func counts(of entries: [String: Entry]) -> [UInt32: Int] {
        var counts: [UInt32: Int] = [:]
        for entry in entries.values { if let owner = entry.owner { counts[owner, default: 0] += 1 } }
        return counts
    }

    private func openDirectory(creating: Bool) throws(ItemError) -> OwnedDescriptor? {
        let root = vault.backingRoot
        do throws(Errno) {
            do {
                return try OwnedDescriptor.open(ReservedNames.items, in: root, [.readOnly, .directory, .nonBlocking])
            } catch .noEntry where creating {
                try root.makeDirectory(ReservedNames.items, mode: 0o700)
                try root.syncDirectory()
                return try OwnedDescriptor.open(ReservedNames.items, in: root, [.readOnly, .directory, .nonBlocking])
            } catch .noEntry {
                return nil
            }
        } catch {
            throw .system(operation: "open", errno: error)
        }
    }

    private func buildIndex(_ directory: FileDescriptor?) throws(ItemError) -> [String: Entry] {
        guard let directory else { return [:] }
        let names: [String]
        do { names = try directory.entryNames() } catch { throw .system(operation: "list", errno: error) }
        var entries: [String: Entry] = [:]
        for name in names where ItemIdentity.isRecordName(name) {
            if let (record, metadata) = try? loadRecord(name, in: directory) {
                entries[name] = Entry(record, metadata)
            } else {
                reportDamage("item record \(ReservedNames.items)/\(name) is damaged")
                entries[name] = Entry(owner: nil, secretLength: 0)
            }
        }
        return entries
    }

    /// The record of `identity`: not found when there is none, damage when it does not
    /// authenticate.
    func load(_ name: String, _ identity: ItemIdentity,
                      in directory: FileDescriptor?) throws(ItemError) -> (ItemRecord, ItemMetadata) {
        guard let directory else { throw .notFound(service: identity.service, account: identity.account) }
        do {
            return try loadRecord(name, in: directory)
        } catch .noEntry {
            throw .notFound(service: identity.service, account: identity.account)
        } catch .io {
            reportDamage("item record \(ReservedNames.items)/\(name) is damaged")
            throw .damaged(service: identity.service, account: identity.account)
        } catch {
            throw .system(operation: "read", errno: error)
        }
    }

    func loadRecord(_ name: String, in directory: FileDescriptor) throws(Errno) -> (ItemRecord, ItemMetadata) {
        try ItemRecord.read(name, in: directory, vaultID: vault.vaultID, keys: keys)
    }

    /// Writes `record` atomically (its file synced before the rename); `syncDirectory: false`
    /// leaves the rename's durability to a directory sync the caller makes before it answers.
    func write(_ record: ItemRecord, named name: String, in directory: FileDescriptor?,
               syncDirectory: Bool = true) throws(ItemError) {
        guard let directory else { throw .system(operation: "write", errno: .noEntry) }
        do {
            try directory.writeFileAtomically(name, contents: record.bytes, syncDirectory: syncDirectory)
        } catch {
            throw .system(operation: "write", errno: error)
        }
    }
}
