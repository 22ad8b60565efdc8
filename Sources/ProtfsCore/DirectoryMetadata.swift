import ProtfsCrypto
import ProtfsSystem

/// `protfs.dir`, the 64 bytes in every backing directory that hold its random id (the tweak
/// of its names) and its class (the default for new children), MACed under the filesystem
/// key together with the vault id. It is the truth for a directory's class; the
/// `user.protfs.class` hint only mirrors it. Failures are `EIO`, as for any object that
/// fails authentication.
public struct DirectoryMetadata: Sendable, Hashable {
    public static let byteCount = 64
    public static let fileName = "protfs.dir"
    static let magic = Array("PROTFSDR".utf8)
    static let currentVersion: UInt16 = 1
    static let macOffset = 32

    public let directoryID: ObjectID
    public let protectionClass: ProtectionClass

    public init(directoryID: ObjectID, protectionClass: ProtectionClass) {
        self.directoryID = directoryID
        self.protectionClass = protectionClass
    }

    /// Metadata for a new directory: a fresh id and the class it was given.
    public static func new(protectionClass: ProtectionClass) -> DirectoryMetadata {
        DirectoryMetadata(directoryID: .random(), protectionClass: protectionClass)
    }

    /// The same directory with another class (a re-class keeps the id, so names stay valid).
    public func withClass(_ protectionClass: ProtectionClass) -> DirectoryMetadata {
        DirectoryMetadata(directoryID: directoryID, protectionClass: protectionClass)
    }

    public func encoded(vaultID: ObjectID, keys: FilesystemKeys) -> [UInt8] {
        var body = Self.magic
        body.appendLittleEndian(Self.currentVersion)
        body += [protectionClass.rawValue, 0, 0, 0, 0, 0]
        body += directoryID.bytes
        return body + Self.mac(body, vaultID: vaultID, keys: keys)
    }

    public static func decode(_ bytes: [UInt8], vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) -> DirectoryMetadata {
        guard bytes.count == byteCount, Array(bytes[0..<8]) == magic else { throw .io }
        let body = Array(bytes[0..<macOffset])
        guard ConstantTime.equal(Array(bytes[macOffset...]), mac(body, vaultID: vaultID, keys: keys)) else { throw .io }
        // The MAC vouches for the bytes; what follows rejects layouts this build cannot read.
        let version: UInt16 = bytes.littleEndian(at: 8)
        guard version == currentVersion, bytes[11..<16].allSatisfy({ $0 == 0 }),
              let protectionClass = ProtectionClass(rawValue: bytes[10]) else { throw .io }
        return DirectoryMetadata(directoryID: ObjectID(bytes: Array(bytes[16..<32]))!, protectionClass: protectionClass)
    }

    /// `MAC(key = pfdirmet subkey, vault id || bytes[0..<32])`.
    private static func mac(_ body: [UInt8], vaultID: ObjectID, keys: FilesystemKeys) -> [UInt8] {
        BLAKE2b.mac(key: keys.directoryMetadata, outputByteCount: byteCount - macOffset, vaultID.bytes, body)
    }

    // MARK: files

    /// Reads `protfs.dir` in the backing directory `directory`. A missing file is `ENOENT`;
    /// anything but a 64-byte regular file that authenticates is `EIO`.
    public static func read(in directory: FileDescriptor, vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) -> DirectoryMetadata {
        let fd = try FileDescriptor.openRegularFile(fileName, in: directory)
        defer { fd.close() }
        var bytes = [UInt8](repeating: 0, count: byteCount + 1)
        let n = try bytes.withUnsafeMutableBytes { b in Result { () throws(Errno) in try fd.read(into: b, at: 0) } }.get()
        bytes.removeLast(bytes.count - n)
        return try decode(bytes, vaultID: vaultID, keys: keys)
    }

    /// Writes `protfs.dir` into a new backing directory (refusing to replace one) and syncs it.
    public func create(in directory: FileDescriptor, vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) {
        let fd = try FileDescriptor.open(Self.fileName, in: directory, [.writeOnly, .create, .exclusive], mode: 0o600)
        defer { fd.close() }
        try fd.writeAll(encoded(vaultID: vaultID, keys: keys))
        try fd.sync()
    }

    /// Replaces `protfs.dir` atomically (a re-class): a `protfs.tmp.*` file, fsync, rename,
    /// fsync the directory.
    public func replace(in directory: FileDescriptor, vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) {
        try directory.writeFileAtomically(Self.fileName, contents: encoded(vaultID: vaultID, keys: keys), syncDirectory: true)
    }
}
