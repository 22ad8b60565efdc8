/// Who may lock, unlock and change the passcode, and for whom the daemon keeps room whatever
/// other users hold (descriptors, control connections, items): root and the vault's owner
/// (`-o owner=`, by default the user who mounted). The one place that decides it.
public struct MountPrivilege: Sendable, Equatable {
    public let owner: UInt32

    public init(owner: UInt32) {
        self.owner = owner
    }

    public func isPrivileged(_ uid: UInt32) -> Bool { uid == 0 || uid == owner }
}
