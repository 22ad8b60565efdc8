import Glibc

/// Who the daemon keeps room for whatever other users hold: root and the vault's owner (the
/// user who mounted it). Every per-uid bound asks here, so that the owner can later be named
/// otherwise in one place.
public struct MountPrivilege: Sendable {
    public let owner: uid_t

    public init(owner: uid_t) {
        self.owner = owner
    }

    public func isPrivileged(_ uid: uid_t) -> Bool { uid == 0 || uid == owner }
}
