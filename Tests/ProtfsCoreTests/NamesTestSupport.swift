import Foundation
import Glibc
import Testing
import ProtfsCrypto
import ProtfsSystem
@testable import ProtfsCore
@testable import ProtfsFormat

/// A fresh backing-like directory under the system temporary directory, removed afterwards.
func withScratchDirectory<R>(_ body: (FileDescriptor) throws -> R) throws -> R {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("protfs-names-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(at: url) }
    let directory = try FileDescriptor.open(path: url.path, [.readOnly, .directory])
    defer { directory.close() }
    return try body(directory)
}

func randomFilesystemKeys() -> FilesystemKeys { FilesystemKeys(filesystemKey: .random()) }

func filesystemKeys(hex: String) throws -> FilesystemKeys {
    let bytes = try #require(hexBytes(hex))
    return FilesystemKeys(filesystemKey: try bytes.withUnsafeBytes { try LockedKey.copying($0) })
}

/// A plaintext name of `length` bytes that is valid on the mount (no `/`, no NUL), varied
/// enough that neighbouring lengths differ everywhere.
func sampleName(length: Int, seed: Int = 0) -> [UInt8] {
    (0..<length).map { i in
        let byte = UInt8(truncatingIfNeeded: (i &* 131 &+ seed &* 17 &+ 7) % 253 + 1)
        return byte == UInt8(ascii: "/") ? UInt8(ascii: "_") : byte
    }
}

/// Bytes from lowercase or uppercase hex digits, or nil.
func hexBytes(_ hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
        bytes.append(byte)
    }
    return bytes
}

extension ObjectID {
    init(hex: String) throws {
        let bytes = try #require(hexBytes(hex))
        self = try #require(ObjectID(bytes: bytes))
    }
}

extension FileDescriptor {
    /// Creates an empty regular file `name` here (for entries that need an object behind them).
    func makeEmptyFile(_ name: String) throws(Errno) {
        try FileDescriptor.open(name, in: self, [.writeOnly, .create, .exclusive]).close()
    }

    func exists(_ name: String) -> Bool { (try? status(of: name)) != nil }
}
