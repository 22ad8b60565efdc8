import Glibc
import ProtfsSystem

/// The `fusermount3` process libfuse leaves beside a daemon mounted with `auto_unmount`:
/// when the daemon dies it checks that a FUSE mount on the mount point answers ENOTCONN,
/// then unmounts whatever FUSE mount is on that path. Clearing the dead mount before it has
/// done so lets its unmount, a moment later, take the new mount instead.
enum AutoUnmountHelper {
    /// Whether a `fusermount3` whose last argument is `mountpoint` is running.
    static func isRunning(for mountpoint: String) -> Bool {
        guard let proc = try? FileDescriptor.open(path: "/proc", [.readOnly, .directory]) else { return false }
        defer { proc.close() }
        let processes = (try? proc.entryNames()) ?? []
        return processes.contains { pid in
            guard pid.allSatisfy(\.isNumber), let arguments = commandLine(of: pid) else { return false }
            return arguments.first?.split(separator: "/").last == "fusermount3" && arguments.last == mountpoint
        }
    }

    /// Waits up to `seconds` for the helper of a dead mount to take it away; true once it is
    /// gone, false when no helper is left to do it (the caller clears it then).
    static func awaitUnmount(of mountpoint: String, seconds: Int = 5) -> Bool {
        for _ in 0 ..< seconds * 50 {
            let helperRunning = isRunning(for: mountpoint)
            if !MountTable.protfsMountPoints().contains(mountpoint) { return true }
            if !helperRunning { return false }
            usleep(20_000)
        }
        return false
    }

    private static func commandLine(of pid: String) -> [String]? {
        guard let fd = try? FileDescriptor.open(path: "/proc/\(pid)/cmdline", .readOnly) else { return nil }
        defer { fd.close() }
        guard let bytes = try? fd.readAll(limit: 1 << 16) else { return nil }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }
}
