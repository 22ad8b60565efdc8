import Glibc
import ProtfsSystem

/// Changes to modes, owners, times and sizes (`setattr`).
extension VaultFileSystem {
    public struct AttributeChanges: Sendable {
        public var mode: mode_t?
        public var uid: uid_t?
        public var gid: gid_t?
        public var size: Int64?
        public var accessTime: FileTime?
        public var modificationTime: FileTime?

        public init() {}

        /// Changes a write's, truncate's, chown's or chmod's privilege drop goes with: all
        /// but time stamps alone. An empty change is the kernel's own drop of set-ID bits
        /// with nothing left for it to send.
        var dropsPrivileges: Bool { mode != nil || uid != nil || gid != nil || size != nil || accessTime == nil && modificationTime == nil }
    }

    /// Applies `changes` for `caller`; a size change goes through `handle` when the kernel
    /// sent one (`ftruncate`), else it opens the file like `truncate(2)` does.
    public func setAttributes(_ changes: AttributeChanges, of node: BackingNode, handle: OpenFileHandle?,
                              caller: Caller) throws(Errno) -> stat {
        try requireVaultFile(node)
        // The group the set-group-ID rule asks about is the one before a chown.
        let groupBefore = changes.gid == nil ? nil : try node.status().st_gid
        if let size = changes.size {
            guard node.isRegularFile else { throw node.isDirectory ? .isDirectory : .invalid }
            guard size >= 0 else { throw .invalid }
            if let handle { try truncate(handle, to: size) } else { try truncate(node, to: size) }
        }
        if node === root {
            try changeRootAttributes(changes)
        } else {
            if changes.uid != nil || changes.gid != nil {
                try node.descriptor.changeOwner(uid: changes.uid ?? uid_t.max, gid: changes.gid ?? gid_t.max)
            }
            if let mode = changes.mode, !node.isSymlink {
                try node.descriptor.setMode(mode & 0o7777)
            }
        }
        if changes.accessTime != nil || changes.modificationTime != nil {
            try node.descriptor.setTimes(access: changes.accessTime ?? .omit, modification: changes.modificationTime ?? .omit)
        }
        let result = try attributes(of: node)
        guard changes.dropsPrivileges, node.isRegularFile, result.st_mode & S_ISGID != 0,
              !CallerCredentials.isInGroupOrCapable(caller, group: groupBefore ?? result.st_gid) else { return result }
        // Linux drops a regular file's set-group-ID bit when a caller without CAP_FSETID who
        // is not in the file's group writes, truncates, chowns or chmods it (ext4 does); the
        // FUSE kernel drops it itself only from a group-executable file (its older rule), and
        // sends what remains of the change, or an empty one, for the daemon to finish.
        try node.descriptor.setMode(result.st_mode & 0o7777 & ~S_ISGID)
        return try attributes(of: node)
    }

    /// What a write by a caller without `CAP_FSETID` leaves of `mode` (the kernel's rule):
    /// no set-user-ID bit, and no set-group-ID bit when group execution is on or the caller
    /// is not in the file's group (else the bit means mandatory locking and stays).
    public static func modeAfterUnprivilegedWrite(_ mode: mode_t, callerInGroup: Bool) -> mode_t {
        var kept = mode & ~mode_t(S_ISUID)
        if mode & S_IXGRP != 0 || !callerInGroup { kept &= ~mode_t(S_ISGID) }
        return kept
    }

    /// Drops the set-ID bits of a file before a write by `caller` the kernel flagged with
    /// `FUSE_WRITE_KILL_SUIDGID` (the caller has no CAP_FSETID): on a direct-I/O descriptor
    /// the kernel does not drop them itself. `true` when the mode changed, so the kernel's
    /// cached attributes are stale.
    public func dropSetIDBits(of node: BackingNode, writtenBy caller: Caller) throws(Errno) -> Bool {
        try requireVaultFile(node)
        let status = try node.status()
        let mode = status.st_mode & 0o7777
        guard mode & (S_ISUID | S_ISGID) != 0 else { return false }
        let inGroup = mode & S_ISGID == 0 || CallerCredentials.isInGroupOrCapable(caller, group: status.st_gid)
        let kept = Self.modeAfterUnprivilegedWrite(mode, callerInGroup: inGroup)
        guard kept != mode else { return false }
        try node.descriptor.setMode(kept)
        return true
    }

    /// A regular file must carry a header of this vault before anything changes its inode: a
    /// hard link planted in the backing directory to a file outside it shares that file's
    /// inode, and a chmod, chown or touch through the mount would change the outside file.
    /// `EIO`, as for its contents; the header is cached, so this costs nothing afterwards.
    func requireVaultFile(_ node: BackingNode) throws(Errno) {
        if node.isRegularFile { _ = try header(of: node) }
    }

    /// The root's mode and owner are the mount's own (the backing root stays 0700).
    private func changeRootAttributes(_ changes: AttributeChanges) throws(Errno) {
        guard changes.mode != nil || changes.uid != nil || changes.gid != nil else { return }
        var shown = try shownRootAttributes()
        if let mode = changes.mode { shown.mode = mode & 0o7777 }
        if let uid = changes.uid { shown.uid = uid }
        if let gid = changes.gid { shown.gid = gid }
        try shown.write(to: root.descriptor)
        rootAttributes.withLock { $0 = shown }
    }
}
