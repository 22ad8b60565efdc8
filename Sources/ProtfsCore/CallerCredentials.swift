import Glibc
import ProtfsSystem

/// The kernel's `in_group_or_capable` for a caller: whether it is in a file's group or holds
/// CAP_FSETID, which decides whether a write, truncate, chown or chmod drops the file's
/// set-group-ID bit. A request carries the caller's uid, gid and pid only: supplementary
/// groups and capabilities are read from /proc/PID/status, and capabilities count only for a
/// process of the daemon's own user namespace (they are relative to the caller's). Read after
/// the fact, the pid may name another process by then; the answer only decides whether a bit
/// is dropped, never grants access, and when the process is gone the bit goes.
public enum CallerCredentials {
    static let capFsetid: UInt64 = 1 << 4

    public static func isInGroupOrCapable(_ caller: Caller, group: gid_t) -> Bool {
        if caller.gid == group { return true }
        guard let status = try? FileDescriptor.open(path: "/proc/\(caller.pid)/status", .readOnly) else { return false }
        defer { status.close() }
        guard let bytes = try? status.readAll(limit: 1 << 16) else { return false }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("Groups:") {
                let groups = line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" })
                if groups.contains(where: { gid_t($0) == group }) { return true }
            } else if line.hasPrefix("CapEff:") {
                let effective = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: " \t"), radix: 16) ?? 0
                if effective & capFsetid != 0, sharesUserNamespace(with: caller.pid) { return true }
            }
        }
        return false
    }

    private static func sharesUserNamespace(with pid: pid_t) -> Bool {
        let cwd = FileDescriptor.currentWorkingDirectory
        guard let theirs = try? cwd.readSymlink("/proc/\(pid)/ns/user"),
              let ours = try? cwd.readSymlink("/proc/self/ns/user") else { return false }
        return theirs == ours
    }
}
