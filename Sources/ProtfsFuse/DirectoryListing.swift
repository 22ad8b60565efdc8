import ProtfsCore

/// A directory opened for reading (a FUSE `fh`): its reader, whose offsets are the backing
/// directory's own positions.
final class DirectoryListing: Sendable {
    let reader: DirectoryReader

    init(reader: DirectoryReader) { self.reader = reader }

    var directory: BackingNode { reader.directory }
}
