import Glibc
import CProtfsSys
import Synchronization

/// Entry operations relative to a directory descriptor; never follow a final symlink.
extension FileDescriptor {
    public func makeDirectory(_ name: String, mode: mode_t) throws(Errno) {
        _ = try syscallRetrying { mkdirat(rawValue, name, mode) }
    }

    public func removeFile(_ name: String) throws(Errno) {
        _ = try syscallRetrying { unlinkat(rawValue, name, 0) }
    }

    public func removeDirectory(_ name: String) throws(Errno) {
        _ = try syscallRetrying { unlinkat(rawValue, name, AT_REMOVEDIR) }
    }

    public struct RenameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let noReplace = RenameFlags(rawValue: protfs_RENAME_NOREPLACE)
        public static let exchange = RenameFlags(rawValue: protfs_RENAME_EXCHANGE)
        public static let whiteout = RenameFlags(rawValue: protfs_RENAME_WHITEOUT)
    }

    public func rename(_ name: String, to newDir: FileDescriptor, _ newName: String, flags: RenameFlags = []) throws(Errno) {
        _ = try syscallRetrying { protfs_renameat2(rawValue, name, newDir.rawValue, newName, flags.rawValue) }
    }

    /// Hard-links the object this `O_PATH` descriptor refers to as `newName` in `newDir`.
    /// Through the descriptor's proc link: `AT_EMPTY_PATH` would need CAP_DAC_READ_SEARCH,
    /// and following a proc magic link lands on the object itself, never further.
    public func link(to newDir: FileDescriptor, _ newName: String) throws(Errno) {
        let path = procPath
        _ = try syscallRetrying { linkat(AT_FDCWD, path, newDir.rawValue, newName, AT_SYMLINK_FOLLOW) }
    }

    public func makeSymlink(_ name: String, target: String) throws(Errno) {
        _ = try syscallRetrying { symlinkat(target, rawValue, name) }
    }

    /// Reads a symlink: `name` in this directory, or this `O_PATH` descriptor itself when empty.
    public func readSymlink(_ name: String = "") throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = try syscallRetrying { readlinkat(rawValue, name, &buffer, buffer.count - 1) }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func makeNode(_ name: String, mode: mode_t, device: dev_t) throws(Errno) {
        _ = try syscallRetrying { mknodat(rawValue, name, mode, device) }
    }

    /// `fchownat` on `name` (or on this descriptor when `name` is empty), never following.
    public func changeOwner(_ name: String = "", uid: uid_t, gid: gid_t) throws(Errno) {
        let flags = AT_SYMLINK_NOFOLLOW | (name.isEmpty ? protfs_AT_EMPTY_PATH : 0)
        _ = try syscallRetrying { fchownat(rawValue, name, uid, gid, flags) }
    }

    /// Sets the times of the object this `O_PATH` descriptor refers to (`UTIME_NOW` and
    /// `UTIME_OMIT` allowed in either): `utimensat` with `AT_EMPTY_PATH`, or through the proc
    /// link, which names the object itself, on a kernel that refuses that flag (`EINVAL`).
    /// The proc link costs a path walk of its own, which every `touch` would pay.
    public func setTimes(access: FileTime, modification: FileTime) throws(Errno) {
        var times = [access.timespecValue, modification.timespecValue]
        do {
            _ = try syscallRetrying { utimensat(rawValue, "", &times, AT_SYMLINK_NOFOLLOW | protfs_AT_EMPTY_PATH) }
        } catch .invalid {
            let path = procPath
            _ = try syscallRetrying { utimensat(AT_FDCWD, path, &times, 0) }
        }
    }

    /// Whether the kernel has `fchmodat2` (Linux 6.6); learned from the first `ENOSYS`.
    private static let modeByDescriptor = Atomic<Bool>(true)

    /// Changes the mode of the object this `O_PATH` descriptor refers to (not for symlinks:
    /// Linux gives them no mode of their own): `fchmodat2` with `AT_EMPTY_PATH`, or through
    /// the proc link on an older kernel. `EPERM` is also tried again through the proc link:
    /// container seccomp profiles answer system calls they do not know with it.
    public func setMode(_ mode: mode_t) throws(Errno) {
        if Self.modeByDescriptor.load(ordering: .relaxed) {
            do {
                _ = try syscallRetrying { protfs_fchmodat2(rawValue, "", mode, protfs_AT_EMPTY_PATH) }
                return
            } catch .notImplemented {
                Self.modeByDescriptor.store(false, ordering: .relaxed)
            } catch .notPermitted {
                // Either the caller may not, and the proc link says so again, or a filter did.
            }
        }
        let path = procPath
        _ = try syscallRetrying { chmod(path, mode) }
    }

    /// Opens the object this `O_PATH` descriptor refers to for I/O (`O_NONBLOCK` so a FIFO
    /// can never hang the caller; callers check the type first).
    public func reopen(_ flags: OpenFlags) throws(Errno) -> OwnedDescriptor {
        let path = procPath
        let all = flags.union([.closeOnExec, .nonBlocking]).rawValue
        return OwnedDescriptor(adopting: FileDescriptor(rawValue: try syscallRetrying { Glibc.open(path, all, 0) }))
    }

    /// One directory entry as `getdents` reports it.

    /// The entries of this directory (not `.` or `..`), read through a fresh descriptor so
    /// the held descriptor's offset is untouched. Works on `O_PATH` directory descriptors.
    public func entries() throws(Errno) -> [DirectoryEntry] {
        var result: [DirectoryEntry] = []
        try DirectoryStream(self).read(from: 0) { entry, _ in
            if entry.name != "." && entry.name != ".." { result.append(entry) }
            return true
        }
        return result
    }

    /// The names in this directory (not `.` or `..`).
    public func entryNames() throws(Errno) -> [String] {
        try entries().map(\.name)
    }

    /// Path of this descriptor through /proc, for the calls that have no `*at` form with
    /// `AT_EMPTY_PATH` here (xattrs, and `utimensat` and `chmod` on older kernels). It names
    /// the descriptor, not anything the kernel sent.
    public var procPath: String { "/proc/self/fd/\(rawValue)" }
}

/// A time for `utimensat`: leave it, take the current time, or set a given one.
public enum FileTime: Sendable, Equatable {
    case omit
    case now
    case at(seconds: Int, nanoseconds: Int)

    var timespecValue: timespec {
        switch self {
        case .omit: timespec(tv_sec: 0, tv_nsec: protfs_UTIME_OMIT)
        case .now: timespec(tv_sec: 0, tv_nsec: protfs_UTIME_NOW)
        case .at(let seconds, let nanoseconds): timespec(tv_sec: seconds, tv_nsec: nanoseconds)
        }
    }
}

/// One entry of a backing directory.
public struct DirectoryEntry: Sendable {
    public let name: String
    public let inode: UInt64
    /// `DT_*` type (`DT_UNKNOWN` on filesystems that do not report it).
    public let type: UInt8
}

extension OwnedDescriptor {
    /// Opens `name` in `directory` for I/O only if it is a regular file (`EIO` otherwise). It
    /// is first opened with `O_PATH`, which opens nothing (no FIFO wait, no device driver),
    /// checked with `fstat`, and only then reopened through that descriptor: a FIFO, device
    /// node, socket, directory or symlink planted in the backing directory in place of one
    /// of the daemon's files is never opened, and cannot be swapped in after the check.
    public static func openRegularFile(_ name: String, in directory: FileDescriptor,
                                       _ flags: FileDescriptor.OpenFlags = .readOnly) throws(Errno) -> OwnedDescriptor {
        let object = try open(name, in: directory, .path)
        guard try object.borrowed.status().isRegularFile else { throw .io }
        return try object.borrowed.reopen(flags)
    }
}
