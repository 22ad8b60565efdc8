import Glibc
import Synchronization

/// A backing directory read a little at a time, with positions that hold between calls
/// (`telldir` cookies, which ext4 keeps stable while entries come and go): a listing of
/// any size in constant memory, resumable at any position a reader was given.
public final class DirectoryStream: Sendable {
    /// The `DIR *`, used by one call at a time.
    private let stream: Mutex<UInt>

    /// Opens `directory` (any descriptor of it, `O_PATH` included) for reading.
    public init(_ directory: FileDescriptor) throws(Errno) {
        let readable = try FileDescriptor.open(".", in: directory, [.readOnly, .directory, .nonBlocking])
        guard let opened = fdopendir(readable.rawValue) else {
            let error = Errno.current
            readable.close()
            throw error
        }
        stream = Mutex(UInt(bitPattern: opened))
    }

    deinit { stream.withLock { _ = closedir(OpaquePointer(bitPattern: $0)!) } }

    /// Calls `visit` with each entry from `position` on (0: the start, else a position an
    /// earlier call handed out) and the position just after it, while `visit` returns true.
    public func read(from position: Int64, _ visit: (DirectoryEntry, Int64) -> Bool) {
        stream.withLock { address in
            let directory = OpaquePointer(bitPattern: address)!
            if position == 0 { rewinddir(directory) } else { seekdir(directory, Int(position)) }
            while let entry = readdir(directory) {
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
                }
                let next = Int64(telldir(directory))
                guard visit(DirectoryEntry(name: name, inode: UInt64(entry.pointee.d_ino), type: entry.pointee.d_type), next)
                else { return }
            }
        }
    }
}
