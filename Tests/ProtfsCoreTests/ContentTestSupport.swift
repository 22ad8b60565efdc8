import ProtfsDomain
import ProtfsTestSupport
import Foundation
import Glibc
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// Keys for one test vault, every class installed unless a test removes some.
struct ContentTestKeys {
    let keyring: ClassKeyring
    let classKeys: [ProtectionClass: LockedKey]

    /// Random keys, or the given ones (known-answer vectors), for a vault whose contents are
    /// sealed with `aead` (the format vectors' XChaCha20-Poly1305 unless a test says).
    init(vaultID: ObjectID = .random(), deviceKey: LockedKey = .random(),
         classKeys given: [ProtectionClass: LockedKey]? = nil, aead: ContentAEAD = .xchacha20Poly1305) {
        let keys = given ?? [
            .complete: .random(), .completeUntilFirstUserAuthentication: .random(), .none: .random(),
            .completeUnlessOpen: X25519.generatePrivateKey(),
        ]
        keyring = ClassKeyring(vaultID: vaultID, deviceKeys: DeviceKeys(deviceKey: deviceKey),
                               classBPublicKey: X25519.publicKey(for: keys[.completeUnlessOpen]!), contentAEAD: aead)
        for (protectionClass, key) in keys { keyring.install(key, for: protectionClass) }
        classKeys = keys
    }
}

/// A temporary backing directory, removed with its contents when the value goes.
final class ContentTestDirectory {
    let path: String
    let descriptor: FileDescriptor

    init() throws {
        var template = Array("/tmp/protfs-content-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw Errno.current }
        path = String(cString: made)
        descriptor = try FileDescriptor.open(path: path, .directory)
    }

    deinit {
        descriptor.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The raw backing bytes of `name`.
    func backingBytes(_ name: String) throws -> [UInt8] {
        let fd = try FileDescriptor.open(name, in: descriptor, .readOnly)
        defer { fd.close() }
        return try fd.readAll(limit: 1 << 30)
    }

    /// Replaces the backing bytes of `name` (tampering, planting vectors).
    func setBackingBytes(_ name: String, _ bytes: [UInt8]) throws {
        let fd = try FileDescriptor.open(name, in: descriptor, [.writeOnly, .create, .truncate])
        defer { fd.close() }
        try fd.writeAll(bytes)
    }

    /// Overwrites some backing bytes of `name` in place.
    func patchBacking(_ name: String, at offset: Int64, _ bytes: [UInt8]) throws {
        let fd = try FileDescriptor.open(name, in: descriptor, .writeOnly)
        defer { fd.close() }
        try bytes.withUnsafeBytes { b in Result { () throws(Errno) in try fd.write(b, at: offset) } }.get()
    }

    func flipBit(_ name: String, at offset: Int64, bit: UInt8 = 0) throws {
        let bytes = try backingBytes(name)
        try patchBacking(name, at: offset, [bytes[Int(offset)] ^ (1 << bit)])
    }

    func backingStatus(_ name: String) throws -> stat { try descriptor.status(of: name) }

    func truncateBacking(_ name: String, to size: Int64) throws {
        let fd = try FileDescriptor.open(name, in: descriptor, .writeOnly)
        defer { fd.close() }
        try fd.truncate(to: size)
    }
}

extension EncryptedFile {
    func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { b in Result { () throws(Errno) in try write(b, at: offset) } }.get()
    }

    /// Reads `count` bytes at `offset` (fewer at end of file).
    func read(count: Int, at offset: Int64) throws(Errno) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let n = try out.withUnsafeMutableBytes { b in Result { () throws(Errno) in try read(into: b, at: offset) } }.get()
        return Array(out[0..<n])
    }

    func readAll() throws(Errno) -> [UInt8] { try read(count: Int(size()), at: 0) }
}

func randomBytes(_ count: Int, using generator: inout SeededGenerator) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: (count + 7) / 8 * 8)
    out.withUnsafeMutableBytes { raw in
        for i in 0 ..< raw.count / 8 { raw.storeBytes(of: generator.next(), toByteOffset: i * 8, as: UInt64.self) }
    }
    return Array(out[0..<count])
}

/// The in-memory model a file is compared against.
struct PlaintextModel {
    var bytes: [UInt8] = []

    mutating func write(_ data: [UInt8], at offset: Int) {
        if bytes.count < offset + data.count { bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count) }
        bytes.replaceSubrange(offset ..< offset + data.count, with: data)
    }

    mutating func truncate(to size: Int) {
        if size < bytes.count { bytes.removeSubrange(size...) } else { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
    }
}
