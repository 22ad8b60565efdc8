import Glibc
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// A directory opened for one listing request. Entries are read from the backing directory
/// and their names decrypted as the kernel asks for them, resuming at the backing
/// directory's own positions (which hold across opens): a listing of 100,000 entries takes
/// no more memory than one of ten, and needs no handle between requests.
public final class DirectoryReader: Sendable {
    public let directory: BackingNode
    private let stream: DirectoryStream
    private let directoryID: ObjectID
    private let keys: FilesystemKeys

    init(directory: BackingNode, directoryID: ObjectID, keys: FilesystemKeys, movingAccessTime: Bool) throws(Errno) {
        self.directory = directory
        self.directoryID = directoryID
        self.keys = keys
        stream = try DirectoryStream(directory.descriptor, movingAccessTime: movingAccessTime)
    }

    /// Visits the entries from `offset` on (0: the start, else an offset handed out before),
    /// `.` and `..` included (with the backing inode numbers: an entry with inode 0 is one
    /// `readdir(3)` skips), each with the offset just after it, while `visit` returns true.
    /// Names that do not decode (planted or damaged entries) are left out and handed to
    /// `undecodable`; the daemon's own files are left out silently.
    public func read(from offset: Int64, undecodable: (String) -> Void,
                     _ visit: (VaultFileSystem.ListedEntry, Int64) -> Bool) {
        stream.read(from: offset) { raw, next in
            if raw.name == "." || raw.name == ".." {
                return visit(VaultFileSystem.ListedEntry(name: Array(raw.name.utf8), inode: raw.inode, type: UInt8(DT_DIR),
                                                        backingName: nil), next)
            }
            // The daemon's own files (all in its namespace) stay out silently. Any other name is
            // decoded once, by the decryption: a foreign one fails there as it would fail
            // `classify`, which decodes it too (twice per entry before, with `plaintextName`).
            if raw.name.utf8.starts(with: ReservedNames.namespacePrefix.utf8),
               BackingEntryName.classify(raw.name) != .longEntry {
                return true
            }
            guard var name = BackingEntryName.plaintextName(of: raw.name, in: directory.descriptor,
                                                            directoryID: directoryID, keys: keys) else {
                undecodable(raw.name)
                return true
            }
            // The plaintext name is wiped once the visitor has it in its reply.
            defer { secureZero(&name) }
            return visit(VaultFileSystem.ListedEntry(name: name, inode: raw.inode, type: raw.type, backingName: raw.name), next)
        }
    }
}
