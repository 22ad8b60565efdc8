import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// What a test support helper could not make from its input (a malformed hex string).
public struct TestInputError: Error, CustomStringConvertible {
    public let description: String
}

/// An open, fresh, empty directory (a backing directory's stand-in), removed afterwards.
public func withScratchDirectory<R>(_ body: (FileDescriptor) throws -> R) throws -> R {
    let scratch = TemporaryDirectory()
    let directory = try scratch.openDirectory()
    defer { directory.close() }
    return try body(directory)
}

public func randomFilesystemKeys() -> FilesystemKeys { FilesystemKeys(filesystemKey: .random()) }

public func filesystemKeys(hex: String) throws -> FilesystemKeys {
    guard let bytes = hexBytes(hex) else { throw TestInputError(description: "not hex: \(hex)") }
    return FilesystemKeys(filesystemKey: try bytes.withUnsafeBytes { try LockedKey.copying($0) })
}

/// A plaintext name of `length` bytes that is valid on the mount (no `/`, no NUL), varied
/// enough that neighbouring lengths differ everywhere.
public func sampleName(length: Int, seed: Int = 0) -> [UInt8] {
    (0..<length).map { i in
        let byte = UInt8(truncatingIfNeeded: (i &* 131 &+ seed &* 17 &+ 7) % 253 + 1)
        return byte == UInt8(ascii: "/") ? UInt8(ascii: "_") : byte
    }
}

extension ObjectID {
    public init(hex: String) throws {
        guard let bytes = hexBytes(hex), let id = ObjectID(bytes: bytes) else {
            throw TestInputError(description: "not a 16-byte object id: \(hex)")
        }
        self = id
    }
}

extension FileDescriptor {
    /// Creates an empty regular file `name` here (for entries that need an object behind them).
    public func makeEmptyFile(_ name: String) throws(Errno) {
        try FileDescriptor.open(name, in: self, [.writeOnly, .create, .exclusive]).close()
    }

    public func exists(_ name: String) -> Bool { (try? status(of: name)) != nil }
}
