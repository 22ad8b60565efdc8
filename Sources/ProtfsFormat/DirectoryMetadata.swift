import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// `protfs.dir`, the record in every backing directory that holds its random id (the tweak
/// of its names) and its class (the default for new children), MACed under the filesystem
/// key together with the vault id. It is the truth for a directory's class; the
/// `user.protfs.class` hint only mirrors it. Failures are `EIO`, as for any object that
/// fails authentication. Format 2 (96 bytes) hides the class under a stream with a fresh
/// nonce at every write; format 1 (64 bytes, the first builds) stored it in the clear and
/// is still read, until the directory's next re-class rewrites it.
public struct DirectoryMetadata: Sendable, Hashable {
    public static let fileName = "protfs.dir"
    static let magic = Array("PROTFSDR".utf8)
    static let macByteCount = 32

    /// The byte layout of one format version (docs/FORMAT.md, "Directories").
    struct Layout {
        let version: UInt16
        let byteCount: Int
        var macOffset: Int { byteCount - DirectoryMetadata.macByteCount }

        static let v1 = Layout(version: 1, byteCount: 64)
        static let v2 = Layout(version: 2, byteCount: 96)
        static let all = [v1, v2]
        static let largest = v2.byteCount
    }
    /// Format 2: the nonce, and the class block it hides (class id, 7 zero bytes).
    static let nonceRange = 32..<56
    static let classBlockRange = 56..<64

    public let directoryID: ObjectID
    public let protectionClass: ProtectionClass
    /// The nonce that hides the class as stored (format 2), nil for a record read in format 1.
    let classNonce: [UInt8]?

    init(directoryID: ObjectID, protectionClass: ProtectionClass, classNonce: [UInt8]?) {
        self.directoryID = directoryID
        self.protectionClass = protectionClass
        self.classNonce = classNonce
    }

    /// Read from a record in format 1, which stored the class in the clear.
    public var isFormatOne: Bool { classNonce == nil }

    /// Metadata for a new directory: a fresh id and the class it was given.
    public static func new(protectionClass: ProtectionClass) -> DirectoryMetadata {
        DirectoryMetadata(directoryID: .random(), protectionClass: protectionClass, classNonce: SecureRandom.bytes(XChaCha20.nonceByteCount))
    }

    /// The same directory with another class (a re-class keeps the id, so names stay valid),
    /// in the current format with a fresh nonce: one nonce never hides two classes.
    public func withClass(_ protectionClass: ProtectionClass) -> DirectoryMetadata {
        DirectoryMetadata(directoryID: directoryID, protectionClass: protectionClass, classNonce: SecureRandom.bytes(XChaCha20.nonceByteCount))
    }

    /// The record as stored: in format 2, unless it was read in format 1 and not re-classed since.
    public func encoded(vaultID: ObjectID, keys: FilesystemKeys) -> [UInt8] {
        var body = Self.magic
        guard let classNonce else {
            body.appendLittleEndian(Layout.v1.version)
            body += [protectionClass.rawValue, 0, 0, 0, 0, 0]
            body += directoryID.bytes
            return body + Self.mac(body, vaultID: vaultID, keys: keys)
        }
        body.appendLittleEndian(Layout.v2.version)
        body += [UInt8](repeating: 0, count: 6)
        body += directoryID.bytes
        body += classNonce
        body += Self.classStream([protectionClass.rawValue, 0, 0, 0, 0, 0, 0, 0], nonce: classNonce, keys: keys)
        return body + Self.mac(body, vaultID: vaultID, keys: keys)
    }

    public static func decode(_ bytes: [UInt8], vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) -> DirectoryMetadata {
        guard let layout = Layout.all.first(where: { $0.byteCount == bytes.count }), Array(bytes[0..<8]) == magic else { throw .io }
        let body = Array(bytes[0..<layout.macOffset])
        guard ConstantTime.equal(Array(bytes[layout.macOffset...]), mac(body, vaultID: vaultID, keys: keys)) else { throw .io }
        // The MAC vouches for the bytes; what follows rejects layouts this build cannot read.
        let version: UInt16 = bytes.littleEndian(at: 8)
        guard version == layout.version else { throw .io }
        let directoryID = ObjectID(bytes: Array(bytes[16..<32]))!
        if version == Layout.v1.version {
            guard bytes[11..<16].allSatisfy({ $0 == 0 }), let protectionClass = ProtectionClass(rawValue: bytes[10]) else { throw .io }
            return DirectoryMetadata(directoryID: directoryID, protectionClass: protectionClass, classNonce: nil)
        }
        let nonce = Array(bytes[nonceRange])
        let classBlock = classStream(Array(bytes[classBlockRange]), nonce: nonce, keys: keys)
        guard bytes[10..<16].allSatisfy({ $0 == 0 }), classBlock[1...].allSatisfy({ $0 == 0 }),
              let protectionClass = ProtectionClass(rawValue: classBlock[0]) else { throw .io }
        return DirectoryMetadata(directoryID: directoryID, protectionClass: protectionClass, classNonce: nonce)
    }

    /// `MAC(key = pfdirmet subkey, vault id || bytes before the MAC)`.
    private static func mac(_ body: [UInt8], vaultID: ObjectID, keys: FilesystemKeys) -> [UInt8] {
        BLAKE2b.mac(key: keys.directoryMetadata, outputByteCount: macByteCount, vaultID.bytes, body)
    }

    /// `XChaCha20(key = pfdircls subkey, nonce)` over the class block: hides it and reveals it.
    private static func classStream(_ block: [UInt8], nonce: [UInt8], keys: FilesystemKeys) -> [UInt8] {
        XChaCha20.xor(block, nonce: nonce, key: keys.directoryClass)
    }

    // MARK: files

    /// Reads `protfs.dir` in the backing directory `directory`. A missing file is `ENOENT`;
    /// anything but a regular file of a known layout that authenticates is `EIO`.
    public static func read(in directory: FileDescriptor, vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) -> DirectoryMetadata {
        let file = try OwnedDescriptor.openRegularFile(fileName, in: directory)
        let fd = file.borrowed
        var bytes = [UInt8](repeating: 0, count: Layout.largest + 1)
        let n = try bytes.withUnsafeMutableBytes { b in Result { () throws(Errno) in try fd.read(into: b, at: 0) } }.get()
        bytes.removeLast(bytes.count - n)
        return try decode(bytes, vaultID: vaultID, keys: keys)
    }

    /// Writes `protfs.dir` into a new backing directory (refusing to replace one) and syncs it.
    public func create(in directory: FileDescriptor, vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) {
        let file = try OwnedDescriptor.open(Self.fileName, in: directory, [.writeOnly, .create, .exclusive], mode: 0o600)
        try file.borrowed.writeAll(encoded(vaultID: vaultID, keys: keys))
        try file.borrowed.sync()
    }

    /// Replaces `protfs.dir` atomically (a re-class): a `protfs.tmp.*` file, fsync, rename,
    /// fsync the directory.
    public func replace(in directory: FileDescriptor, vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) {
        try directory.writeFileAtomically(Self.fileName, contents: encoded(vaultID: vaultID, keys: keys), syncDirectory: true)
    }
}
