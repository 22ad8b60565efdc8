import Glibc
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// Where a restore puts the objects of an archive: a new, empty backing directory. Directory
/// modes, owners and times are set at the end, deepest first (creating entries would change
/// them). Nothing is synced one by one: a restored vault counts only once its keybag is written,
/// so one `syncfs` before the keybag makes everything durable at once (a sync per file made a
/// restore of a source tree ten times slower than `tar -x`).
///
/// Used by one thread at a time: the `RestoreMaker`'s while the replay runs, then, once that
/// thread is joined, the restore's for `finish`.
final class RestoreTarget: @unchecked Sendable {
    let root: FileDescriptor
    /// The new vault's keyring: file headers are re-MACed for this device.
    let keyring: ClassKeyring
    private let backingPath: String
    private var directories: [(String, BackupAttributes)] = []
    /// The directories from the root down to the last one used, each open: the archive lists
    /// a directory's entries together and goes depth first, so the parent of the next entry
    /// is nearly always on this chain (opening each parent from the root again doubled the
    /// system calls of a source tree's restore). The root is not on it.
    private var chain: [OpenDirectory] = []
    /// The file between `beginFile` and `endFile`, and its mode as made (nil: unknown).
    private var file: OwnedDescriptor?
    private var fileMode: mode_t?
    private let asRoot = geteuid() == 0

    init(root: FileDescriptor, backingPath: String, keyring: ClassKeyring) {
        self.root = root
        self.backingPath = backingPath
        self.keyring = keyring
    }

    func makeDirectory(_ path: String, _ attributes: BackupAttributes, _ xattrs: [(String, [UInt8])]) throws(BackupError) {
        if !path.isEmpty {
            let (directory, name) = try parentAndName(path)
            do { try directory.makeDirectory(name, mode: 0o700) } catch { throw system("create", path, error) }
        }
        try set(xattrs, on: try directory(path), path)
        directories.append((path, attributes))
    }

    /// A new file, made with the permission bits it will keep: unless the umask takes some
    /// away or it has set-id bits, `endFile` needs no `fchmod`.
    func beginFile(_ path: String, mode: UInt32, _ xattrs: [(String, [UInt8])]) throws(BackupError) {
        let (directory, name) = try parentAndName(path)
        let created: OwnedDescriptor
        do { created = try OwnedDescriptor.open(name, in: directory, [.writeOnly, .create, .exclusive], mode: mode_t(mode & 0o777)) } catch {
            throw system("create", path, error)
        }
        let fd = created.borrowed
        file = consume created
        fileMode = Self.creationMask.map { mode_t(mode) & 0o777 & ~$0 }
        try set(xattrs, on: fd, path)
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws(BackupError) {
        guard let file = file?.borrowed else { preconditionFailure("a write outside a file") }
        do throws(Errno) {
            try bytes.withUnsafeBytes { b in Result { () throws(Errno) in try file.write(b, at: Int64(offset)) } }.get()
        } catch {
            throw system("write", "a file", error)
        }
    }

    /// The size (holes stay holes; a file whose data ends at its size already has it), owner,
    /// mode and times.
    func endFile(_ path: String, size: UInt64, written: UInt64, _ attributes: BackupAttributes) throws(BackupError) {
        guard let owned = self.file.take() else { preconditionFailure("a file ended that was not begun") }
        let file = owned.borrowed
        do throws(Errno) {
            if written < size { try file.truncate(to: Int64(size)) }
            try apply(attributes, to: file, madeWithMode: fileMode)
        } catch {
            throw system("restore", path, error)
        }
    }

    func makeSymlink(_ path: String, target: String, _ attributes: BackupAttributes) throws(BackupError) {
        let (directory, name) = try parentAndName(path)
        do throws(Errno) {
            try directory.makeSymlink(name, target: target)
            try finishLeaf(directory, name, attributes, setMode: false)
        } catch {
            throw system("restore", path, error)
        }
    }

    func makeNode(_ path: String, _ attributes: BackupAttributes, device: UInt64) throws(BackupError) {
        let type = attributes.mode & UInt32(S_IFMT)
        // Devices never: the screen leaves them out (`ArchiveScreen`); this keeps it so.
        guard [S_IFIFO, S_IFSOCK].contains(mode_t(type)) else { throw .damaged("a node that is no FIFO or socket") }
        let (directory, name) = try parentAndName(path)
        do throws(Errno) {
            try directory.makeNode(name, mode: mode_t(type | 0o600), device: dev_t(device))
            try finishLeaf(directory, name, attributes, setMode: true)
        } catch {
            throw system("restore", path, error)
        }
    }

    func makeHardLink(_ path: String, to first: String) throws(BackupError) {
        // The first name's directory opened like any other (never through a symlink), so a
        // crafted archive cannot link something outside the backing directory in; held
        // apart from the chain, which the link's own directory may change.
        let (sourceDirectory, sourceName) = try parentAndName(first)
        let source: OwnedDescriptor
        do { source = try sourceDirectory.duplicate() } catch { throw system("open", first, error) }
        let (directory, name) = try parentAndName(path)
        let sourceDescriptor = source.borrowed.rawValue
        _ = try? syscallRetrying { linkat(sourceDescriptor, sourceName, directory.rawValue, name, 0) }
        // linkat's failure is told by what is there (the first name must be a regular file).
        guard let st = try? directory.status(of: name), st.st_mode & S_IFMT == S_IFREG, st.st_nlink > 1 else {
            throw .damaged("a hard link to \(first), which is not a file restored before it")
        }
    }

    /// Modes, owners and times of every directory, deepest first; then the whole filesystem
    /// synced and `beforeRoot` run (it writes the keybag, durably), then the root's.
    func finish(beforeRoot: () throws -> Void) throws {
        defer { chain.removeAll() }
        for (path, recorded) in directories.reversed() {
            var attributes = recorded
            if path.isEmpty {
                do { try root.syncFileSystem() } catch { throw system("sync", path, error) }
                try beforeRoot()
                // As `init` makes it, whatever the archive says (docs/FORMAT.md).
                attributes.mode &= ~0o077
            }
            let fd = try directory(path)
            do throws(Errno) {
                try apply(attributes, to: fd)
                if path.isEmpty { try fd.syncDirectory() }
            } catch {
                throw system("restore", path, error)
            }
        }
    }

    // MARK: helpers

    /// This process's umask, read without changing it (`umask(2)` can only set it); nil
    /// where the kernel does not report it.
    static let creationMask: mode_t? = {
        guard let status = try? OwnedDescriptor.open(path: "/proc/self/status", [.readOnly]),
              let text = try? status.borrowed.readAll(),
              let line = String(decoding: text, as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
              let mask = mode_t(line.dropFirst("Umask:".count).trimmingPrefix(while: { $0 == "\t" || $0 == " " }), radix: 8)
        else { return nil }
        return mask
    }()

    /// Owner (when root: nobody else may give a file away), then mode (a chown clears the
    /// set-id bits), then times.
    private func apply(_ attributes: BackupAttributes, to fd: FileDescriptor, madeWithMode: mode_t? = nil) throws(Errno) {
        if asRoot { try fd.changeOwner(uid: attributes.uid, gid: attributes.gid) }
        let mode = mode_t(attributes.mode & 0o7777)
        if mode != madeWithMode { try fd.changeMode(mode) }
        var times = [attributes.accessTime, attributes.modificationTime]
        _ = try syscallRetrying { futimens(fd.rawValue, &times) }
    }

    private func finishLeaf(_ directory: FileDescriptor, _ name: String, _ attributes: BackupAttributes,
                            setMode: Bool) throws(Errno) {
        if asRoot { try directory.changeOwner(name, uid: attributes.uid, gid: attributes.gid) }
        if setMode { _ = try syscallRetrying { fchmodat(directory.rawValue, name, mode_t(attributes.mode & 0o7777), 0) } }
        var times = [attributes.accessTime, attributes.modificationTime]
        _ = try syscallRetrying { utimensat(directory.rawValue, name, &times, AT_SYMLINK_NOFOLLOW) }
    }

    private func set(_ xattrs: [(String, [UInt8])], on fd: FileDescriptor, _ path: String) throws(BackupError) {
        for (name, value) in xattrs {
            do { try fd.setExtendedAttribute(name, value) } catch { throw system("set an extended attribute of", path, error) }
        }
    }

    /// The directory holding `path`, and the last component.
    private func parentAndName(_ path: String) throws(BackupError) -> (FileDescriptor, String) {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let parentPath = slash.map { String(path[..<$0]) } ?? ""
        let name = slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path
        return (try directory(parentPath), name)
    }

    /// The directory at `path` (the root for ""), through the chain: its deepest ancestor
    /// there, then each further component opened without following a symlink and added.
    private func directory(_ path: String) throws(BackupError) -> FileDescriptor {
        guard !path.isEmpty else { return root }
        var kept = chain.count
        while kept > 0 && !Self.isSameOrInside(path, chain[kept - 1].path) { kept -= 1 }
        chain.removeLast(chain.count - kept)
        let done = chain.last?.path ?? ""
        let rest = done.isEmpty ? path.utf8[...] : path.utf8.dropFirst(done.utf8.count + 1)
        for component in rest.split(separator: UInt8(ascii: "/")) {
            let name = String(decoding: component, as: UTF8.self)
            let next: OwnedDescriptor
            do { next = try OwnedDescriptor.open(name, in: chain.last?.descriptor ?? root, [.readOnly, .directory]) } catch {
                throw system("open", path, error)
            }
            let parentPath = chain.last?.path ?? ""
            chain.append(OpenDirectory(path: parentPath.isEmpty ? name : parentPath + "/" + name, next))
        }
        return chain.last?.descriptor ?? root
    }

    /// `path` is `ancestor` or inside it, compared on bytes (String comparison would take two
    /// spellings of one accented name as equal), in place (`starts(with:)` on the UTF-8 views,
    /// a byte at a time through their indices, was a few percent of a restore's CPU time).
    private static func isSameOrInside(_ path: String, _ ancestor: String) -> Bool {
        var path = path, ancestor = ancestor
        return path.withUTF8 { bytes in
            ancestor.withUTF8 { prefix in
                bytes.count >= prefix.count && (prefix.isEmpty || memcmp(bytes.baseAddress!, prefix.baseAddress!, prefix.count) == 0)
                    && (bytes.count == prefix.count || bytes[prefix.count] == UInt8(ascii: "/"))
            }
        }
    }

    private func system(_ operation: String, _ path: String, _ error: Errno) -> BackupError {
        .system(operation: operation, path: backingPath + "/" + path, errno: error)
    }
}

/// A directory on the chain, open while it is there.
private final class OpenDirectory {
    let path: String
    private let owner: OwnedDescriptor
    var descriptor: FileDescriptor { owner.borrowed }

    init(path: String, _ owner: consuming OwnedDescriptor) {
        self.path = path
        self.owner = owner
    }
}
