import Glibc
import ProtfsCore
import ProtfsSystem

/// What `protfs mount` checks before it touches the vault: where it mounts, and what is
/// already there.
enum MountPointChecks {
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    static func canonical(_ path: String) -> String? { CanonicalPath.resolved(path) }

    /// Clears a protfs mount whose daemon died (the kernel answers ENOTCONN, or ECONNABORTED
    /// just after the death, or ECANCELED for a request it was handing to the dead daemon's
    /// io_uring), so the mount point can be used again; refuses a live one. A dead mount stays
    /// until then (the daemon mounts without `auto_unmount`: see `FuseSession.optionString`).
    /// The probe is `statvfs`, a request that always reaches the daemon: a `stat` of the
    /// root is answered from the kernel's attribute cache for a while after the daemon died.
    static func clearDeadMount(at mountpoint: String) throws(Refusal) {
        guard MountTable.protfsMountPoints().contains(mountpoint) else { return }
        var st = statvfs()
        if statvfs(mountpoint, &st) == 0 {
            // Answered: a live mount, unless the dead one went away between the two looks
            // (its helper's unmount) and the plain directory answered.
            guard MountTable.protfsMountPoints().contains(mountpoint) else { return }
            throw Refusal(description: "\(mountpoint) is already a protfs mount; unmount it first (fusermount3 -u \(mountpoint))")
        }
        guard [Errno(ENOTCONN), Errno(ECONNABORTED), Errno(ECANCELED)].contains(Errno.current) else { return }
        if umount2(mountpoint, Int32(MNT_DETACH)) != 0 {
            // fusermount3 gets our standard streams and none of our other descriptors.
            let unmount = try? ChildProcess.spawn(["/bin/fusermount3", "-u", "-z", mountpoint],
                                                  standardOutput: FileDescriptor(rawValue: STDOUT_FILENO))
            if unmount?.wait() != .exited(0) {
                throw Refusal(description: "\(mountpoint) holds the dead mount of a crashed protfs daemon and it could not be cleared")
            }
        }
    }

    /// Refuses a mount point inside the backing directory or the reverse, a missing or
    /// non-directory one, and a non-empty one unless `nonempty`.
    static func check(backing: String, mountpoint: String, nonempty: Bool) throws(Refusal) {
        if backing == mountpoint || mountpoint.hasPrefix(backing + "/") || backing.hasPrefix(mountpoint + "/") {
            throw Refusal(description: "the mount point and the backing directory must not contain each other (\(mountpoint), \(backing))")
        }
        let dir: OwnedDescriptor
        do {
            dir = try OwnedDescriptor.open(path: mountpoint, [.readOnly, .directory])
        } catch {
            throw Refusal(description: "mount point \(mountpoint) is not a directory you can use (\(error))")
        }
        if !nonempty, let names = try? dir.borrowed.entryNames(), !names.isEmpty {
            throw Refusal(description: "mount point \(mountpoint) is not empty; empty it or mount with -o nonempty")
        }
    }
}
