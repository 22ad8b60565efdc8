import Glibc
import ProtfsSystem

/// A directory a client looks for a daemon's socket in, and the uids it trusts to serve there
/// (pam_protfs trusts the same): root in `/run/protfs`; the user or root in the user's runtime
/// directory. Nothing is sent, no passcode above all, unless the socket belongs to a trusted
/// uid and the process that answers it runs as one (`SO_PEERCRED`), and, for a runtime
/// directory, that directory and its parent belong to one and are closed to others' writes:
/// otherwise whoever could write there (a user whose runtime directory root's
/// `XDG_RUNTIME_DIR` names, say) would collect it. Only root can make a socket or a server
/// of root's, so `/run/protfs` needs no more, except in a user namespace that shows root as
/// the overflow uid, like every other unmapped uid (`ControlSocketPath.rootAsSeen`).
public struct ControlSocketDirectory: Sendable, Equatable {
    public let path: String
    public let trusted: [uid_t]
    /// Whether the directory and its parent are checked too (a runtime directory).
    let checksDirectories: Bool

    public init(_ path: String, trusting trusted: [uid_t], checkingDirectories: Bool = true) {
        self.path = path
        checksDirectories = checkingDirectories
        var distinct: [uid_t] = []
        for uid in trusted where !distinct.contains(uid) { distinct.append(uid) }
        self.trusted = distinct
    }

    /// Why a socket in this directory must not be used, or nil when it may: the directory,
    /// its parent and the socket file (which must exist) are checked without following links.
    func distrust(ofSocket socket: String) -> String? {
        let parent = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        for directory in checksDirectories ? [parent, path] : [] {
            var st = stat()
            guard lstat(directory, &st) == 0 else { return "\(directory) cannot be inspected: \(Errno.current)" }
            guard st.st_mode & S_IFMT == S_IFDIR, trusted.contains(st.st_uid), st.st_mode & 0o022 == 0 else {
                return "\(directory) is not a directory of \(trustedNames) closed to others' writes "
                    + "(owner uid \(st.st_uid), mode \(String(st.st_mode & 0o7777, radix: 8)))"
            }
        }
        var st = stat()
        guard lstat(socket, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK else { return "\(socket) is not a socket" }
        guard trusted.contains(st.st_uid) else { return "\(socket) belongs to uid \(st.st_uid), not \(trustedNames)" }
        return nil
    }

    /// Why the process at the other end of `connection` must not be told anything, or nil.
    func distrust(ofPeer connection: borrowing UnixSocket, at socket: String) -> String? {
        guard let peer = connection.peer() else { return "the process serving \(socket) cannot be identified" }
        guard trusted.contains(peer.uid) else {
            return "\(socket) is served by a process of uid \(peer.uid), not one this user may trust (\(trustedNames))"
        }
        return nil
    }

    private var trustedNames: String { trusted.map { $0 == 0 ? "root" : "uid \($0)" }.joined(separator: " or ") }
}
