import ProtfsDomain
import ProtfsSystem

/// What a request asks of a file's class key (docs/CLASSES.md). Everything that needs no
/// content key (lookup, getattr, readdir, mkdir, unlink, rename, link, symlink, chmod,
/// chown, utimens, xattrs, a directory's class, file locks, flush/fsync/release) is
/// `metadata` and always allowed.
public enum ContentAccess: CaseIterable, Sendable, Hashable {
    /// Creating a regular file: its new key must be wrapped under the class key.
    case create
    /// Opening an existing file (any mode), or truncating it by path: the key must be unwrapped.
    case openExisting
    /// Reading, writing, truncating or allocating through a handle opened earlier.
    case useOpenHandle
    /// No content key involved.
    case metadata
}

public enum AccessDecision: Sendable, Hashable {
    case allow
    case deny

    public var isAllowed: Bool { self == .allow }
}

/// docs/CLASSES.md's class-by-state table, as data, in one place. The FUSE adapter asks it on
/// every request, whatever the caller's uid; the answer for `deny` is `EACCES`.
public enum AccessPolicy {
    private typealias Row = [LockState: [ContentAccess: AccessDecision]]

    private static let allowAll: [ContentAccess: AccessDecision] =
        [.create: .allow, .openExisting: .allow, .useOpenHandle: .allow, .metadata: .allow]
    private static let denyContent: [ContentAccess: AccessDecision] =
        [.create: .deny, .openExisting: .deny, .useOpenHandle: .deny, .metadata: .allow]
    /// `completeUnlessOpen` without its private key: the public key still wraps new files,
    /// and handles keep the per-file key they unwrapped while it was available.
    private static let createAndKeepHandles: [ContentAccess: AccessDecision] =
        [.create: .allow, .openExisting: .deny, .useOpenHandle: .allow, .metadata: .allow]

    private static let table: [ProtectionClass: Row] = [
        .none: [.beforeFirstUnlock: allowAll, .unlocked: allowAll, .locking: allowAll, .locked: allowAll],
        .completeUntilFirstUserAuthentication:
            [.beforeFirstUnlock: denyContent, .unlocked: allowAll, .locking: allowAll, .locked: allowAll],
        .completeUnlessOpen:
            [.beforeFirstUnlock: createAndKeepHandles, .unlocked: allowAll, .locking: allowAll, .locked: createAndKeepHandles],
        .complete: [.beforeFirstUnlock: denyContent, .unlocked: allowAll, .locking: allowAll, .locked: denyContent],
    ]

    public static func decision(for access: ContentAccess, of protectionClass: ProtectionClass, in state: LockState) -> AccessDecision {
        table[protectionClass]![state]![access]!
    }

    /// Throws `EACCES` when the table says no.
    public static func check(_ access: ContentAccess, of protectionClass: ProtectionClass, in state: LockState) throws(Errno) {
        guard decision(for: access, of: protectionClass, in: state).isAllowed else { throw .permissionDenied }
    }

    /// Re-classing a file unwraps its key under the old class and wraps it under the new one:
    /// `none` -> `completeUnlessOpen` works while locked; `none` -> `complete` does not.
    public static func reclassDecision(from old: ProtectionClass, to new: ProtectionClass, in state: LockState) -> AccessDecision {
        decision(for: .openExisting, of: old, in: state).isAllowed && decision(for: .create, of: new, in: state).isAllowed
            ? .allow : .deny
    }
}
