import Glibc
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
        guard uid == 0, pid > 0, let daemon = UserNamespace.daemon, UserNamespace.of(pid) == daemon else { return false }
        return EffectiveCapabilities.of(pid).map { $0 & EffectiveCapabilities.fowner != 0 } ?? false
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

/// A process's effective capabilities, from /proc (the kernel sends only uid, gid and pid).
enum EffectiveCapabilities {
    static let fowner: UInt64 = 1 << 3

    static func of(_ pid: pid_t) -> UInt64? {
        guard let fd = try? FileDescriptor.open(path: "/proc/\(pid)/status", .readOnly) else { return nil }
        defer { fd.close() }
        guard let bytes = try? fd.readAll(limit: 1 << 16) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("CapEff:") {
            return UInt64(String(line.dropFirst("CapEff:".count).filter { $0 != " " && $0 != "\t" }), radix: 16)
        }
        return nil
    }
}
