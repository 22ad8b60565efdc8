import Glibc

/// Who sent a request: new objects are given to this user (when the daemon runs as root),
/// and only the owner may change a class.
public struct Caller: Sendable {
    public let uid: uid_t
    public let gid: gid_t
    public let pid: pid_t

    public init(uid: uid_t, gid: gid_t, pid: pid_t) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }
}
