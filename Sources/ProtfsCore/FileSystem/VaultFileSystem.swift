import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// The vault as a filesystem: every operation the mount offers, on backing nodes, with the
/// names, contents, symlinks and xattrs encrypted and the class policy enforced. Pure of
/// FUSE: the adapter only translates requests into these calls and replies.
public final class VaultFileSystem: Sendable {
    public let vault: Vault
    public let controller: LockController
    public let root: BackingNode
    let keys: FilesystemKeys
    let keyring: ClassKeyring
    /// A root daemon gives new objects to the caller; any other daemon owns what it creates.
    let runningAsRoot: Bool
    /// Files with open handles, so the lock can take their per-file keys away.
    let openFiles = Mutex<[ObjectIdentifier: BackingNode]>([:])
    /// The root's shown mode and owner, read once (only `setattr` on the root changes them).
    let rootAttributes = Mutex<RootAttributes?>(nil)

    /// What namespace and object changes hold while a backup of the mounted vault runs.
    public let snapshots: SnapshotGate
    /// One `user.*` attribute change at a time per object.
    let attributeUpdates = AttributeUpdateLocks()

    /// Reads subdirectories' metadata ahead of the walkers that list them.
    let prefetcher = DirectoryPrefetcher()
    /// Reads the next files of a directory ahead of a reader going through it.
    let siblingReadahead = SiblingReadahead()

    /// Where damage goes (the daemon's log, which says each thing once).
    let reportDamage: @Sendable (String) -> Void
    /// Which reads move access times (the mount's `relatime`, `noatime`, `nodiratime`).
    public let accessTimes: AccessTimeUpdates

    public init(vault: Vault, controller: LockController, accessTimes: AccessTimeUpdates = .relative,
                snapshots: SnapshotGate = SnapshotGate(),
                reportDamage: @escaping @Sendable (String) -> Void = { _ in }) throws(Errno) {
        self.vault = vault
        self.snapshots = snapshots
        self.controller = controller
        self.accessTimes = accessTimes
        self.reportDamage = reportDamage
        keys = vault.filesystemKeys
        keyring = vault.keyring
        root = try BackingNode.open(".", in: vault.backingRoot)
        root.cachedDirectoryMetadata = vault.rootMetadata
        runningAsRoot = geteuid() == 0
    }

    // MARK: metadata of nodes

    /// A directory's id and class (the MACed `protfs.dir`), cached on the node.
    func directoryMetadata(of node: BackingNode) throws(Errno) -> DirectoryMetadata {
        guard node.isDirectory else { throw .notDirectory }
        if let cached = node.cachedDirectoryMetadata { return cached }
        let metadata = try reportingDamage(of: node, "directory metadata") { () throws(Errno) in
            try DirectoryMetadata.read(in: node.descriptor, vaultID: keyring.vaultID, keys: keys)
        }
        try checkHint(of: node, objectID: metadata.directoryID, truth: metadata.protectionClass)
        return node.cacheReadDirectoryMetadata(metadata)
    }

    /// Reads the metadata of the directories one listing showed, in the background (the
    /// kernel just learned of them, and walkers open what they list), and the records of
    /// their own subdirectories into memory (`warmSubdirectoryRecords`). Anything amiss
    /// (damage, a missing or disagreeing class hint, the directory gone) is left for the
    /// access that follows to find, repair and report: nothing is written or logged from here.
    public func prefetchDirectoryMetadata(of nodes: [BackingNode]) {
        let unread = nodes.filter { $0.isDirectory && $0.cachedDirectoryMetadata == nil }
        prefetcher.prefetch(unread) { [self] node in
            guard node.cachedDirectoryMetadata == nil,
                  let metadata = try? DirectoryMetadata.read(in: node.descriptor, vaultID: keyring.vaultID, keys: keys),
                  let hint = try? ClassHint.read(from: node.descriptor, objectID: metadata.directoryID, keys: keys),
                  hint == metadata.protectionClass else { return }
            _ = node.cacheReadDirectoryMetadata(metadata)
            warmSubdirectoryRecords(of: node)
        }
    }

    /// Brings the `protfs.dir` of the first `limit` subdirectories of `directory` (among its
    /// first `scanned` entries) into the page cache, checked and dropped: nothing is cached
    /// on a node, the kernel has no node for them yet.
    ///
    /// A walker goes depth first: right after a listing it lists the listing's first
    /// subdirectory, whose record is then being read ahead but not yet read (a lookup in
    /// the subdirectory, the record's inode, its block: three cold reads one after
    /// another), so it waits for it, level after level. Read one level further ahead, with
    /// the parent's, the record is in memory by the time that subdirectory is listed.
    func warmSubdirectoryRecords(of directory: BackingNode, limit: Int = 32, scanned: Int = 1024) {
        guard let stream = try? DirectoryStream(directory.descriptor, movingAccessTime: false) else { return }
        var subdirectories: [String] = []
        var seen = 0
        stream.read(from: 0) { entry, _ in
            seen += 1
            if entry.type == UInt8(DT_DIR), entry.name != ".", entry.name != "..", ReservedNames.isVaultEntry(entry.name) {
                subdirectories.append(entry.name)
            }
            return subdirectories.count < limit && seen < scanned
        }
        for name in subdirectories {
            guard let subdirectory = try? OwnedDescriptor.open(name, in: directory.descriptor, [.path, .directory]) else { continue }
            _ = try? DirectoryMetadata.read(in: subdirectory.borrowed, vaultID: keyring.vaultID, keys: keys)
        }
    }

    /// A regular file's header (MAC checked, no key needed), cached on the node.
    func header(of node: BackingNode) throws(Errno) -> FileHeader {
        if let cached = node.cachedHeader { return cached }
        guard node.isRegularFile else { throw .io }
        return try openForIO(node, .readOnly).closeAfter { (fd) throws(Errno) in try verifiedHeader(of: node, from: fd) }
    }

    /// The backing object of `node` opened for the daemon's own I/O, which leaves its access
    /// time alone (O_NOATIME; refused for an object the daemon neither owns nor may
    /// override, which is then opened plainly): the time moves where the mount's rule says.
    func openForIO(_ node: BackingNode, _ flags: FileDescriptor.OpenFlags) throws(Errno) -> OwnedDescriptor {
        do {
            return try node.descriptor.reopen(flags.union(.noAccessTime))
        } catch .notPermitted {
            return try node.descriptor.reopen(flags)
        }
    }

    /// Reads a regular file's header from `descriptor` (open for reading), checks its class
    /// hint on the same descriptor, and caches it on the node.
    func verifiedHeader(of node: BackingNode, from descriptor: FileDescriptor) throws(Errno) -> FileHeader {
        let header = try reportingDamage(of: node, "file header") { () throws(Errno) in
            try FileHeader.read(from: descriptor, keyring: keyring)
        }
        try checkHint(of: node, on: descriptor, objectID: header.fileID, truth: header.protectionClass)
        node.cachedHeader = header
        return header
    }

    /// The class hint must agree with the MACed truth (header or `protfs.dir`): a missing
    /// hint is written silently; one that does not authenticate or disagrees is damage
    /// (`EIO` until `protfs fsck --repair`). Policy never rests on the hint alone. `object`
    /// is the node's own descriptor or one open for I/O on the same object (cheaper).
    func checkHint(of node: BackingNode, on object: FileDescriptor? = nil, objectID: ObjectID,
                   truth: ProtectionClass) throws(Errno) {
        let object = object ?? node.descriptor
        let hint = try reportingDamage(of: node, "class hint") { () throws(Errno) in
            try ClassHint.read(from: object, objectID: objectID, keys: keys)
        }
        guard let hint else {
            try? ClassHint.write(truth, to: object, objectID: objectID, keys: keys)
            return
        }
        guard hint == truth else {
            reportDamage("class hint disagrees with the class of \(describe(node))")
            throw .io
        }
    }

    /// Runs `body`; an `EIO` from it (damage: failed authentication, a malformed object) is
    /// logged with the backing path and inode of `node` (never a plaintext name), then passed on.
    func reportingDamage<R>(of node: BackingNode, _ what: String, _ body: () throws(Errno) -> R) throws(Errno) -> R {
        do {
            return try body()
        } catch {
            if error == .io { reportDamage("\(what) of \(describe(node)) is damaged") }
            throw error
        }
    }

    /// The backing object as the log names it: its backing path and inode.
    func describe(_ node: BackingNode) -> String {
        let path = (try? FileDescriptor.currentWorkingDirectory.readSymlink(node.descriptor.procPath)) ?? "?"
        return "\(path) (inode \(node.identity.inode))"
    }

    /// The class of a regular file or directory; nil for symlinks and nodes, which have none.
    public func protectionClass(of node: BackingNode) throws(Errno) -> ProtectionClass? {
        if node.isDirectory { return try directoryMetadata(of: node).protectionClass }
        if node.isRegularFile { return try header(of: node).protectionClass }
        return nil
    }

    /// The id that tweaks a node's xattr names and binds its hint and xattr values.
    func objectID(of node: BackingNode) throws(Errno) -> ObjectID? {
        if node.isDirectory { return try directoryMetadata(of: node).directoryID }
        if node.isRegularFile { return try header(of: node).fileID }
        return nil
    }

    // MARK: attributes

    /// `stat` of a node as the mount shows it: plaintext sizes for files and symlinks.
    public func attributes(of node: BackingNode) throws(Errno) -> stat {
        try attributes(of: node, status: node.status())
    }

    /// `attributes(of:)` from a status of the node's backing object the caller already has.
    func attributes(of node: BackingNode, status: stat) throws(Errno) -> stat {
        var st = status
        if node === root {
            let shown = try shownRootAttributes()
            st.st_mode = S_IFDIR | shown.mode
            st.st_uid = shown.uid
            st.st_gid = shown.gid
        } else if node.isRegularFile {
            st.st_size = off_t(ContentLayout.plaintextSize(backingSize: Int64(st.st_size)))
        } else if node.isSymlink {
            let target = try node.descriptor.readSymlink()
            st.st_size = off_t(SymlinkTarget.plaintextLength(backingTarget: target, root: vault.backingRoot) ?? 0)
        }
        return st
    }

    func shownRootAttributes() throws(Errno) -> RootAttributes {
        if let cached = rootAttributes.withLock({ $0 }) { return cached }
        let read = try RootAttributes.read(from: root.descriptor)
        rootAttributes.withLock { $0 = read }
        return read
    }

    public func statistics() throws(Errno) -> statvfs {
        var sv = statvfs()
        _ = try syscallRetrying { fstatvfs(vault.backingRoot.rawValue, &sv) }
        return sv
    }

    // MARK: ownership of new objects

    /// Gives a new object to the caller (root daemon only), with BSD group semantics for
    /// set-group-ID directories, as ext4 does. `current` is the object's status as created;
    /// true when its owner changed (and with it that status).
    @discardableResult
    func assignOwnership(of name: String, in parent: BackingNode, to caller: Caller, current: stat) throws(Errno) -> Bool {
        guard runningAsRoot else { return false }
        // Most objects are born right (root's own, or a set-group-ID directory's group, which
        // the backing filesystem gives them too): then neither the parent's stat nor a chown,
        // which rewrites the inode.
        if current.st_uid == caller.uid && current.st_gid == caller.gid { return false }
        let parentStatus = try attributes(of: parent)
        let gid = parentStatus.st_mode & S_ISGID != 0 ? parentStatus.st_gid : caller.gid
        guard current.st_uid != caller.uid || current.st_gid != gid else { return false }
        try parent.descriptor.changeOwner(name, uid: caller.uid, gid: gid)
        return true
    }

    /// New directories in a set-group-ID directory inherit the bit.
    func inheritedDirectoryMode(_ mode: mode_t, in parent: BackingNode) throws(Errno) -> mode_t {
        let parentStatus = try attributes(of: parent)
        return parentStatus.st_mode & S_ISGID != 0 ? mode | S_ISGID : mode
    }
}
