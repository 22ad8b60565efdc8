import CFuse
import ProtfsCore

/// A directory opened for reading: its plaintext entries, decoded once at `opendir` so that
/// offsets stay stable across `readdir` calls however the directory changes meanwhile.
final class DirectoryListing: Sendable {
    let entries: [VaultFileSystem.ListedEntry]

    init(entries: [VaultFileSystem.ListedEntry]) { self.entries = entries }
}
