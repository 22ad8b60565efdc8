import Glibc
import CProtfsSys
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

/// The archive of a backup through the daemon, made by the user who asks (its owner and mode
/// 0600 are theirs), handed to the daemon as a descriptor, and named only once complete. Where
/// the filesystem allows it the file has no name until then (`O_TMPFILE`), so a client killed
/// halfway leaves nothing behind; elsewhere it is `ARCHIVE.protfs.tmp.*`, removed on failure.
/// A complete archive never replaces an existing file.
struct PendingArchive {
    let path: String
    let file: FileDescriptor
    /// The temporary name, for a filesystem without `O_TMPFILE`.
    private let temporary: String?

    static func create(at path: String) throws(BackupError) -> PendingArchive {
        var existing = stat()
        guard lstat(path, &existing) != 0 else { throw .archiveExists(path: path) }
        let unnamed = protfs_open_tmpfile(directory(of: path), 0o600)
        if unnamed >= 0 { return PendingArchive(path: path, file: FileDescriptor(rawValue: unnamed), temporary: nil) }
        let temporary = path + ".protfs.tmp." + SecureRandom.bytes(6).map { String($0, radix: 16) }.joined()
        do {
            let file = try FileDescriptor.open(path: temporary, [.writeOnly, .create, .exclusive], mode: 0o600)
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
            let fd = try FileDescriptor.open(path: directory, [.readOnly, .directory])
            defer { fd.close() }
            try fd.syncDirectory()
        } catch {
            throw .system(operation: "sync", path: directory, errno: error)
        }
    }

    /// Closes the file, and removes it if it has a name and was not published.
    func close(published: Bool) {
        file.close()
        if let temporary, !published { unlink(temporary) }
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
