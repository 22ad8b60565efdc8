import ProtfsDomain
import Glibc

/// Who gets a control connection, decided at `accept` from the peer's uid (`SO_PEERCRED`),
/// before the connection costs a thread for long. Any local user may connect, and a watch
/// lasts as long as its client, so without bounds one user could hold every connection and
/// keep root from locking. So: every uid holds at most `connectionsPerUser` connections at
/// once, `watchesPerUser` of them watches (a connection that sends no request is closed
/// after `ControlLimits.requestTimeout`); and the uids other than root and the
/// mounting user share `otherUsersConnections` between them, so that whatever they hold,
/// root and the mounting user always find room. Item requests are bounded the same way, more
/// tightly: each holds the matched items' attributes and its reply in memory (up to
/// `ItemLimits.maximumListingBytes`), so a uid has at most `itemRequestsPerUser` in flight
/// and the others together `otherUsersItemRequests` (one more waits for room up to
/// `itemRequestWait`, then is refused with the reason); four listings at once of one user took
/// the daemon out of memory before.
public struct ControlAdmission: Sendable {
    public static let connectionsPerUser = 16
    public static let watchesPerUser = 8
    public static let otherUsersConnections = 64
    public static let itemRequestsPerUser = 2
    public static let otherUsersItemRequests = 4
    /// How long an item request waits for room before it is refused.
    public static let itemRequestWait = Duration.seconds(2)

    /// One admitted connection, as the bounds count it.
    struct Tenant: Sendable {
        let uid: uid_t
        var watching = false
        var servingItem = false
        /// Between two requests of a client that keeps the connection.
        var idle = false
        /// Ended to make room for another connection of its uid; its thread is ending.
        var evicted = false
    }

    let mountpoint: String
    let mountingUser: uid_t

    func isPrivileged(_ uid: uid_t) -> Bool { MountPrivilege(owner: mountingUser).isPrivileged(uid) }

    /// Why a new connection of `uid` is refused while `tenants` are served; nil: admitted.
    func refusal(ofConnectionBy uid: uid_t, among tenants: some Collection<Tenant>) -> String? {
        let own = tenants.count(where: { $0.uid == uid })
        if own >= Self.connectionsPerUser {
            return "the daemon of \(mountpoint) is busy: uid \(uid) already holds \(Self.connectionsPerUser) control "
                + "connections; end some (protfsctl watch) and try again"
        }
        if !isPrivileged(uid), tenants.count(where: { !isPrivileged($0.uid) }) >= Self.otherUsersConnections {
            return "the daemon of \(mountpoint) is busy with \(Self.otherUsersConnections) control connections of other "
                + "users; try again later"
        }
        return nil
    }

    /// Why `uid` may not start one more item request while `tenants` are served; nil: it may.
    func refusal(ofItemRequestBy uid: uid_t, among tenants: some Collection<Tenant>) -> String? {
        if tenants.count(where: { $0.uid == uid && $0.servingItem }) >= Self.itemRequestsPerUser {
            return "the daemon of \(mountpoint) is busy: uid \(uid) already has \(Self.itemRequestsPerUser) item requests "
                + "in progress; wait for them to finish and try again"
        }
        if !isPrivileged(uid), tenants.count(where: { !isPrivileged($0.uid) && $0.servingItem }) >= Self.otherUsersItemRequests {
            return "the daemon of \(mountpoint) is busy with \(Self.otherUsersItemRequests) item requests of other users; "
                + "try again later"
        }
        return nil
    }

    /// Why `uid` may not start one more watch while `tenants` are served; nil: it may.
    func refusal(ofWatchBy uid: uid_t, among tenants: some Collection<Tenant>) -> String? {
        guard tenants.count(where: { $0.uid == uid && $0.watching }) >= Self.watchesPerUser else { return nil }
        return "uid \(uid) already watches \(mountpoint) \(Self.watchesPerUser) times; end one of those protfsctl watch first"
    }
}
