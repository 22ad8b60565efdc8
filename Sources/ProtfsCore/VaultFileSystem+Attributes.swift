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
    }

    /// Applies `changes`; a size change goes through `handle` when the kernel sent one
    /// (`ftruncate`), else it opens the file like `truncate(2)` does.
    public func setAttributes(_ changes: AttributeChanges, of node: BackingNode, handle: OpenFileHandle?) throws(Errno) -> stat {
        try requireVaultFile(node)
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
        return try attributes(of: node)
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
