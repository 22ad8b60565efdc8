import Glibc
import ProtfsCrypto
import ProtfsSystem

/// Where the control socket of a mount lives (docs/CONTROL.md):
/// `/run/protfs/<16 hex digits>.sock` for a root daemon, `$XDG_RUNTIME_DIR/protfs/...` for
/// any other, named after the first 8 bytes of SHA-256 of the canonical mount point path so
/// that any path spelling of the same mount point finds the same socket.
public enum ControlSocketPath {
    public static let systemDirectory = "/run/protfs"
    public static let directoryMode: mode_t = 0o755
    public static let socketMode: mode_t = 0o666
    /// `sun_path` holds 108 bytes including the terminating NUL.
    public static let maximumPathLength = 107

    /// The socket's file name for a canonical mount point.
    public static func fileName(forMountpoint canonical: String) -> String {
        let digest = SHA256.hash(Array(canonical.utf8)).prefix(8)
        return digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined() + ".sock"
    }

    /// The directory a daemon running as `euid` serves from, or nil for a non-root daemon
    /// without `XDG_RUNTIME_DIR`.
    public static func serverDirectory(euid: uid_t = geteuid()) -> String? {
        euid == 0 ? systemDirectory : userRuntimeDirectory()
    }

    /// Where `protfsctl` looks, in order: the system directory (root's daemons), then the
    /// user's (the user's own daemons, or root's).
    public static func clientDirectories() -> [ControlSocketDirectory] {
        let root = rootAsSeen()
        // Where root shows as the overflow uid, so does every other unmapped uid: then only
        // the directories (root's /run, not writable by others) tell root's socket apart.
        return [ControlSocketDirectory(systemDirectory, trusting: [root], checkingDirectories: root != 0)]
            + (userRuntimeDirectory().map { [ControlSocketDirectory($0, trusting: [getuid(), root])] } ?? [])
    }

    /// The machine's root as this process sees it: 0, or, in a user namespace (`unshare
    /// -Ur`), the uid root maps to there, else the kernel's overflow uid that every unmapped
    /// uid shows as (in owners and in `SO_PEERCRED`).
    public static func rootAsSeen() -> uid_t {
        for line in procText("/proc/self/uid_map").split(separator: "\n") {
            let fields = line.split(separator: " ").compactMap { UInt64($0) }
            guard fields.count == 3 else { continue }
            if fields[1] == 0 && fields[2] > 0 { return uid_t(fields[0]) }
        }
        return procText("/proc/sys/kernel/overflowuid").split(separator: "\n").first.flatMap { uid_t($0) } ?? 65534
    }

    /// A small file of /proc (its size reads as 0, so it is read until the end).
    private static func procText(_ path: String) -> String {
        let bytes = try? OwnedDescriptor.open(path: path, .readOnly).closeAfter { file throws(Errno) in try file.readAll(limit: 65536) }
        return String(decoding: bytes ?? [], as: UTF8.self)
    }

    /// The mount point as the daemon names it: `realpath`, or, when the mount is dead or
    /// gone, the best lexical form. The client never needs access to the mount itself, and
    /// must not touch it: resolving the mount point would send the daemon a request, which
    /// counts as activity and would hold off auto-lock. So the parent is resolved first, and
    /// the mount point itself only when that does not name a protfs mount.
    public static func canonicalMountpoint(_ path: String) -> String {
        if let viaParent = CanonicalPath.resolvingParent(path), MountTable.protfsMountPoints().contains(viaParent) {
            return viaParent
        }
        return CanonicalPath.bestEffort(path)
    }

    private static func userRuntimeDirectory() -> String? {
        guard let raw = getenv("XDG_RUNTIME_DIR") else { return nil }
        let directory = String(cString: raw)
        guard directory.hasPrefix("/") else { return nil }  // the XDG spec: relative values are invalid
        return directory + "/protfs"
    }
}
