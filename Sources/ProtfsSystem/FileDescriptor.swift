import Glibc
import CProtfsSys

/// An open file descriptor as a small typed value, borrowed: it cannot close what it names,
/// which an `OwnedDescriptor` does (every open makes one). Every path-taking call is an `*at`
/// call relative to a descriptor, with `O_NOFOLLOW` / `AT_SYMLINK_NOFOLLOW`: no host path is
/// ever built from names the kernel sends.
public struct FileDescriptor: Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let currentWorkingDirectory = FileDescriptor(rawValue: AT_FDCWD)

    public struct OpenFlags: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let readOnly = OpenFlags([])
        public static let writeOnly = OpenFlags(rawValue: O_WRONLY)
        public static let readWrite = OpenFlags(rawValue: O_RDWR)
        public static let create = OpenFlags(rawValue: O_CREAT)
        public static let exclusive = OpenFlags(rawValue: O_EXCL)
        public static let truncate = OpenFlags(rawValue: O_TRUNC)
        public static let append = OpenFlags(rawValue: O_APPEND)
        public static let directory = OpenFlags(rawValue: O_DIRECTORY)
        public static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
        public static let path = OpenFlags(rawValue: protfs_O_PATH)
        public static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
        public static let closeOnExec = OpenFlags(rawValue: O_CLOEXEC)
        public static let noAccessTime = OpenFlags(rawValue: protfs_O_NOATIME)
    }

    public func duplicate() throws(Errno) -> OwnedDescriptor {
        OwnedDescriptor(adopting: FileDescriptor(rawValue: try syscallRetrying { fcntl(rawValue, F_DUPFD_CLOEXEC, 0) }))
    }

    // MARK: I/O

    /// Reads up to `buffer.count` bytes at `offset`, looping over short reads until EOF.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        var done = 0
        while done < buffer.count {
            let n = try syscallRetrying { pread(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done)) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `buffer` at `offset`.
    public func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        var done = 0
        while done < buffer.count {
            let n = try syscallRetrying { pwrite(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done)) }
            done += n
        }
    }

    /// Reads the whole (small) file from offset 0.
    public func readAll(limit: Int = 16 << 20) throws(Errno) -> [UInt8] {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
        defer { chunk.deallocate() }
        var out: [UInt8] = []
        while out.count <= limit {
            let n = try read(into: chunk, at: Int64(out.count))
            out.append(contentsOf: chunk[0..<n])
            if n < chunk.count { break }
        }
        return out
    }

    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        try bytes.withUnsafeBytes { b in Result { () throws(Errno) in try write(b, at: 0) } }.get()
    }

    /// Asks the kernel to start reading `length` bytes at `offset` into the page cache
    /// (`POSIX_FADV_WILLNEED`) and returns without waiting for the disk.
    public func adviseWillNeed(offset: Int64, length: Int64) throws(Errno) {
        let result = posix_fadvise(rawValue, off_t(offset), off_t(length), POSIX_FADV_WILLNEED)
        guard result == 0 else { throw Errno(result) }
    }

    public func sync() throws(Errno) { _ = try syscallRetrying { fsync(rawValue) } }

    /// Syncs the directory this descriptor refers to, through a fresh read-only descriptor
    /// (an `O_PATH` descriptor cannot be synced itself).
    public func syncDirectory() throws(Errno) {
        try OwnedDescriptor.open(".", in: self, [.readOnly, .directory]).closeAfter { dir throws(Errno) in try dir.sync() }
    }
    public func syncData() throws(Errno) { _ = try syscallRetrying { fdatasync(rawValue) } }
    /// Syncs the whole filesystem this descriptor is on (`syncfs(2)`): one call in place of a
    /// sync per file, for a batch of new files that only count once all of them are there.
    public func syncFileSystem() throws(Errno) { _ = try syscallRetrying { protfs_syncfs(rawValue) } }

    public func truncate(to size: Int64) throws(Errno) { _ = try syscallRetrying { ftruncate(rawValue, off_t(size)) } }

    /// `fallocate`; `keepSize` reserves blocks past EOF without changing the size.
    public func allocate(offset: Int64, length: Int64, keepSize: Bool = false) throws(Errno) {
        let mode = keepSize ? protfs_FALLOC_FL_KEEP_SIZE : 0
        _ = try syscallRetrying { protfs_fallocate(rawValue, mode, off_t(offset), off_t(length)) }
    }

    public func punchHole(offset: Int64, length: Int64) throws(Errno) {
        let mode = protfs_FALLOC_FL_PUNCH_HOLE | protfs_FALLOC_FL_KEEP_SIZE
        _ = try syscallRetrying { protfs_fallocate(rawValue, mode, off_t(offset), off_t(length)) }
    }

    // MARK: metadata

    /// `fstat`; works on `O_PATH` descriptors too (via `AT_EMPTY_PATH`).
    public func status() throws(Errno) -> stat {
        var st = stat()
        _ = try syscallRetrying { fstatat(rawValue, "", &st, protfs_AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) }
        return st
    }

    /// `fstatat(self, name, AT_SYMLINK_NOFOLLOW)`.
    public func status(of name: String) throws(Errno) -> stat {
        var st = stat()
        _ = try syscallRetrying { fstatat(rawValue, name, &st, AT_SYMLINK_NOFOLLOW) }
        return st
    }

    /// The start of the first data at or after `offset` (`SEEK_DATA`); nil when only a hole
    /// is left up to the end.
    public func nextData(from offset: Int64) throws(Errno) -> Int64? {
        let found = lseek(rawValue, off_t(offset), protfs_SEEK_DATA)
        if found >= 0 { return Int64(found) }
        if errno == ENXIO { return nil }
        throw Errno(errno)
    }

    /// The start of the first hole at or after `offset` (`SEEK_HOLE`; the end of the file
    /// counts as one).
    public func nextHole(from offset: Int64) throws(Errno) -> Int64 {
        let found = lseek(rawValue, off_t(offset), protfs_SEEK_HOLE)
        guard found >= 0 else { throw Errno(errno) }
        return Int64(found)
    }

    public func setLock(exclusive: Bool, wait: Bool) throws(Errno) {
        let op = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
        _ = try syscallRetrying { flock(rawValue, op) }
    }

    public func changeMode(_ mode: mode_t) throws(Errno) { _ = try syscallRetrying { fchmod(rawValue, mode) } }
}

/// Types of file a `stat` describes.
extension stat {
    public var fileType: mode_t { st_mode & S_IFMT }
    public var isRegularFile: Bool { fileType == S_IFREG }
    public var isDirectory: Bool { fileType == S_IFDIR }
    public var isSymlink: Bool { fileType == S_IFLNK }
}
