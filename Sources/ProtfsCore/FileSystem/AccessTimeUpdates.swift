import Glibc

/// Which reads move access times: the mount's `relatime` (the default), `noatime` and
/// `nodiratime`. The kernel leaves the access times of a FUSE mount to the daemon (its inodes
/// are S_NOATIME), and the mount shows the backing objects' times, so the daemon reads the
/// backing objects with O_NOATIME and moves a time only where the mount's rule says so.
public struct AccessTimeUpdates: Sendable, Equatable {
    /// Regular files (false under `noatime`).
    public var files: Bool
    /// Directories, by their listings (false under `noatime` and `nodiratime`).
    public var directories: Bool

    public init(files: Bool = true, directories: Bool = true) {
        self.files = files
        self.directories = directories
    }

    public static let relative = AccessTimeUpdates()
    public static let never = AccessTimeUpdates(files: false, directories: false)

    static let day: Int = 24 * 60 * 60

    /// Linux's `relatime` rule: an access moves the time when it is not later than the last
    /// modification or change, or is a day old.
    public static func isDue(_ status: stat, now: timespec) -> Bool {
        func notAfter(_ a: timespec, _ b: timespec) -> Bool { a.tv_sec < b.tv_sec || a.tv_sec == b.tv_sec && a.tv_nsec <= b.tv_nsec }
        return notAfter(status.st_atim, status.st_mtim) || notAfter(status.st_atim, status.st_ctim)
            || now.tv_sec - status.st_atim.tv_sec >= day
    }
}
