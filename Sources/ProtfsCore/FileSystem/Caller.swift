import Glibc
import ProtfsFormat
import ProtfsSystem

/// Who sent a request: new objects are given to this user (when the daemon runs as root),
/// and only the owner may change a class.
public struct Caller: Sendable {
    /// The caller's fsuid as the kernel maps it into the mount's user namespace (the daemon's).
    public let uid: uid_t
    public let gid: gid_t
    public let pid: pid_t

    public init(uid: uid_t, gid: gid_t, pid: pid_t) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }

    /// Whether the caller may act on objects it does not own (`CAP_FOWNER`, as for chmod),
    /// which only root of the mount's user namespace can. The uid comes with the request,
    /// mapped into that namespace, so no other uid ever passes, whatever capabilities its
    /// process holds. The capability itself is read from /proc, where it is relative to the
    /// process's own user namespace: root of a namespace anybody can make (`unshare -Ur`)
    /// has every capability there and none here, so it counts only for a process in the
    /// daemon's namespace. A process gone, or one that cannot be read, has none.
    var hasFownerOverTheMount: Bool {
        uid == 0 && ProcessStatus.holds(ProcessStatus.fowner, pid)
    }
}

/// A user namespace, known by the device and inode of its nsfs file.
struct UserNamespace: Equatable {
    let device: UInt64
    let inode: UInt64

    /// The namespace of process `pid`, if it exists and may be inspected.
    static func of(_ pid: pid_t) -> UserNamespace? { at("/proc/\(pid)/ns/user") }

    /// The daemon's own: the mount's, since the daemon opened the FUSE device and mounted it.
    static let daemon = at("/proc/self/ns/user")

    private static func at(_ path: String) -> UserNamespace? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return UserNamespace(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }
}

/// What /proc/PID/status tells of a caller that a request does not carry: its supplementary
/// groups and its effective capabilities (relative to its own user namespace).
struct ProcessStatus {
    static let fowner: UInt64 = 1 << 3
    static let fsetid: UInt64 = 1 << 4

    let groups: [gid_t]
    let effectiveCapabilities: UInt64

    /// Process `pid`'s status, or nil when it is gone or cannot be read.
    static func of(_ pid: pid_t) -> ProcessStatus? {
        guard pid > 0, let file = try? OwnedDescriptor.open(path: "/proc/\(pid)/status", .readOnly),
              let bytes = try? file.borrowed.readAll(limit: 1 << 16) else { return nil }
        var groups: [gid_t] = []
        var capabilities: UInt64?
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("Groups:") {
                groups = line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { gid_t($0) }
            } else if line.hasPrefix("CapEff:") {
                capabilities = UInt64(String(line.dropFirst("CapEff:".count).filter { $0 != " " && $0 != "\t" }), radix: 16)
            }
        }
        return capabilities.map { ProcessStatus(groups: groups, effectiveCapabilities: $0) }
    }

    /// Whether `capability` is effective for process `pid` over the mount: held, by a process
    /// of the daemon's user namespace.
    static func holds(_ capability: UInt64, _ pid: pid_t) -> Bool {
        guard let daemon = UserNamespace.daemon, UserNamespace.of(pid) == daemon,
              let status = of(pid) else { return false }
        return status.effectiveCapabilities & capability != 0
    }
}
