import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// `protfs.items`: every keychain item record must authenticate in this vault under its own
/// name (so it belongs to the owner, service and account that name it), and, when its class
/// key is in memory, its key and secret must open. A record that does not is moved to
/// `protfs.lost+found` under `--repair`; temporaries left by a crash go.
extension VaultChecker {
    func checkItems() {
        let location = Location.daemonFile(backingPath: ReservedNames.items)
        let owned: OwnedDescriptor
        do { owned = try OwnedDescriptor.open(ReservedNames.items, in: vault.backingRoot, [.readOnly, .directory, .nonBlocking]) } catch {
            // Missing (no item yet), or not a directory (reported by the walk as foreign).
            if error != .noEntry && error != .notDirectory && error != .loop {
                record(.unreadable(operation: "list", errno: error), at: location)
            }
            return
        }
        let directory = owned.borrowed
        let names: [String]
        do { names = try directory.entryNames().sorted() } catch {
            record(.unreadable(operation: "list", errno: error), at: location)
            return
        }
        for name in names {
            guard let status = try? directory.status(of: name) else { continue }
            let place = Location.daemonFile(backingPath: ReservedNames.items + "/" + name)
            switch ReservedFolderEntry.classify(name, in: ReservedNames.items, isRegularFile: status.isRegularFile) {
            case .temporary: removeTemporary(name, in: directory)
            case .record:
                report.items += 1
                checkItem(name, in: directory, location: place)
            case .foreign: record(.foreign, at: place)
            }
        }
    }

    private func checkItem(_ name: String, in directory: FileDescriptor, location: Location) {
        let loaded: (ItemRecord, ItemMetadata)
        do {
            loaded = try ItemRecord.read(name, in: directory, vaultID: vault.vaultID, keys: keys)
        } catch .io {
            return moveToLostAndFound(name, in: directory, location: location, problem: .itemRecordDamaged)
        } catch {
            return record(.unreadable(operation: "read", errno: error), at: location)
        }
        let (itemRecord, metadata) = loaded
        if itemRecord.version == 1 { report.formatOneItems += 1 }
        let accessibility = metadata.attributes.accessibility
        guard keyring.key(for: accessibility.protectionClass) != nil else {
            report.itemsNotChecked += 1
            return
        }
        do {
            _ = try itemRecord.openSecret(accessibility: accessibility, recordName: name, keyring: keyring)  // wiped at once
        } catch {
            moveToLostAndFound(name, in: directory, location: location, problem: .itemSecretDamaged)
        }
    }
}
