import CFuse
import Glibc
import ProtfsCore

/// A directory opened for reading: its plaintext entries, decoded once at `opendir` so that
/// offsets stay stable across `readdir` calls however the directory changes meanwhile.
final class DirectoryListing: Sendable {
    let directory: BackingNode
    let entries: [VaultFileSystem.ListedEntry]

    init(directory: BackingNode, entries: [VaultFileSystem.ListedEntry]) {
        self.directory = directory
        self.entries = entries
    }

    /// `.` and `..` first, then the entries: offset n means "after the n-th of these".
    var count: Int { entries.count + 2 }

    /// The name and `DT_*` type at `index` of that sequence, and the entry past the dots.
    func item(at index: Int) -> (name: [UInt8], inode: UInt64, type: UInt8, entry: VaultFileSystem.ListedEntry?) {
        switch index {
        case 0: (Array(".".utf8), 0, UInt8(DT_DIR), nil)
        case 1: (Array("..".utf8), 0, UInt8(DT_DIR), nil)
        default: (entries[index - 2].name, entries[index - 2].inode, entries[index - 2].type, entries[index - 2])
        }
    }
}
