import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// `protfs backup` (docs/BACKUP.md), of an unmounted vault or, in its daemon, of a mounted one
/// under the daemon's `SnapshotGate`: walks the backing directory depth-first and streams
/// every object into the archive as it is, except what is bound to the device: the keybag
/// (replaced by the backup keybag), file headers (re-MACed under a transport key the backup
/// keybag carries) and `...ThisDeviceOnly` item records (left out).
public final class VaultBackup {
    /// How much of a file is read at once: the walk holds no more, whatever the vault's size.
    static let pieceByteCount = 1 << 20

    private let vault: Vault
    private let writer: BackupStreamWriter
    private let snapshots: SnapshotGate
    private let transport: ClassKeyring
    /// One piece of a file at a time, for the whole walk (a buffer per file cost a tree's
    /// backup more than its disk reads: a megabyte zeroed for each small file).
    private var piece = [UInt8](repeating: 0, count: pieceByteCount)
    private var hardLinks: [BackingIdentity: String] = [:]
    private var entryCount: UInt64 = 0
    /// File bytes read so far (data extents, headers included).
    private var byteCount: UInt64 = 0
    private let progress: Progress
    /// Items left out: `...ThisDeviceOnly` ones, and other owners' (`itemOwner`).
    public private(set) var itemsLeftOut = BackupItemsLeftOut()
    /// The only owner whose items the archive carries; nil: every owner's.
    private let itemOwner: UInt32?

    private enum Area { case vault, items, other }

    /// Called after every object with the objects and bytes so far (progress on a terminal);
    /// throws to stop the walk (the client of a backup through the daemon went away).
    public typealias Progress = (_ objects: UInt64, _ bytes: UInt64) throws(BackupError) -> Void

    /// Writes a whole archive into `file` (empty, open for writing; `name` for messages) and
    /// syncs it. On a mounted vault `snapshots` is the daemon's: the walk holds its namespace,
    /// and each object's stripe while it copies the object (`SnapshotGate`). `itemOwner`: the
    /// only owner whose items go in (`itemOwner(asking:)`), nil for every owner's.
    public static func stream(vault: Vault, classKeys: PasscodeClassKeys, into file: FileDescriptor, named name: String,
                              passphrase: SecureBuffer, itemOwner: UInt32? = nil, snapshots: SnapshotGate,
                              progress: @escaping Progress) throws(BackupError) -> VaultBackup {
        let keys: VaultKeys
        do { keys = try vault.exportKeys(classKeys: classKeys) } catch { throw .damaged("\(error)") }
        let header = BackupArchiveHeader(kdf: keys.kdf, contentAEAD: keys.contentAEAD)
        let archiveKeys = try header.keys(passphrase: passphrase)
        let writer = try BackupStreamWriter(file: file, path: name, header: header, keys: archiveKeys)
        let transportKey = LockedKey.random()
        try writer.append(BackupKeybag.encode(keys, transport: transportKey, archiveID: header.archiveID, with: archiveKeys.keybag))
        let backup = VaultBackup(vault: vault, writer: writer, snapshots: snapshots, progress: progress, itemOwner: itemOwner,
                                 transport: ClassKeyring(vaultID: keys.vaultID, deviceKeys: DeviceKeys(deviceKey: transportKey),
                                                         classBPublicKey: keys.classBPublicKey, contentAEAD: keys.contentAEAD))
        try snapshots.walking { () throws(BackupError) in try backup.walk() }
        return backup
    }

    private init(vault: Vault, writer: BackupStreamWriter, snapshots: SnapshotGate, progress: @escaping Progress,
                 itemOwner: UInt32?, transport: ClassKeyring) {
        self.vault = vault
        self.itemOwner = itemOwner
        self.writer = writer
        self.snapshots = snapshots
        self.progress = progress
        self.transport = transport
    }

    private func walk() throws(BackupError) {
        let root = vault.backingRoot
        let readAhead = BackupReadAhead(root: root, pieceByteCount: Self.pieceByteCount)
        defer { readAhead.stop() }
        try appendDirectory(root, path: "", st: try stat(root, "", of: ""))
        try walk(root, path: "", area: .vault, readAhead: readAhead)
        try writer.appendEntry(.end, path: "")
        var count: [UInt8] = []
        count.appendLittleEndian(entryCount)
        try writer.append(count)
        try writer.finish()
    }

    private func walk(_ directory: FileDescriptor, path: String, area: Area, readAhead: BackupReadAhead) throws(BackupError) {
        let names: [String]
        do { names = try directory.entryNames().sorted() } catch { throw .system(operation: "list", path: display(path), errno: error) }
        for name in names {
            readAhead.passed()
            if name.hasPrefix(ReservedNames.temporaryPrefix) { continue }
            let child = path.isEmpty ? name : path + "/" + name
            if path.isEmpty && (name == Keybag.fileName || name == ReservedNames.lostAndFound) { continue }
            let st = try stat(directory, path, of: name)
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                let opened = try open(name, in: directory, path: child, [.readOnly, .directory, .nonBlocking])
                let fd = opened.borrowed
                try appendDirectory(fd, path: child, st: st)
                let inner: Area = path.isEmpty && name == ReservedNames.items ? .items
                    : path.isEmpty && name == ReservedNames.links ? .other : area
                try walk(fd, path: child, area: inner, readAhead: readAhead)
            case S_IFREG:
                if area == .items && leavesOut(name, in: directory) { continue }
                try appendFile(name, in: directory, path: child, st: st, hasHeader: area == .vault && ReservedNames.isVaultEntry(name))
            case S_IFLNK:
                let target: String
                do { target = try directory.readSymlink(name) } catch { throw .system(operation: "read", path: display(child), errno: error) }
                try writer.appendEntry(.symlink, path: child)
                try writer.append(BackupAttributes(st).encoded())
                try writer.appendBytes(Array(target.utf8), lengthBytes: 2)
                entryCount += 1
            case S_IFIFO, S_IFCHR, S_IFBLK, S_IFSOCK:
                try writer.appendEntry(.node, path: child)
                try writer.append(BackupAttributes(st).encoded())
                var device: [UInt8] = []
                device.appendLittleEndian(UInt64(st.st_rdev))
                try writer.append(device)
                entryCount += 1
            default:
                throw .unsupportedObject(path: display(child))
            }
        }
    }

    /// A directory's entry: attributes and xattrs, read together while no xattr changes.
    private func appendDirectory(_ fd: FileDescriptor, path: String, st: stat) throws(BackupError) {
        try snapshots.copying(identity(of: st)) { () throws(BackupError) in
            let current = try stat(fd, path, of: "")
            try writer.appendEntry(.directory, path: path)
            try writer.append(BackupAttributes(current).encoded())
            try writer.appendExtendedAttributes(try extendedAttributes(of: fd, path: path), of: display(path))
        }
        entryCount += 1
        try progress(entryCount, byteCount)
    }

    private func identity(of st: stat) -> BackingIdentity {
        BackingIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// A file's entry: attributes, xattrs, size, then its data extents (holes skipped, so a
    /// sparse file stays sparse) ended by an empty one. A second name of a hard-linked file
    /// is a link entry to the first.
    private func appendFile(_ name: String, in directory: FileDescriptor, path: String, st: stat,
                            hasHeader: Bool) throws(BackupError) {
        if st.st_nlink > 1 {
            let key = identity(of: st)
            if let first = hardLinks[key] {
                try writer.appendEntry(.hardLink, path: path)
                try writer.appendBytes(Array(first.utf8), lengthBytes: 2)
                entryCount += 1
                return
            }
            hardLinks[key] = path
        }
        // Without touching its access time, which the archive keeps as it was.
        let opened = try open(name, in: directory, path: path, [.readOnly, .nonBlocking, .noAccessTime])
        let fd = opened.borrowed
        // Whole: no write, truncation, re-class or xattr change of it in between.
        try snapshots.copying(identity(of: st)) { () throws(BackupError) in
            try appendContents(of: fd, path: path, hasHeader: hasHeader)
        }
        entryCount += 1
        try progress(entryCount, byteCount)
    }

    private func appendContents(of fd: FileDescriptor, path: String, hasHeader: Bool) throws(BackupError) {
        let current: stat
        do { current = try fd.status() } catch { throw .system(operation: "stat", path: display(path), errno: error) }
        guard current.st_mode & S_IFMT == S_IFREG else { throw .unsupportedObject(path: display(path)) }
        try writer.appendEntry(.file, path: path)
        try writer.append(BackupAttributes(current).encoded())
        try writer.appendExtendedAttributes(try extendedAttributes(of: fd, path: path), of: display(path))
        let size = Int64(current.st_size)
        var sizeBytes: [UInt8] = []
        sizeBytes.appendLittleEndian(UInt64(size))
        try writer.append(sizeBytes)
        var start: Int64 = 0
        if hasHeader {
            let bytes: [UInt8]
            let header: FileHeader
            do {
                bytes = try FileHeader.readBytes(from: fd)
                header = try FileHeader.decode(bytes, keyring: vault.keyring)
            } catch {
                throw .objectDamaged(path: display(path))
            }
            try appendExtent(offset: 0, header.moved(to: transport).encoded())
            start = Int64(FileHeader.byteCount)
        }
        try appendData(of: fd, from: start, size: size, path: path)
        try appendExtent(offset: 0, [])
    }

    private func appendData(of fd: FileDescriptor, from start: Int64, size: Int64, path: String) throws(BackupError) {
        var offset = start
        while offset < size {
            let end: Int64
            do throws(Errno) {
                guard let data = try fd.nextData(from: offset) else { return }  // only a hole is left
                offset = data
                end = min(try fd.nextHole(from: data), size)
            } catch {
                throw .system(operation: "seek in", path: display(path), errno: error)
            }
            while offset < end {
                let count = Int(min(Int64(Self.pieceByteCount), end - offset))
                let n: Int
                do throws(Errno) {
                    n = try piece.withUnsafeMutableBytes { b in
                        Result { () throws(Errno) in try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: b[0..<count]), at: offset) }
                    }.get()
                } catch {
                    throw .system(operation: "read", path: display(path), errno: error)
                }
                guard n > 0 else { throw .system(operation: "read (it shrank)", path: display(path), errno: .io) }
                try piece.withUnsafeBytes { b in
                    Result { () throws(BackupError) in try appendExtent(offset: offset, UnsafeRawBufferPointer(rebasing: b[0..<n])) }
                }.get()
                offset += Int64(n)
                TestDelays.pause(TestDelays.backupPiece)
            }
        }
    }

    /// `offset (8) || length (8) || bytes`; length 0 ends a file's data.
    private func appendExtent(offset: Int64, _ bytes: [UInt8]) throws(BackupError) {
        try bytes.withUnsafeBytes { b in Result { () throws(BackupError) in try appendExtent(offset: offset, b) } }.get()
    }

    private func appendExtent(offset: Int64, _ bytes: UnsafeRawBufferPointer) throws(BackupError) {
        var head: [UInt8] = []
        head.appendLittleEndian(UInt64(offset))
        head.appendLittleEndian(UInt64(bytes.count))
        try writer.append(head)
        try writer.append(bytes)
        byteCount += UInt64(bytes.count)
    }

    /// A record the device alone could open: left out. A damaged one is kept as it is (fsck's
    /// business, on either side).
    /// The owner whose items alone a backup asked for by `uid` carries: root's carries every
    /// owner's; anyone else's (the vault's owner) only their own, so that a restore of it, where
    /// they are root, shows them no other user's items (docs/THREAT-MODEL.md).
    public static func itemOwner(asking uid: uid_t) -> UInt32? { uid == 0 ? nil : uid }

    /// Whether the item record `name` stays out of the archive, counted: a `...ThisDeviceOnly`
    /// item, or with `itemOwner` another owner's (a record that does not authenticate too: its
    /// owner is unknown).
    private func leavesOut(_ name: String, in directory: FileDescriptor) -> Bool {
        guard ItemIdentity.isRecordName(name) else { return false }
        let read = try? ItemRecord.read(name, in: directory, vaultID: vault.vaultID, keys: vault.filesystemKeys)
        if let itemOwner, read?.1.owner != itemOwner {
            itemsLeftOut.otherUsers += 1
            return true
        }
        guard let (_, metadata) = read, metadata.attributes.accessibility.isThisDeviceOnly else { return false }
        itemsLeftOut.deviceBound += 1
        return true
    }

    private func extendedAttributes(of fd: FileDescriptor, path: String) throws(BackupError) -> [(String, [UInt8])] {
        do throws(Errno) {
            return try fd.extendedAttributeNames().filter { $0.hasPrefix("user.") }.sorted().map { name throws(Errno) in
                (name, try fd.extendedAttribute(name))
            }
        } catch {
            throw .system(operation: "read the extended attributes of", path: display(path), errno: error)
        }
    }

    private func stat(_ directory: FileDescriptor, _ path: String, of name: String) throws(BackupError) -> stat {
        do { return name.isEmpty ? try directory.status() : try directory.status(of: name) } catch {
            throw .system(operation: "stat", path: display(path.isEmpty ? name : path + "/" + name), errno: error)
        }
    }

    private func open(_ name: String, in directory: FileDescriptor, path: String,
                      _ flags: FileDescriptor.OpenFlags) throws(BackupError) -> OwnedDescriptor {
        do { return try OwnedDescriptor.open(name, in: directory, flags) } catch {
            throw .system(operation: "open", path: display(path), errno: error)
        }
    }

    private func display(_ path: String) -> String { vault.backingPath + "/" + path }
}
