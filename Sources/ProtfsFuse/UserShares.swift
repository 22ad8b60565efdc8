import ProtfsDomain
import Glibc

/// The bounds on one resource the daemon holds for requests (open handles, nodes): each
/// uid but root and the vault's owner holds at most `perUser`, and those uids together at
/// most `otherUsers`, so that one user cannot take another's share and all of them cannot
/// take the room kept for root, the owner and the daemon itself.
public struct UserShares: Sendable, Equatable {
    public let perUser: Int
    public let otherUsers: Int

    public init(perUser: Int, otherUsers: Int) {
        self.perUser = perUser
        self.otherUsers = otherUsers
    }

    /// No bound (tests of other things).
    public static let unbounded = UserShares(perUser: .max, otherUsers: .max)
}

/// What each bounded uid holds of one resource, against its `UserShares`. Root and the
/// vault's owner are not counted: they are never refused.
struct ShareLedger: Sendable {
    let shares: UserShares
    let privilege: MountPrivilege
    private(set) var held: [uid_t: Int] = [:]
    private(set) var othersHeld = 0

    init(_ shares: UserShares, privilege: MountPrivilege) {
        self.shares = shares
        self.privilege = privilege
    }

    func holding(_ uid: uid_t) -> Int { held[uid] ?? 0 }

    /// Whether `uid` may take one more.
    func admits(_ uid: uid_t) -> Bool {
        privilege.isPrivileged(uid) || (holding(uid) < shares.perUser && othersHeld < shares.otherUsers)
    }

    /// Counts one more for `uid` if it is admitted; false (nothing counted) if it is not.
    mutating func take(for uid: uid_t) -> Bool {
        guard admits(uid) else { return false }
        add(for: uid)
        return true
    }

    /// Counts one more for `uid` unconditionally (admitted earlier, or a privileged uid).
    mutating func add(for uid: uid_t) {
        guard !privilege.isPrivileged(uid) else { return }
        held[uid, default: 0] += 1
        othersHeld += 1
    }

    mutating func giveBack(for uid: uid_t) {
        guard !privilege.isPrivileged(uid), let count = held[uid] else { return }
        held[uid] = count > 1 ? count - 1 : nil
        othersHeld -= 1
    }
}
