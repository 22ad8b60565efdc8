import Glibc
import ProtfsFormat

/// What a restore makes of each entry of an archive (docs/BACKUP.md, "What a restore
/// trusts"). The archive's passphrase is its author's, so its author chose every entry: a
/// restore run as root must not make what only root may make because the archive says so.
/// Set-id bits are cleared; device nodes are left out; the daemon's folders and names take only
/// what the daemon keeps there, as fsck judges it (`ReservedFolderEntry`), its item records
/// authenticated for this vault; the backing root and the daemon's records belong to whoever
/// runs the restore, mode 0700 or 0600 as the daemon makes them. Each change is reported.
/// `backup --verify` runs the same screen, so it lists what a restore would change.
struct ArchiveScreen {
    /// Where an entry is, as its path tells.
    enum Place: Equatable {
        case root
        /// A vault entry, or a name protfs does not know (made as it is, as the mount hides it).
        case vault
        /// `protfs.dir` or a long name's sidecar: a file of the daemon's, in any directory.
        case daemonFile
        /// `protfs.items` or `protfs.links`, in the root.
        case folder
        /// A name directly in one of those folders.
        case inFolder(folder: String, name: String)
        /// Anywhere else in the `protfs.` namespace (the keybag, lost+found, temporaries), or
        /// under such a name: never what a backup writes.
        case foreign
    }

    /// What to do with a file entry.
    enum FileVerdict: Equatable {
        case make(BackupAttributes)
        /// Made only if its bytes are a record of `folder` (`accepts`).
        case record(BackupAttributes, folder: String, name: String)
        case leaveOut
    }

    /// Who runs the restore: the owner of the backing root and of the daemon's records.
    let restorer: (uid: UInt32, gid: UInt32)
    let vaultID: ObjectID
    let keys: FilesystemKeys
    private let report: (ArchiveFinding) -> Void
    private(set) var setIDBitsCleared: UInt64 = 0
    private(set) var entriesLeftOut: UInt64 = 0
    /// The backing root's owner in the archive: the daemon writes all its records as that user.
    private var archiveOwner: UInt32?

    init(restorer: (uid: UInt32, gid: UInt32) = (geteuid(), getegid()), vaultID: ObjectID, keys: FilesystemKeys,
         report: @escaping (ArchiveFinding) -> Void) {
        self.restorer = restorer
        self.vaultID = vaultID
        self.keys = keys
        self.report = report
    }

    private static let namespace = Array(ReservedNames.namespacePrefix.utf8)

    static func place(of path: String) -> Place {
        if path.isEmpty { return .root }
        // Nearly every entry is a vault entry with no reserved name in its path.
        guard path.utf8.firstRange(of: namespace) != nil else { return .vault }
        let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if ReservedFolderEntry.isFolder(components[0]) {
            switch components.count {
            case 1: return .folder
            case 2: return .inFolder(folder: components[0], name: components[1])
            default: return .foreign
            }
        }
        for component in components.dropLast() {
            switch BackingEntryName.classify(component) {
            case .reserved, .sidecar: return .foreign
            case .encoded, .longEntry, .foreign: continue
            }
        }
        let name = components[components.count - 1]
        switch BackingEntryName.classify(name) {
        case .sidecar: return .daemonFile
        case .reserved: return name == DirectoryMetadata.fileName ? .daemonFile : .foreign
        case .encoded, .longEntry, .foreign: return .vault
        }
    }

    mutating func directory(_ path: String, _ attributes: BackupAttributes) -> BackupAttributes? {
        switch Self.place(of: path) {
        case .root:
            archiveOwner = attributes.uid
            if attributes.uid != restorer.uid { report(ArchiveFinding(path: path, problem: .rootOwner(uid: attributes.uid))) }
            var kept = clearingSetID(attributes, path)
            (kept.uid, kept.gid) = restorer
            return kept
        case .vault: return clearingSetID(attributes, path)
        case .folder: return daemons(attributes, path, permissions: 0o700)
        case .daemonFile, .inFolder, .foreign:
            leaveOut(path, .notARecord)
            return nil
        }
    }

    mutating func file(_ path: String, _ attributes: BackupAttributes, size: UInt64) -> FileVerdict {
        switch Self.place(of: path) {
        case .vault: return .make(clearingSetID(attributes, path))
        case .daemonFile: return .make(daemons(attributes, path, permissions: 0o600))
        case let .inFolder(folder, name):
            guard ReservedFolderEntry.classify(name, in: folder, isRegularFile: true) == .record else {
                leaveOut(path, .notARecord)
                return .leaveOut
            }
            guard size <= UInt64(ReservedFolderEntry.maximumByteCount(in: folder)) else {
                leaveOut(path, .recordMalformed)
                return .leaveOut
            }
            return .record(daemons(attributes, path, permissions: 0o600), folder: folder, name: name)
        case .root, .folder, .foreign:
            leaveOut(path, .notARecord)
            return .leaveOut
        }
    }

    /// Whether the bytes of a `.record` verdict's file are a record the daemon reads.
    mutating func accepts(_ bytes: [UInt8], path: String, folder: String, name: String) -> Bool {
        guard ReservedFolderEntry.isWellFormed(bytes, named: name, in: folder, vaultID: vaultID, keys: keys) else {
            leaveOut(path, .recordMalformed)
            return false
        }
        return true
    }

    /// Symlinks have no mode of their own to screen; only vault entries may be one.
    mutating func symlink(_ path: String, _ attributes: BackupAttributes) -> BackupAttributes? {
        guard Self.place(of: path) == .vault else {
            leaveOut(path, .notARecord)
            return nil
        }
        return attributes
    }

    /// FIFOs and sockets in vault directories; never a device, which only root could make.
    mutating func node(_ path: String, _ attributes: BackupAttributes, device: UInt64) -> BackupAttributes? {
        let type = mode_t(attributes.mode) & S_IFMT
        if type == S_IFCHR || type == S_IFBLK {
            leaveOut(path, .deviceNode(mode: attributes.mode, device: device))
            return nil
        }
        guard Self.place(of: path) == .vault else {
            leaveOut(path, .notARecord)
            return nil
        }
        return clearingSetID(attributes, path)
    }

    /// A second name of a vault file: neither name may be one of the daemon's.
    mutating func hardLink(_ path: String, to first: String) -> Bool {
        guard Self.place(of: path) == .vault, Self.place(of: first) == .vault else {
            leaveOut(path, .notARecord)
            return false
        }
        return true
    }

    // MARK: helpers

    private mutating func clearingSetID(_ attributes: BackupAttributes, _ path: String) -> BackupAttributes {
        let setID = UInt32(S_ISUID | S_ISGID)
        guard attributes.mode & setID != 0 else { return attributes }
        report(ArchiveFinding(path: path, problem: .setIDBits(mode: attributes.mode)))
        setIDBitsCleared += 1
        var kept = attributes
        kept.mode &= ~setID
        return kept
    }

    /// One of the daemon's records or folders: the restoring user's, with the daemon's mode.
    private func daemons(_ attributes: BackupAttributes, _ path: String, permissions: UInt32) -> BackupAttributes {
        if let archiveOwner, attributes.uid != archiveOwner {
            report(ArchiveFinding(path: path, problem: .recordOwner(uid: attributes.uid)))
        }
        var kept = attributes
        kept.mode = attributes.mode & UInt32(S_IFMT) | permissions
        (kept.uid, kept.gid) = restorer
        return kept
    }

    private mutating func leaveOut(_ path: String, _ problem: ArchiveFinding.Problem) {
        entriesLeftOut += 1
        report(ArchiveFinding(path: path, problem: problem))
    }
}
