import Glibc
import ProtfsSystem

/// The `fusermount3` process libfuse leaves beside a daemon mounted with `auto_unmount`:
/// when the daemon dies it checks that a FUSE mount on the mount point answers ENOTCONN,
/// then unmounts whatever FUSE mount is on that path. Clearing the dead mount before it has
/// done so lets its unmount, a moment later, take the new mount instead.
enum AutoUnmountHelper {
    /// Whether a `fusermount3` whose last argument is `mountpoint` is running.
    static func isRunning(for mountpoint: String) -> Bool {
        guard let proc = try? OwnedDescriptor.open(path: "/proc", [.readOnly, .directory]) else { return false }
        let processes = (try? proc.borrowed.entryNames()) ?? []
        return processes.contains { pid in
            guard pid.allSatisfy(\.isNumber), let arguments = commandLine(of: pid) else { return false }
            return arguments.first?.split(separator: "/").last == "fusermount3" && arguments.last == mountpoint
        }
    }

    /// Waits up to `timeout` for the helper of a dead mount to take it away; true once it is
    /// gone, false when no helper is left to do it (the caller clears it then).
    static func awaitUnmount(of mountpoint: String, timeout: Duration = .seconds(5)) -> Bool {
        let pause = Duration.milliseconds(20)
        for _ in 0 ..< Int(timeout / pause) {
            let helperRunning = isRunning(for: mountpoint)
            if !MountTable.protfsMountPoints().contains(mountpoint) { return true }
            if !helperRunning { return false }
            sleep(for: pause)
        }
        return false
    }

    private static func commandLine(of pid: String) -> [String]? {
        guard let file = try? OwnedDescriptor.open(path: "/proc/\(pid)/cmdline", .readOnly),
              let bytes = try? file.borrowed.readAll(limit: 1 << 16) else { return nil }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }
}
