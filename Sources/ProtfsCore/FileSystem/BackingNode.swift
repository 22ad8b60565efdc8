import Glibc
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// One object of the backing directory, held open with `O_PATH|O_NOFOLLOW` for as long as
/// anything refers to it: every later call on it is relative to this descriptor, so a
/// rename or a planted symlink in the backing directory can never redirect it.
public final class BackingNode: Sendable {
    private let object: OwnedDescriptor
    /// The node's descriptor, for calls on the object; it lives as long as the node.
    public var descriptor: FileDescriptor { object.borrowed }
    public let identity: BackingIdentity
    /// `S_IFMT` bits: the type of an inode never changes.
    public let fileType: mode_t

    /// What is cached about a directory (its id and class) or a file (its header).
    private let directoryCache = Mutex<DirectoryMetadata?>(nil)
    private let headerCache = Mutex<FileHeader?>(nil)
    /// A symlink's location, which its target is sealed to: readlink names only the node.
    private let locationOfSymlink = Mutex<SymlinkLocation?>(nil)
    /// Open handles and the decrypted-content object of a regular file.
    let content = OpenContent()
    /// Set once a handle of this node was opened through the kernel's page cache (not for
    /// direct I/O): from then on the kernel may hold its pages, which a direct write must
    /// drop. The node lives as long as the kernel's inode, and so do its pages.
    public let openedThroughPageCache = Atomic<Bool>(false)
    /// The directory a regular file was last found in (weak: a file holds no directory open).
    private let foundIn = Mutex(WeakNode())

    init(object: consuming OwnedDescriptor, status: stat) {
        self.object = object
        identity = BackingIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        fileType = status.fileType
    }

    /// Opens `name` in `directory` without following it, and stats what was opened (never
    /// the name again, so it cannot be swapped in between).
    public static func open(_ name: String, in directory: FileDescriptor) throws(Errno) -> BackingNode {
        try openWithStatus(name, in: directory).node
    }

    /// `open(_:in:)`, with the status it took of what it opened.
    static func openWithStatus(_ name: String, in directory: FileDescriptor) throws(Errno) -> (node: BackingNode, status: stat) {
        let object = try OwnedDescriptor.open(name, in: directory, [.path])
        let status = try object.borrowed.status()
        return (BackingNode(object: object, status: status), status)
    }

    public var isDirectory: Bool { fileType == S_IFDIR }
    public var isRegularFile: Bool { fileType == S_IFREG }
    public var isSymlink: Bool { fileType == S_IFLNK }

    public func status() throws(Errno) -> stat { try descriptor.status() }

    var cachedDirectoryMetadata: DirectoryMetadata? {
        get { directoryCache.withLock { $0 } }
        set { directoryCache.withLock { $0 = newValue } }
    }

    /// Caches metadata read from disk unless some is cached already, and returns what is
    /// cached. A read that started before a re-class must not undo it: the re-class caches
    /// the old metadata before it replaces the file and the new right after, so only a read
    /// that finishes before any of that lands.
    func cacheReadDirectoryMetadata(_ metadata: DirectoryMetadata) -> DirectoryMetadata {
        directoryCache.withLock { cached in
            if let cached { return cached }
            cached = metadata
            return metadata
        }
    }

    /// Where this symlink was last named (by lookup, listing, creation or rename); nil for
    /// anything else. The last name wins, so a backing hard link to a symlink under another
    /// name opens under neither once looked up (nothing protfs makes has two names).
    public var symlinkLocation: SymlinkLocation? {
        get { locationOfSymlink.withLock { $0 } }
        set { if isSymlink { locationOfSymlink.withLock { $0 = newValue } } }
    }

    /// The directory this regular file was last found in by a lookup or a listing, whose next
    /// files are read ahead while it is read (nil for anything else, or once the directory is
    /// gone). A rename may leave it stale: then the read-ahead finds the file is not there.
    public var directory: BackingNode? {
        get { foundIn.withLock { $0.node } }
        set { if isRegularFile { foundIn.withLock { $0.node = newValue } } }
    }

    var cachedHeader: FileHeader? {
        get { headerCache.withLock { $0 } }
        set { headerCache.withLock { $0 = newValue } }
    }
}

/// A node held without keeping it alive.
private struct WeakNode {
    weak var node: BackingNode?
}
