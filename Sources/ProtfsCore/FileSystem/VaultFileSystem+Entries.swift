import Glibc
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// Names: lookup, creation and removal of directories, nodes, symlinks and links, renames
/// and listings. None of these needs a content key, so none is refused by the lock.
extension VaultFileSystem {
    /// What `name` is stored as in `parent` (short, or long with a sidecar).
    func backingName(_ name: [UInt8], in parent: BackingNode) throws(Errno) -> BackingEntryName {
        try BackingEntryName.make(for: name, in: directoryMetadata(of: parent).directoryID, keys: keys)
    }

    /// Where `name` in `parent` is, which a symlink's target is sealed to.
    func symlinkLocation(_ name: [UInt8], in parent: BackingNode) throws(Errno) -> SymlinkLocation {
        SymlinkLocation(vaultID: keyring.vaultID, directoryID: try directoryMetadata(of: parent).directoryID, name: name)
    }

    public func lookup(_ name: [UInt8], in parent: BackingNode) throws(Errno) -> BackingNode {
        try lookupWithAttributes(name, in: parent).node
    }

    /// `lookup(_:in:)`, with the attributes the mount shows for the entry, made from the
    /// status the open took: a `LOOKUP` costs one `fstat`, not a second one for its reply.
    public func lookupWithAttributes(_ name: [UInt8], in parent: BackingNode) throws(Errno) -> (node: BackingNode, attributes: stat) {
        try openFound(backingName(name, in: parent).entry, named: name, in: parent)
    }

    /// Opens the entry stored as `stored` and named `name` in `parent`, found by a lookup or
    /// a listing: where it was found is remembered (a symlink's location, a file's
    /// directory), and its attributes are made from the status the open took.
    private func openFound(_ stored: String, named name: [UInt8], in parent: BackingNode) throws(Errno) -> (node: BackingNode, attributes: stat) {
        let (node, status) = try BackingNode.openWithStatus(stored, in: parent.descriptor)
        if node.isSymlink { node.symlinkLocation = try symlinkLocation(name, in: parent) }
        node.directory = parent
        return (node, try attributes(of: node, status: status))
    }

    /// Runs `create` for a new entry (a long name's sidecar is written first, and removed
    /// again if the creation fails).
    func creatingEntry<R>(_ name: [UInt8], in parent: BackingNode,
                          _ create: (String) throws(Errno) -> R) throws(Errno) -> R {
        try backingName(name, in: parent).create(in: parent.descriptor, create)
    }

    public func makeDirectory(_ name: [UInt8], in parent: BackingNode, mode: mode_t, caller: Caller) throws(Errno) -> BackingNode {
        return try snapshots.changingNamespace { () throws(Errno) -> BackingNode in
            let inherited = try directoryMetadata(of: parent).protectionClass
            let finalMode = try inheritedDirectoryMode(mode & 0o7777, in: parent)
            return try creatingEntry(name, in: parent) { (stored) throws(Errno) -> BackingNode in
                // Private until its metadata is in place; the caller's mode is applied last.
                try parent.descriptor.makeDirectory(stored, mode: 0o700)
                do throws(Errno) {
                    let (node, status) = try BackingNode.openWithStatus(stored, in: parent.descriptor)
                    let metadata = DirectoryMetadata.new(protectionClass: inherited)
                    try metadata.create(in: node.descriptor, vaultID: keyring.vaultID, keys: keys)
                    try ClassHint.write(inherited, to: node.descriptor, objectID: metadata.directoryID, keys: keys)
                    node.cachedDirectoryMetadata = metadata
                    try assignOwnership(of: stored, in: parent, to: caller, current: status)
                    try node.descriptor.setMode(finalMode)
                    return node
                } catch {
                    _ = try? removeDaemonFiles(inDirectoryNamed: stored, in: parent)
                    try? parent.descriptor.removeDirectory(stored)
                    throw error
                }
            }
        }
    }

    /// Creates a FIFO, socket or device node (stored as a real node: the mount is `nodev`),
    /// or an empty regular file when `mknod` asks for one.
    public func makeNode(_ name: [UInt8], in parent: BackingNode, mode: mode_t, device: dev_t, caller: Caller) throws(Errno) -> BackingNode {
        if mode & S_IFMT == S_IFREG || mode & S_IFMT == 0 {
            return try createClosedFile(name, in: parent, mode: mode & 0o7777, caller: caller)
        }
        return try snapshots.changingNamespace { () throws(Errno) -> BackingNode in
            try creatingEntry(name, in: parent) { (stored) throws(Errno) -> BackingNode in
                try parent.descriptor.makeNode(stored, mode: mode, device: device)
                let (node, status) = try BackingNode.openWithStatus(stored, in: parent.descriptor)
                try assignOwnership(of: stored, in: parent, to: caller, current: status)
                return node
            }
        }
    }

    public func makeSymlink(_ name: [UInt8], in parent: BackingNode, target: [UInt8], caller: Caller) throws(Errno) -> BackingNode {
        return try snapshots.changingNamespace { () throws(Errno) -> BackingNode in
            let location = try symlinkLocation(name, in: parent)
            let backingTarget = try SymlinkTarget.store(target: target, at: location, keys: keys, root: vault.backingRoot)
            do throws(Errno) {
                return try creatingEntry(name, in: parent) { (stored) throws(Errno) -> BackingNode in
                    try parent.descriptor.makeSymlink(stored, target: backingTarget)
                    let (node, status) = try BackingNode.openWithStatus(stored, in: parent.descriptor)
                    try assignOwnership(of: stored, in: parent, to: caller, current: status)
                    node.symlinkLocation = location
                    return node
                }
            } catch {
                SymlinkTarget.removeBlob(backingTarget: backingTarget, root: vault.backingRoot)
                throw error
            }
        }
    }

    public func readLink(_ node: BackingNode) throws(Errno) -> [UInt8] {
        guard node.isSymlink else { throw .invalid }
        let backingTarget = try node.descriptor.readSymlink()
        guard !SymlinkTarget.isNewerFormat(backingTarget) else {
            reportDamage("symlink target of \(describe(node)) is in a format made by a newer protfs")
            throw .io
        }
        return try reportingDamage(of: node, "symlink target") { () throws(Errno) in
            try SymlinkTarget.load(backingTarget: backingTarget, at: node.symlinkLocation, keys: keys, root: vault.backingRoot)
        }
    }

    /// Hard links of files and nodes. Not of directories, nor of symlinks: a symlink's target
    /// is sealed to its one location, so a second name could not open it (`EPERM`, as on a
    /// filesystem without hard links).
    public func link(_ node: BackingNode, as name: [UInt8], in parent: BackingNode) throws(Errno) {
        try snapshots.changingNamespace { () throws(Errno) in
            guard !node.isDirectory, !node.isSymlink else { throw .notPermitted }
            try requireVaultFile(node)
            try creatingEntry(name, in: parent) { (stored) throws(Errno) in
                try node.descriptor.link(to: parent.descriptor, stored)
            }
        }
    }

    public func unlink(_ name: [UInt8], in parent: BackingNode) throws(Errno) {
        try snapshots.changingNamespace { () throws(Errno) in
            let entry = try backingName(name, in: parent)
            let status = try parent.descriptor.status(of: entry.entry)
            guard status.fileType != S_IFDIR else { throw .isDirectory }
            // A symlink's last link takes its target's blob along: held open, so the target read
            // after the unlink is that of the object unlinked. Anything else needs one stat only.
            let lastLinkOfSymlink = status.fileType == S_IFLNK && status.st_nlink == 1
                ? try BackingNode.open(entry.entry, in: parent.descriptor) : nil
            try entry.remove(in: parent.descriptor) { (stored) throws(Errno) in try parent.descriptor.removeFile(stored) }
            if let symlink = lastLinkOfSymlink, symlink.isSymlink {
                removeBlob(of: symlink, at: try? symlinkLocation(name, in: parent))
            }
        }
    }

    /// Removes the out-of-line target of a symlink whose last link is gone, if it opened
    /// there: a target copied from another symlink in the backing directory names that one's
    /// blob, which must not go with the copy.
    private func removeBlob(of symlink: BackingNode, at location: SymlinkLocation?) {
        guard let backingTarget = try? symlink.descriptor.readSymlink(), let location,
              var target = try? SymlinkTarget.load(backingTarget: backingTarget, at: location, keys: keys,
                                                   root: vault.backingRoot) else { return }
        secureZero(&target)
        SymlinkTarget.removeBlob(backingTarget: backingTarget, root: vault.backingRoot)
    }

    /// Removes an empty directory. Returns its record (`protfs.dir`), unlinked but still
    /// open: ext4 frees an unlinked file at its last close, truncating its block (90 us of an
    /// `rmdir`'s 170 us in the daemon), which the caller can leave for after its reply.
    @discardableResult
    public func removeDirectory(_ name: [UInt8], in parent: BackingNode) throws(Errno) -> BackingNode? {
        var record: BackingNode?
        try snapshots.changingNamespace { () throws(Errno) in
            try backingName(name, in: parent).remove(in: parent.descriptor) { (stored) throws(Errno) in
                record = try removeEmptyDirectory(stored, in: parent)
            }
        }
        return record
    }

    /// Removes a backing directory that holds nothing but the daemon's own files. Its
    /// metadata goes first (rmdir needs an empty directory) and comes back if rmdir fails.
    /// Returns the removed record, still open (see `removeDirectory`).
    @discardableResult
    func removeEmptyDirectory(_ stored: String, in parent: BackingNode) throws(Errno) -> BackingNode? {
        let node = try BackingNode.open(stored, in: parent.descriptor)
        guard node.isDirectory else { throw .notDirectory }
        let metadata = try directoryMetadata(of: node)
        let record = try removeDaemonFiles(inDirectoryNamed: stored, in: parent)
        do {
            try parent.descriptor.removeDirectory(stored)
        } catch {
            try? metadata.create(in: node.descriptor, vaultID: keyring.vaultID, keys: keys)
            throw error
        }
        return record
    }

    /// Deletes `protfs.dir` and stray temporaries of a directory, after checking that it
    /// holds no user entry (`ENOTEMPTY` otherwise). Returns `protfs.dir` held open (`O_PATH`).
    func removeDaemonFiles(inDirectoryNamed stored: String, in parent: BackingNode) throws(Errno) -> BackingNode? {
        let object = try OwnedDescriptor.open(stored, in: parent.descriptor, [.path, .directory])
        let dir = object.borrowed
        let names = try dir.entryNames()
        let daemonOwned: Set<BackingEntryName.Kind> = [.reserved, .sidecar]
        guard names.allSatisfy({ daemonOwned.contains(BackingEntryName.classify($0)) }) else { throw .notEmpty }
        let record = try? BackingNode.open(DirectoryMetadata.fileName, in: dir)
        for name in names { try? dir.removeFile(name) }
        return record
    }

    /// A symlink a rename moved, for the caller to update the kernel's node of
    /// `formerIdentity`: `node` (its target sealed to where it now is) is that same backing
    /// object, or, for a symlink of an older format, the format-3 object that replaced it.
    public struct MovedSymlink: Sendable {
        public let formerIdentity: BackingIdentity
        public let node: BackingNode
    }

    /// A symlink on either side of a rename: its format-3 backing target and both places.
    private struct MovingSymlink {
        let node: BackingNode
        let backingTarget: String
        let source: SymlinkLocation
        let destination: SymlinkLocation
    }

    /// Renames an entry, or exchanges two. A symlink's blob is sealed for both its places
    /// before the backing rename and for its new place only after it, so the backing symlink
    /// itself is renamed and keeps its inode (and a crash leaves it readable wherever it is).
    /// `moved` hears of each symlink moved, before its former place stops opening it.
    public func rename(_ name: [UInt8], in parent: BackingNode, to newName: [UInt8], in newParent: BackingNode,
                       flags: FileDescriptor.RenameFlags, moved: (MovedSymlink) -> Void = { _ in }) throws(Errno) {
        try snapshots.changingNamespace { () throws(Errno) in
            // The kernel never sends a rename onto the same entry; done here it would remove it.
            guard parent.identity != newParent.identity || name != newName else { return }
            let source = try backingName(name, in: parent)
            let destination = try backingName(newName, in: newParent)
            var symlinks: [MovingSymlink] = []
            if try parent.descriptor.status(of: source.entry).fileType == S_IFLNK {
                symlinks.append(try movingSymlink(name, source, in: parent, to: newName, in: newParent, moved: moved))
            }
            if flags.contains(.exchange), (try? newParent.descriptor.status(of: destination.entry))?.fileType == S_IFLNK {
                symlinks.append(try movingSymlink(newName, destination, in: newParent, to: name, in: parent, moved: moved))
            }
            let replaced = flags.contains(.exchange) ? nil : try? BackingNode.open(destination.entry, in: newParent.descriptor)
            if let replaced, replaced.isDirectory {
                let moving = try BackingNode.open(source.entry, in: parent.descriptor)
                guard moving.isDirectory else { throw .isDirectory }
                try removeEmptyDirectory(destination.entry, in: newParent)
            }
            do throws(Errno) {
                for symlink in symlinks {
                    try SymlinkTarget.admit(symlink.backingTarget, from: symlink.source, to: symlink.destination,
                                            keys: keys, root: vault.backingRoot)
                }
                try BackingEntryName.rename(source, in: parent.descriptor, to: destination, in: newParent.descriptor, flags: flags)
            } catch {
                for symlink in symlinks {
                    try? SymlinkTarget.settle(symlink.backingTarget, at: symlink.source, keys: keys, root: vault.backingRoot)
                }
                throw error
            }
            for symlink in symlinks {
                symlink.node.symlinkLocation = symlink.destination
                moved(MovedSymlink(formerIdentity: symlink.node.identity, node: symlink.node))
                // Left sealed for both places if this fails: only this symlink could open at its
                // former place, which fsck settles.
                try? SymlinkTarget.settle(symlink.backingTarget, at: symlink.destination, keys: keys, root: vault.backingRoot)
            }
            if let replaced, replaced.isSymlink, (try? replaced.status().st_nlink) == 0 {
                removeBlob(of: replaced, at: try? symlinkLocation(newName, in: newParent))
            }
        }
    }

    /// The symlink `entry` (`name` in `parent`) about to move to `newName` in `newParent`; one
    /// of an older format is first rewritten in format 3 where it is (a new backing object,
    /// which `moved` hears of at once: the former one's out-of-line target may be gone).
    private func movingSymlink(_ name: [UInt8], _ entry: BackingEntryName, in parent: BackingNode,
                               to newName: [UInt8], in newParent: BackingNode,
                               moved: (MovedSymlink) -> Void) throws(Errno) -> MovingSymlink {
        let former = try BackingNode.open(entry.entry, in: parent.descriptor)
        guard former.isSymlink else { throw .io }  // replaced in the backing directory meanwhile
        let source = try symlinkLocation(name, in: parent)
        let destination = try symlinkLocation(newName, in: newParent)
        var node = former
        var backingTarget = try former.descriptor.readSymlink()
        if SymlinkTarget.format(of: backingTarget) != .movable {
            var target = try reportingDamage(of: former, "symlink target") { () throws(Errno) in
                try SymlinkTarget.load(backingTarget: backingTarget, at: source, keys: keys, root: vault.backingRoot)
            }
            defer { secureZero(&target) }
            backingTarget = try SymlinkTarget.upgrade(entry.entry, in: parent.descriptor, status: former.status(),
                                                      target: target, at: source, formerTarget: backingTarget,
                                                      keys: keys, root: vault.backingRoot)
            node = try BackingNode.open(entry.entry, in: parent.descriptor)
            node.symlinkLocation = source
            moved(MovedSymlink(formerIdentity: former.identity, node: node))
        }
        return MovingSymlink(node: node, backingTarget: backingTarget,
                             source: source, destination: destination)
    }

    /// One entry of a listing, as `readdir` shows it.
    public struct ListedEntry: Sendable {
        public let name: [UInt8]
        public let inode: UInt64
        public let type: UInt8
        /// The backing entry, so `readdirplus` can open it without encrypting the name again;
        /// nil for `.` and `..`.
        public let backingName: String?
    }

    /// The node of a listed entry (for `readdirplus`) and its attributes, as a lookup finds
    /// them (one `fstat` per entry).
    public func nodeWithAttributes(of entry: ListedEntry, in directory: BackingNode) throws(Errno) -> (node: BackingNode, attributes: stat) {
        guard let backingName = entry.backingName else { throw .invalid }
        return try openFound(backingName, named: entry.name, in: directory)
    }

    /// Opens a directory for listing (its entries are read as they are asked for).
    public func openListing(of directory: BackingNode) throws(Errno) -> DirectoryReader {
        try DirectoryReader(directory: directory, directoryID: directoryMetadata(of: directory).directoryID, keys: keys,
                            movingAccessTime: accessTimes.directories)
    }
}

extension VaultFileSystem {
    /// The backing object of a mount path given as plaintext components from the root,
    /// relative to the backing directory (`protfsctl backing-path`).
    public func backingRelativePath(of components: [[UInt8]]) throws(Errno) -> String {
        var node = root
        var stored: [String] = []
        for component in components {
            let entry = try backingName(component, in: node)
            node = try BackingNode.open(entry.entry, in: node.descriptor)
            stored.append(entry.entry)
        }
        return stored.isEmpty ? "." : stored.joined(separator: "/")
    }
}
