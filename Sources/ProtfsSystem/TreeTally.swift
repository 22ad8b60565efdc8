import Glibc

/// The regular files and directories of a tree and the bytes of its files: the total that a
/// progress line's time left is reckoned against. Nothing is followed (no symlink, no other
/// mount's contents are told apart: a rough total is enough); what cannot be read is skipped.
public struct TreeTally: Sendable, Equatable {
    public private(set) var objects: UInt64 = 0
    public private(set) var bytes: UInt64 = 0

    public init() {}

    /// The tree at `path` (itself included when it is a regular file or directory).
    public init(path: String) {
        // Followed, as the commands follow their operands; opened for listing only when a
        // directory (no open of a file a lock state may refuse).
        guard let status = try? OwnedDescriptor.open(path: path, .path).closeAfter({ top throws(Errno) in try top.status() })
        else { return }
        add(status)
        guard status.isDirectory, let directory = try? OwnedDescriptor.open(path: path, [.readOnly, .directory, .nonBlocking])
        else { return }
        addEntries(of: directory.borrowed)
    }

    private mutating func add(_ status: stat) {
        guard status.isRegularFile || status.isDirectory else { return }
        objects += 1
        if status.isRegularFile { bytes += UInt64(max(status.st_size, 0)) }
    }

    private mutating func addEntries(of directory: FileDescriptor) {
        for name in (try? directory.entryNames()) ?? [] {
            guard let status = try? directory.status(of: name) else { continue }
            add(status)
            guard status.isDirectory,
                  let child = try? OwnedDescriptor.open(name, in: directory, [.readOnly, .directory, .nonBlocking]) else { continue }
            addEntries(of: child.borrowed)
        }
    }
}
