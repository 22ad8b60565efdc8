import Glibc
import CProtfsSys

/// A POSIX error number as a typed value; what every syscall wrapper here throws, and what
/// the FUSE adapter replies with.
///
/// The names follow swift-system's `Errno` where they are the same; these differ (they
/// predate the comparison, and renaming them would touch some 200 lines of every layer
/// while other work is under way):
///
/// | errno          | here                | swift-system                  |
/// |----------------|---------------------|-------------------------------|
/// | `ENOENT`       | `noEntry`           | `noSuchFileOrDirectory`       |
/// | `EEXIST`       | `exists`            | `fileExists`                  |
/// | `EIO`          | `io`                | `ioError`                     |
/// | `EINVAL`       | `invalid`           | `invalidArgument`             |
/// | `ERANGE`       | `range`             | `outOfRange`                  |
/// | `ENAMETOOLONG` | `nameTooLong`       | `fileNameTooLong`             |
/// | `ENOTEMPTY`    | `notEmpty`          | `directoryNotEmpty`           |
/// | `EBADF`        | `badFile`           | `badFileDescriptor`           |
/// | `EXDEV`        | `crossDevice`       | `improperLink`                |
/// | `ELOOP`        | `loop`              | `tooManySymbolicLinkLevels`   |
/// | `ENOSYS`       | `notImplemented`    | `noFunction`                  |
///
/// `notSupported` is `EOPNOTSUPP`, which swift-system calls `notSupportedOnSocket`; on Linux
/// it is the same number as `ENOTSUP`, swift-system's `notSupported`.
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's errno right now.
    public static var current: Errno { Errno(protfs_errno()) }

    public var description: String { String(cString: strerror(rawValue)) }

    public static let permissionDenied = Errno(EACCES)       // the lock's answer
    public static let notPermitted = Errno(EPERM)
    public static let noEntry = Errno(ENOENT)
    public static let exists = Errno(EEXIST)
    public static let io = Errno(EIO)                        // failed authentication
    public static let invalid = Errno(EINVAL)
    public static let noData = Errno(ENODATA)
    public static let range = Errno(ERANGE)
    public static let nameTooLong = Errno(ENAMETOOLONG)
    public static let notSupported = Errno(EOPNOTSUPP)
    public static let notDirectory = Errno(ENOTDIR)
    public static let isDirectory = Errno(EISDIR)
    public static let notEmpty = Errno(ENOTEMPTY)
    public static let noSpace = Errno(ENOSPC)
    public static let badFile = Errno(EBADF)
    public static let interrupted = Errno(EINTR)
    public static let wouldBlock = Errno(EWOULDBLOCK)
    public static let tooManyLinks = Errno(EMLINK)
    public static let crossDevice = Errno(EXDEV)
    public static let loop = Errno(ELOOP)
    public static let fileTooLarge = Errno(EFBIG)
    public static let tooManyOpenFiles = Errno(EMFILE)     // this process's descriptor limit
    public static let notImplemented = Errno(ENOSYS)       // a system call this kernel lacks
}

/// Runs a syscall that reports failure as -1 and errno, retrying on EINTR.
@inline(__always)
public func syscallRetrying<T: BinaryInteger>(_ body: () -> T) throws(Errno) -> T {
    while true {
        let r = body()
        if r != -1 { return r }
        let e = Errno.current
        if e != .interrupted { throw e }
    }
}
