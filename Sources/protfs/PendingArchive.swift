import Glibc
import CProtfsSys
import ProtfsCore
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// The archive of a backup, made by the user who asks (its owner and mode 0600 are theirs),
/// written here or handed to the daemon as a descriptor, and named only once complete. Where
/// the filesystem allows it the file has no name until then (`O_TMPFILE`), so a backup
/// stopped halfway (Ctrl-C, `kill -9`) leaves nothing behind; elsewhere it is
/// `ARCHIVE.protfs.tmp.*`, removed on failure and, when a stop left one, by the next backup
/// to the same name. A complete archive never replaces an existing file. The file is closed,
/// and a temporary name not published removed, when this goes.
final class PendingArchive {
    let path: String
    private let owner: OwnedDescriptor
    var file: FileDescriptor { owner.borrowed }
    /// The temporary name, for a filesystem without `O_TMPFILE`.
    private let temporary: String?
    private var published = false

    private init(path: String, file: consuming OwnedDescriptor, temporary: String?) {
        self.path = path
        owner = file
        self.temporary = temporary
    }

    deinit {
        if let temporary, !published { unlink(temporary) }
    }

    static func create(at path: String) throws(BackupError) -> PendingArchive {
        var existing = stat()
        guard lstat(path, &existing) != 0 else { throw .archiveExists(path: path) }
        let unnamed = protfs_open_tmpfile(directory(of: path), 0o600)
        if unnamed >= 0 { return PendingArchive(path: path, file: OwnedDescriptor(adopting: FileDescriptor(rawValue: unnamed)), temporary: nil) }
        removeStaleTemporaries(of: path)
        let temporary = path + temporaryInfix + SecureRandom.bytes(6).map { String($0, radix: 16) }.joined()
        do {
            let file = try OwnedDescriptor.open(path: temporary, [.writeOnly, .create, .exclusive], mode: 0o600)
            return PendingArchive(path: path, file: file, temporary: temporary)
        } catch {
            throw .system(operation: "create", path: temporary, errno: error)
        }
    }

    /// Names the complete (and synced) archive, and syncs its directory.
    func publish() throws(BackupError) {
        if let temporary {
            var existing = stat()
            guard lstat(path, &existing) != 0 else { throw .archiveExists(path: path) }
            guard rename(temporary, path) == 0 else { throw .system(operation: "rename the archive to", path: path, errno: .current) }
        } else if protfs_link_tmpfile(file.rawValue, path) != 0 {
            if Errno.current == .exists { throw .archiveExists(path: path) }
            throw .system(operation: "name the archive", path: path, errno: .current)
        }
        let directory = Self.directory(of: path)
        do {
            try OwnedDescriptor.open(path: directory, [.readOnly, .directory]).closeAfter { (fd) throws(Errno) in try fd.syncDirectory() }
        } catch {
            throw .system(operation: "sync", path: directory, errno: error)
        }
        published = true
    }

    private static let temporaryInfix = ".protfs.tmp."

    /// What a backup to the same name stopped before it ended left (only this user's files).
    private static func removeStaleTemporaries(of path: String) {
        let directory = directory(of: path), prefix = (path.split(separator: "/").last.map(String.init) ?? path) + temporaryInfix
        guard let listing = try? OwnedDescriptor.open(path: directory, [.readOnly, .directory]),
              let names = try? listing.borrowed.entryNames() else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let status = try? listing.borrowed.status(of: name), status.st_uid == geteuid(), status.isRegularFile else { continue }
            try? listing.borrowed.removeFile(name)
        }
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
