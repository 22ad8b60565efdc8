import Glibc
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// Making an `EncryptedFile`: a new file with its header, or an existing one opened (never
/// anything but a regular file).
extension EncryptedFile {
    /// Creates `name` in `directory` (`O_CREAT|O_EXCL`) as an empty file of `protectionClass`
    /// and writes its header (not synced: the caller decides). `EACCES` when the class key
    /// (for `completeUnlessOpen`, its public key) is not in `keyring`; nothing is created then.
    public static func create(in directory: FileDescriptor, name: String, mode: mode_t,
                              protectionClass: ProtectionClass, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        let (header, fileKey) = try FileHeader.create(protectionClass: protectionClass, keyring: keyring)
        let backing = try OwnedDescriptor.open(name, in: directory, [.create, .exclusive, .readWrite, .nonBlocking], mode: mode)
        let descriptor = backing.borrowed
        do {
            try header.encoded().withUnsafeBytes { bytes in
                Result { () throws(Errno) in try descriptor.write(bytes, at: 0) }
            }.get()
        } catch {
            try? directory.removeFile(name)
            throw error
        }
        return EncryptedFile(backing: backing, header: header, fileKey: fileKey, keyring: keyring)
    }

    /// Opens a file from a descriptor the caller opened for reading and writing (`O_NONBLOCK`),
    /// which the file then owns (closed at once on failure). `EIO` if it
    /// is not a regular file or its header is damaged (see `FileHeader.diagnose`), `EACCES`
    /// if its class key is not installed.
    public static func open(_ backing: consuming OwnedDescriptor, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        try open(backing, keyring: keyring, writeRefusal: nil)
    }

    private static func open(_ backing: consuming OwnedDescriptor, keyring: ClassKeyring,
                             writeRefusal: Errno?) throws(Errno) -> EncryptedFile {
        guard try backing.borrowed.status().isRegularFile else { throw .io }
        let header = try FileHeader.read(from: backing.borrowed, keyring: keyring)
        return EncryptedFile(backing: backing, header: header, fileKey: try header.unwrapFileKey(keyring: keyring),
                             keyring: keyring, writeRefusal: writeRefusal)
    }

    /// Opens a file whose header the caller has just read (and checked) from `descriptor`, a
    /// regular file open for reading and writing: only the key is unwrapped. Ownership of the
    /// descriptor as in `open(_:keyring:)`.
    public static func open(_ backing: consuming OwnedDescriptor, header: FileHeader, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        EncryptedFile(backing: backing, header: header, fileKey: try header.unwrapFileKey(keyring: keyring), keyring: keyring)
    }

    /// Opens the object an `O_PATH` descriptor refers to, for reading and writing. It is
    /// checked to be a regular file before it is opened, through the descriptor's /proc link,
    /// so a FIFO or device node planted in the backing directory is never opened. When the
    /// backing object cannot be opened for writing (say a 0444 file, as git makes, under a
    /// daemon that is not root, or a read-only backing filesystem), it is opened for reading
    /// and writes fail with the error the read-write open got.
    public static func open(reopening pathDescriptor: FileDescriptor, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        guard try pathDescriptor.status().isRegularFile else { throw .io }
        let backing: OwnedDescriptor
        var writeRefusal: Errno?
        do {
            backing = try OwnedDescriptor.open(path: pathDescriptor.procPath, [.readWrite, .nonBlocking])
        } catch {
            guard error == .permissionDenied || error == Errno(EROFS) else { throw error }
            writeRefusal = error
            backing = try OwnedDescriptor.open(path: pathDescriptor.procPath, [.readOnly, .nonBlocking])
        }
        return try open(backing, keyring: keyring, writeRefusal: writeRefusal)
    }

    /// Opens `name` in `directory` as `open(reopening:keyring:)` does, never opening anything
    /// but a regular file.
    public static func open(_ name: String, in directory: FileDescriptor, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        let object = try OwnedDescriptor.open(name, in: directory, .path)
        return try open(reopening: object.borrowed, keyring: keyring)
    }
}
