import Glibc
import Synchronization

/// A backing directory read a little at a time, with positions that hold between calls
/// (`telldir` cookies, which ext4 keeps stable while entries come and go): a listing of
/// any size in constant memory, resumable at any position a reader was given.
public final class DirectoryStream: Sendable {
    /// The `DIR *`, used by one call at a time.
    private let stream: Mutex<UInt>

    /// Opens `directory` (any descriptor of it, `O_PATH` included) for reading; reading it
    /// moves its access time as the backing filesystem's rule says, unless `movingAccessTime`
    /// is false (O_NOATIME, when allowed: the daemon owns the directory or is root).
    public init(_ directory: FileDescriptor, movingAccessTime: Bool = true) throws(Errno) {
        let flags: FileDescriptor.OpenFlags = [.readOnly, .directory, .nonBlocking]
        let readable: OwnedDescriptor
        do {
            readable = try OwnedDescriptor.open(".", in: directory, movingAccessTime ? flags : flags.union(.noAccessTime))
        } catch .notPermitted {
            readable = try OwnedDescriptor.open(".", in: directory, flags)
        }
        guard let opened = fdopendir(readable.borrowed.rawValue) else { throw Errno.current }
        _ = readable.release()  // the stream owns it now: closedir closes it
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
