import Glibc
import ProtfsSystem

/// `protfs.restoring` in the backing root (docs/BACKUP.md): a restore under way, or one that
/// was interrupted (Ctrl-C, a crash). Written, with the archive's vault id, before the
/// restore makes anything, and removed once the keybag is written and synced. While it is
/// there the directory is no vault (`Keybag.readBytes` says so), and a rerun of the same
/// archive clears what the interrupted one made and starts again; nothing else may.
public enum RestoreMarker {
    public static let fileName = ReservedNames.namespacePrefix + "restoring"

    /// Marks `root` as being restored from the archive of `vaultID`, durably.
    public static func write(vaultID: ObjectID, in root: FileDescriptor) throws(Errno) {
        try OwnedDescriptor.open(fileName, in: root, [.writeOnly, .create, .exclusive], mode: 0o600).closeAfter { (file) throws(Errno) in
            try vaultID.bytes.withUnsafeBytes { bytes in Result { () throws(Errno) in try file.write(bytes, at: 0) } }.get()
            try file.sync()
        }
        try root.syncDirectory()
    }

    /// Whether `root` is marked, and with which vault id (nil: unreadable, a mark all the same).
    public static func mark(in root: FileDescriptor) -> ObjectID?? {
        guard let file = try? OwnedDescriptor.openRegularFile(fileName, in: root) else { return .none }
        return .some((try? file.borrowed.readAll(limit: 64)).flatMap(ObjectID.init(bytes:)))
    }

    /// The restore is complete: the mark goes, durably.
    public static func remove(in root: FileDescriptor) throws(Errno) {
        try root.removeFile(fileName)
        try root.syncDirectory()
    }
}
