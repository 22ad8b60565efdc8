import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// A regular file's contents, read and written at random offsets through its backing object
/// (docs/FORMAT.md, "Regular files"). Owns the backing descriptor (closed when the object
/// goes) and the per-file key (wiped when the last reference goes: dropping the object is
/// how a lock forgets a file's key, which the census then checks). Reads run in parallel;
/// writes, truncations and re-classes are exclusive. Errors are `Errno`: `EIO` for damage or failed
/// authentication, `EACCES` for a missing class key. Nothing here logs.
///
/// The rest is in extensions: creating and opening (`+Opening`), reading (`+Reading`), the
/// changes (`+Writing`) and the re-sealing they share (`+Resealing`); the buffers they use
/// are `ChunkScratch`, the arithmetic on chunk ranges is in `ContentLayout`.
public final class EncryptedFile: Sendable, FileKeyHolder {
    /// Chunks handled per backing `pread`/`pwrite`: 1 MiB of plaintext, one FUSE request.
    static let chunksPerRun: Int64 = 256

    public let fileID: ObjectID
    private let backing: OwnedDescriptor
    var descriptor: FileDescriptor { backing.borrowed }
    let fileKey: LockedKey
    let cipher: ChunkCipher
    let lock = ReadWriteLock()
    let headerState: Mutex<FileHeader>
    /// Why the backing object could only be opened for reading (a backing mode without the
    /// owner's write bit, a read-only backing filesystem); changes then fail with it.
    private let writeRefusal: Errno?
    /// Where this file's key is counted while it lives.
    private let census: FileKeyCensus

    init(backing: consuming OwnedDescriptor, header: FileHeader, fileKey: LockedKey, keyring: ClassKeyring,
         writeRefusal: Errno? = nil) {
        self.backing = backing
        self.fileKey = fileKey
        self.writeRefusal = writeRefusal
        fileID = header.fileID
        cipher = ChunkCipher(fileKey: fileKey, fileID: header.fileID, aead: keyring.contentAEAD)
        headerState = Mutex(header)
        census = keyring.fileKeys
        census.enrol(self)
    }

    deinit { census.leave(self) }

    public var header: FileHeader { headerState.withLock { $0 } }

    /// Takes the header a re-class through another descriptor has just committed (same file
    /// id and key, re-wrapped), so the file's class as seen here stays the truth.
    func adopt(rewrapped header: FileHeader) {
        precondition(header.fileID == fileID)
        headerState.withLock { $0 = header }
    }

    /// Sets an xattr of the backing file through the descriptor already open (no /proc
    /// walk): the class hint of a file just created.
    public func setBackingAttribute(_ name: String, _ value: [UInt8]) throws(Errno) {
        try descriptor.setExtendedAttribute(name, value)
    }
    public var protectionClass: ProtectionClass { header.protectionClass }
    var keyScheduleCount: Int { cipher.keyScheduleCount }

    /// The plaintext size, from the backing size alone.
    public func size() throws(Errno) -> Int64 {
        ContentLayout.plaintextSize(backingSize: Int64(try descriptor.status().st_size))
    }

    /// The plaintext size, or `EIO` when the backing size is one no protfs file can have.
    func checkedSize() throws(Errno) -> Int64 {
        try Self.checkedSize(backingSize: Int64(try descriptor.status().st_size))
    }

    static func checkedSize(backingSize: Int64) throws(Errno) -> Int64 {
        guard ContentLayout.isWellFormed(backingSize: backingSize) else { throw .io }
        return ContentLayout.plaintextSize(backingSize: backingSize)
    }

    /// A descriptor of the backing object of its own: what `fsync` needs, without the key.
    public func backingDescriptorCopy() throws(Errno) -> OwnedDescriptor { try descriptor.duplicate() }

    func ensureWritable() throws(Errno) {
        if let writeRefusal { throw writeRefusal }
    }
}
