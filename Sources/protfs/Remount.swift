import Glibc
import CProtfsSys
import ProtfsCommandLine
import ProtfsCore
import ProtfsDomain
import ProtfsSystem

/// `protfs mount BACKING MOUNTPOINT -o remount[,ro|rw]`, which `mount -o remount,ro
/// MOUNTPOINT` runs through `mount.protfs`: switches the live protfs mount read-only or back
/// with mount(2) `MS_REMOUNT`, which the kernel applies to the FUSE superblock itself (writes
/// then fail with EROFS before they reach the daemon); the daemon goes on serving. Never a
/// second mount. Only `ro`/`rw` change: the other options were fixed when the daemon started,
/// and a warning names those given that differ from what the daemon runs with.
enum Remount {
    static func apply(_ options: MountOptions) -> ExitCode {
        guard let mountpoint = MountPointChecks.canonical(options.mountpoint),
              MountTable.protfsMountPoints().contains(mountpoint) else {
            report("\(options.mountpoint) is not a protfs mount, so there is nothing to remount; mount it first")
            return .failure
        }
        if let backing = MountPointChecks.canonical(options.backing), let served = MountTable.source(of: mountpoint),
           served != backing {
            report("\(mountpoint) serves \(served), not \(backing); nothing was changed")
            return .failure
        }
        // Options repeated as they are in force (mount(8) passes fstab's along) are no change.
        let given = options.givenOwnOptions + options.fuseOptions
        let live = MountTable.options(of: mountpoint) ?? []
        let ignored = given.isEmpty ? [] : RunningMountOptions(mountpoint: mountpoint)?.differing(in: options, live: live) ?? given
        if !ignored.isEmpty {
            report("warning: a remount changes only ro and rw; these stay as mounted: \(ignored.joined(separator: ","))")
        }
        var current = statvfs()
        guard statvfs(mountpoint, &current) == 0 else {
            report("the daemon of \(mountpoint) does not answer (\(Errno.current)); nothing was changed")
            return .failure
        }
        // A remount sets the mount's nosuid, nodev, noexec, sync and dirsync anew: keep them (a
        // FUSE mount always has the first two). Its atime rule is kept when none is given.
        var flags = UInt(MS_REMOUNT) | UInt(MS_NOSUID) | UInt(MS_NODEV)
        if current.f_flag & UInt(protfs_ST_NOEXEC) != 0 { flags |= UInt(MS_NOEXEC) }
        if live.contains("sync") { flags |= UInt(MS_SYNCHRONOUS) }
        if live.contains("dirsync") { flags |= UInt(MS_DIRSYNC) }
        if options.readOnly { flags |= UInt(MS_RDONLY) }
        guard mount(nil, mountpoint, nil, flags, nil) == 0 else {
            let error = Errno.current
            report("cannot remount \(mountpoint) \(options.readOnly ? "read-only" : "read-write") (\(error))"
                   + (error == Errno(EPERM) ? "; only root may remount" : ""))
            return .failure
        }
        return .success
    }

    private static func report(_ message: String) { writeError("protfs mount: \(message)\n") }
}
