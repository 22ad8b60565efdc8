import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// `protfs fsck`: one pass over an opened (so locked) vault's backing directory. Every
/// directory's metadata and class hint, every entry name (long names and their sidecars
/// too), every file's header, hint and, when its class key is in memory, every chunk, every
/// symlink target, every sealed xattr, and the out-of-line symlink targets no symlink uses.
/// Only `*at` calls with `O_NOFOLLOW`, and each entry's type is taken with `fstatat` before
/// anything opens it: no symlink is followed, no FIFO or device is ever opened.
///
/// In every run, `protfs.tmp.*` leftovers of interrupted atomic writes are removed and
/// missing class hints written, unreported (docs/FORMAT.md: the daemon's own housekeeping).
/// With `repair`, each finding's remedy is applied as it is found: hints rewritten from the
/// header or `protfs.dir`, unreadable objects moved to `protfs.lost+found`, orphan sidecars
/// and undecodable xattrs removed. Healthy objects are never touched.
public final class VaultChecker {
    typealias Location = VaultFinding.Location
    typealias Problem = VaultFinding.Problem

    let vault: Vault
    let repair: Bool
    var report = VaultCheckReport()
    let lostAndFound: LostAndFound
    var keys: FilesystemKeys { vault.filesystemKeys }
    var keyring: ClassKeyring { vault.keyring }
    /// Per backing inode (hard links share one): why the file's contents cannot be read, or
    /// nil when they can, so a file with several names is read once.
    var fileVerdicts: [BackingIdentity: Problem?] = [:]
    /// Out-of-line targets some backing symlink refers to, by link id.
    var referencedLinks: Set<ObjectID> = []
    /// Out-of-line targets of temporary symlinks removed (a rename or upgrade cut short): if
    /// no symlink refers to one, it goes as housekeeping too, not as an orphan.
    var temporaryLinks: Set<ObjectID> = []
    /// False once part of the tree could not be listed: a blob may belong to a symlink there,
    /// so none is called an orphan.
    var everySymlinkSeen = true
    /// Called after each object with the objects checked and the backing bytes of the files
    /// among them so far (`protfs fsck`'s progress).
    public var progress: (_ objects: UInt64, _ bytes: UInt64) -> Void = { _, _ in }
    public private(set) var bytesChecked: UInt64 = 0
    /// Plaintext of one read, wiped after each file.
    let scratch = SecureBuffer(count: Int(EncryptedFile.chunksPerRun) * ContentLayout.chunkByteCount)

    public init(vault: Vault, repair: Bool) {
        self.vault = vault
        self.repair = repair
        lostAndFound = LostAndFound(root: vault.backingRoot)
    }

    /// Checks (and with `repair`, repairs) everything, once.
    public func run() -> VaultCheckReport {
        let installed = keyring.installedClasses
        report.classesWithoutKeys = ProtectionClass.allCases.filter { !installed.contains($0) }
        let root = vault.backingRoot
        let metadata = vault.rootMetadata
        let location = Location.mount(path: Self.rootPath, backingPath: ".")
        report.directories += 1
        checkRecordAndAttributes(of: root, metadata: metadata, location: location)
        walk(root, directoryID: metadata.directoryID, path: Self.rootPath, backingPath: nil)
        if let moved = try? OwnedDescriptor.open(ReservedNames.lostAndFound, in: root, [.readOnly, .directory, .nonBlocking]) {
            collectLinkReferences(in: moved.borrowed)
        }
        checkLinkBlobs()
        checkItems()
        return report
    }

    static let rootPath: [UInt8] = [UInt8(ascii: "/")]

    static func join(_ directory: [UInt8], _ name: [UInt8]) -> [UInt8] {
        directory == rootPath ? rootPath + name : directory + rootPath + name
    }

    // MARK: the walk

    /// Checks every entry of a directory whose metadata authenticated; `backingPath` is nil
    /// for the root.
    private func walk(_ directory: FileDescriptor, directoryID: ObjectID, path: [UInt8], backingPath: String?) {
        let names: [String]
        do { names = try directory.entryNames().sorted() } catch {
            everySymlinkSeen = false
            record(.unreadable(operation: "list", errno: error), at: .mount(path: path, backingPath: backingPath ?? "."))
            return
        }
        for name in names {
            let childBackingPath = backingPath.map { $0 + "/" + name } ?? name
            let status: stat
            do { status = try directory.status(of: name) } catch {
                let location = Location.undecodable(directory: path, backingPath: childBackingPath)
                if error != .noEntry {
                    record(.unreadable(operation: "stat", errno: error), at: location)
                } else if BackingEntryName.classify(name) != .sidecar {
                    // Not found under the name the listing gave: a name that is not UTF-8 (the
                    // listing repairs it), which protfs never writes.
                    record(.foreign, at: location)
                }
                // Else a sidecar that went along with its long entry to lost+found.
                continue
            }
            defer {
                if status.isRegularFile { bytesChecked += UInt64(max(status.st_size, 0)) }
                progress(UInt64(report.objectsChecked), bytesChecked)
            }
            switch BackingEntryName.classify(name) {
            case .reserved:
                checkReserved(name, status: status, in: directory, isRoot: backingPath == nil,
                              location: .undecodable(directory: path, backingPath: childBackingPath))
            case .foreign:
                record(.foreign, at: .undecodable(directory: path, backingPath: childBackingPath))
            case .sidecar:
                checkSidecar(name, in: directory, location: .undecodable(directory: path, backingPath: childBackingPath))
            case .encoded, .longEntry:
                if let plaintext = BackingEntryName.plaintextName(of: name, in: directory, directoryID: directoryID, keys: keys) {
                    checkObject(name, status: status, in: directory, path: Self.join(path, plaintext),
                                backingPath: childBackingPath,
                                symlinkLocation: SymlinkLocation(vaultID: vault.vaultID, directoryID: directoryID, name: plaintext))
                } else {
                    checkUndecodable(name, status: status, in: directory,
                                     location: .undecodable(directory: path, backingPath: childBackingPath))
                }
            }
        }
    }

    private func checkObject(_ name: String, status: stat, in parent: FileDescriptor, path: [UInt8], backingPath: String,
                             symlinkLocation: SymlinkLocation) {
        let location = Location.mount(path: path, backingPath: backingPath)
        switch status.fileType {
        case S_IFDIR:
            report.directories += 1
            checkDirectory(name, in: parent, path: path, backingPath: backingPath)
        case S_IFREG:
            report.files += 1
            checkFile(name, status: status, in: parent, location: location)
        case S_IFLNK:
            report.symlinks += 1
            checkSymlink(name, status: status, in: parent, at: symlinkLocation, location: location)
        default:
            // FIFOs, sockets and device nodes are stored as they are: only their names are ours.
            report.otherNodes += 1
        }
    }

    private func checkDirectory(_ name: String, in parent: FileDescriptor, path: [UInt8], backingPath: String) {
        let location = Location.mount(path: path, backingPath: backingPath)
        let owned: OwnedDescriptor
        do { owned = try OwnedDescriptor.open(name, in: parent, [.readOnly, .directory, .nonBlocking]) } catch {
            everySymlinkSeen = false
            record(.unreadable(operation: "open", errno: error), at: location)
            return
        }
        let directory = owned.borrowed
        let metadata: DirectoryMetadata
        do { metadata = try DirectoryMetadata.read(in: directory, vaultID: vault.vaultID, keys: keys) } catch {
            guard error == .noEntry || error == .io else {
                everySymlinkSeen = false
                record(.unreadable(operation: "read the metadata of", errno: error), at: location)
                return
            }
            collectLinkReferences(in: directory)
            moveToLostAndFound(name, in: parent, location: location,
                               problem: error == .noEntry ? .directoryMetadataMissing : .directoryMetadataDamaged)
            return
        }
        checkRecordAndAttributes(of: directory, metadata: metadata, location: location)
        walk(directory, directoryID: metadata.directoryID, path: path, backingPath: backingPath)
    }

    /// A target must open for the symlink's location. One in format 1 (sealed to no
    /// location) is rewritten in format 3 under `--repair`, otherwise counted for the summary.
    private func checkSymlink(_ name: String, status: stat, in parent: FileDescriptor, at symlinkLocation: SymlinkLocation,
                              location: Location) {
        let backingTarget: String
        do { backingTarget = try parent.readSymlink(name) } catch {
            everySymlinkSeen = false
            record(.unreadable(operation: "read the symlink", errno: error), at: location)
            return
        }
        noteLinkReference(backingTarget)
        var target: [UInt8]
        do { target = try SymlinkTarget.load(backingTarget: backingTarget, at: symlinkLocation, keys: keys, root: vault.backingRoot) } catch {
            if SymlinkTarget.isNewerFormat(backingTarget) {
                record(.symlinkTargetNewer, at: location)
            } else {
                moveToLostAndFound(name, in: parent, location: location, problem: .symlinkTargetDamaged)
            }
            return
        }
        defer { secureZero(&target) }
        guard SymlinkTarget.format(of: backingTarget) == .unbound else { return }
        let upgraded = repair && (try? upgradeSymlink(name, status: status, in: parent, target: target, at: symlinkLocation,
                                                      formerTarget: backingTarget)) != nil
        if upgraded { report.symlinksUpgraded += 1 } else { report.formatOneSymlinks += 1 }
    }

    /// An entry that looks like ours but whose name does not decode: the whole object goes.
    private func checkUndecodable(_ name: String, status: stat, in parent: FileDescriptor, location: Location) {
        switch status.fileType {
        case S_IFDIR:
            report.directories += 1
            if let directory = try? OwnedDescriptor.open(name, in: parent, [.readOnly, .directory, .nonBlocking]) {
                collectLinkReferences(in: directory.borrowed)
            } else {
                everySymlinkSeen = false
            }
        case S_IFREG: report.files += 1
        case S_IFLNK:
            report.symlinks += 1
            if let target = try? parent.readSymlink(name) { noteLinkReference(target) } else { everySymlinkSeen = false }
        default: report.otherNodes += 1
        }
        var problem = Problem.nameUndecodable
        if BackingEntryName.classify(name) == .longEntry {
            let sidecarExists = (try? parent.status(of: name + ReservedNames.sidecarSuffix)) != nil
            problem = sidecarExists ? .longNameSidecarMismatch : .longNameSidecarMissing
        }
        moveToLostAndFound(name, in: parent, location: location, problem: problem)
    }

    /// The daemon's own names: `protfs.dir` everywhere; the keybag, the link blobs, the
    /// keychain items and lost+found in the root, and the TPM's passcode seals and the device
    /// origin there (docs/FORMAT.md); temporaries (removed). Anything else in the namespace is foreign.
    private func checkReserved(_ name: String, status: stat, in directory: FileDescriptor, isRoot: Bool, location: Location) {
        switch name {
        case DirectoryMetadata.fileName where status.isRegularFile,
             Keybag.fileName where isRoot && status.isRegularFile,
             ReservedNames.links where isRoot && status.isDirectory,
             ReservedNames.lostAndFound where isRoot && status.isDirectory,
             ReservedNames.items where isRoot && status.isDirectory,
             ReservedNames.recovery where isRoot && status.isRegularFile:
            return
        case _ where isRoot && status.isRegularFile
            && (name.hasPrefix(ReservedNames.passcodeSealPrefix) || name.hasPrefix(DeviceOriginFile.prefix)):
            return
        default:
            // A temporary symlink is a rename's or an upgrade's that a crash interrupted.
            if name.hasPrefix(ReservedNames.temporaryPrefix), status.isRegularFile || status.isSymlink {
                if status.isSymlink, let target = try? directory.readSymlink(name), let linkID = SymlinkTarget.linkID(of: target) {
                    temporaryLinks.insert(linkID)
                }
                removeTemporary(name, in: directory)
            } else {
                record(.foreign, at: location)
            }
        }
    }

    private func checkSidecar(_ name: String, in directory: FileDescriptor, location: Location) {
        let entry = String(name.dropLast(ReservedNames.sidecarSuffix.utf8.count))
        do {
            _ = try directory.status(of: entry)
        } catch .noEntry {
            record(.orphanSidecar, at: location) { () throws(Errno) in
                try directory.removeFile(name)
                return .removed
            }
        } catch {
            record(.unreadable(operation: "stat the entry of", errno: error), at: location)
        }
    }

    func removeTemporary(_ name: String, in directory: FileDescriptor) {
        if (try? directory.removeFile(name)) != nil { report.temporaryFilesRemoved += 1 }
    }

    // MARK: out-of-line symlink targets

    func noteLinkReference(_ backingTarget: String) {
        if let linkID = SymlinkTarget.linkID(of: backingTarget) { referencedLinks.insert(linkID) }
    }

    /// Notes the out-of-line targets of the symlinks under a directory the walk does not
    /// enter (one whose names cannot be read, or lost+found), so their blobs are no orphans.
    private func collectLinkReferences(in directory: FileDescriptor) {
        guard let names = try? directory.entryNames() else {
            everySymlinkSeen = false
            return
        }
        for name in names {
            guard let status = try? directory.status(of: name) else { continue }
            if status.isSymlink {
                if let target = try? directory.readSymlink(name) { noteLinkReference(target) } else { everySymlinkSeen = false }
            } else if status.isDirectory {
                guard let child = try? OwnedDescriptor.open(name, in: directory, [.readOnly, .directory, .nonBlocking]) else {
                    everySymlinkSeen = false
                    continue
                }
                collectLinkReferences(in: child.borrowed)
            }
        }
    }

    /// `protfs.links`: each blob must be referred to by some symlink; temporaries go.
    private func checkLinkBlobs() {
        let owned: OwnedDescriptor
        do { owned = try OwnedDescriptor.open(ReservedNames.links, in: vault.backingRoot, [.readOnly, .directory, .nonBlocking]) } catch {
            // Missing (no long target yet), or not a directory (reported by the walk).
            if error != .noEntry && error != .notDirectory && error != .loop {
                record(.unreadable(operation: "list", errno: error), at: .daemonFile(backingPath: ReservedNames.links))
            }
            return
        }
        let links = owned.borrowed
        let names: [String]
        do { names = try links.entryNames().sorted() } catch {
            record(.unreadable(operation: "list", errno: error), at: .daemonFile(backingPath: ReservedNames.links))
            return
        }
        for name in names {
            let location = Location.daemonFile(backingPath: ReservedNames.links + "/" + name)
            guard let status = try? links.status(of: name) else { continue }
            switch ReservedFolderEntry.classify(name, in: ReservedNames.links, isRegularFile: status.isRegularFile) {
            case .temporary: removeTemporary(name, in: links)
            case .record:
                guard let linkID = SymlinkTarget.linkID(of: "@" + name), everySymlinkSeen, !referencedLinks.contains(linkID)
                else { continue }
                if temporaryLinks.contains(linkID) {
                    removeTemporary(name, in: links)
                } else {
                    moveToLostAndFound(name, in: links, location: location, problem: .orphanLinkBlob)
                }
            case .foreign: record(.foreign, at: location)
            }
        }
    }
}
