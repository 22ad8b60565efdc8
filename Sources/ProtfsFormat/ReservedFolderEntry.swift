/// What the daemon's own folders in the backing root (`protfs.items`, `protfs.links`) may
/// hold: records directly inside, each a regular file named as the folder names its records,
/// and leftovers of interrupted atomic writes. `protfs fsck` judges what it finds there by
/// this rule, and a restore takes nothing else from an archive there (docs/BACKUP.md).
package enum ReservedFolderEntry: Equatable {
    /// A leftover of an interrupted atomic write.
    case temporary
    /// A keychain item record, or an out-of-line symlink target, by its name and type.
    case record
    /// Not the daemon's: a directory, symlink or node, or a name it never writes there.
    case foreign

    /// The folders this rule is for; anything under them deeper than their records is foreign.
    package static func isFolder(_ name: some StringProtocol) -> Bool {
        name == ReservedNames.items || name == ReservedNames.links
    }

    package static func classify(_ name: String, in folder: String, isRegularFile: Bool) -> ReservedFolderEntry {
        guard isRegularFile else { return .foreign }
        if name.hasPrefix(ReservedNames.temporaryPrefix) { return .temporary }
        let isRecordName = folder == ReservedNames.items ? ItemIdentity.isRecordName(name)
            : SymlinkTarget.linkID(of: "@" + name) != nil
        return isRecordName ? .record : .foreign
    }

    /// The most bytes a record of `folder` can have.
    package static func maximumByteCount(in folder: String) -> Int {
        folder == ReservedNames.items ? ItemRecord.maximumByteCount : SymlinkTarget.maximumBlobByteCount
    }

    /// Whether `bytes`, named `name` in `folder`, is a record as the daemon reads it: an item
    /// record whose attributes authenticate for its name in this vault (as fsck reads each
    /// one), or a blob of a sealed target's size (what a symlink reads there before opening it).
    package static func isWellFormed(_ bytes: [UInt8], named name: String, in folder: String, vaultID: ObjectID,
                             keys: FilesystemKeys) -> Bool {
        guard folder == ReservedNames.items else { return SymlinkTarget.isPlausibleBlob(byteCount: bytes.count) }
        return (try? ItemRecord.open(bytes, recordName: name, vaultID: vaultID, keys: keys)) != nil
    }
}
