import Glibc
import Testing
import ProtfsTestSupport
@testable import ProtfsCore
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// The chunked, authenticated body of a backup archive (docs/BACKUP.md) at the sizes where
/// the last chunk is full, a byte long or a byte past a boundary, and cut at a boundary.
@Suite struct BackupStreamTests {
    let dir = TemporaryDirectory()
    static let chunk = BackupChunks.plaintextByteCount

    func writeArchive(_ body: [UInt8], named name: String) throws -> String {
        let path = dir.child(name)
        let file = try FileDescriptor.open(path: path, [.writeOnly, .create, .exclusive])
        defer { file.close() }
        let header = BackupArchiveHeader(kdf: .interactive, contentAEAD: .xchacha20Poly1305)
        let writer = try BackupStreamWriter(file: file, path: path, header: header,
                                            keys: try header.keys(passphrase: passcode("phrase")))
        // Appended in uneven pieces, as records are.
        var rest = body[...]
        while !rest.isEmpty {
            let piece = min(rest.count, 1 + rest.count / 3)
            try writer.append(Array(rest.prefix(piece)))
            rest = rest.dropFirst(piece)
        }
        try writer.finish()
        return path
    }

    func readArchive(_ path: String, count: Int, passphrase: String = "phrase") throws -> [UInt8] {
        let file = try FileDescriptor.open(path: path, [.readOnly])
        defer { file.close() }
        // No wrong-passphrase record here (VaultRestore keeps one beside the device key).
        let (reader, _) = try BackupStreamReader.open(file: file, passphrase: passcode(passphrase)) { (_) throws(BackupError) in
            { () throws(BackupError) in }
        }
        let bytes = try reader.read(count)
        try reader.finish()
        return bytes
    }

    @Test(arguments: [1, chunk - 1, chunk, chunk + 1, 2 * chunk, 2 * chunk + 7])
    func roundTripsAtEverySizeAroundABoundary(size: Int) throws {
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let path = try writeArchive(body, named: "a")
        #expect(try readArchive(path, count: size) == body)
        // Reading past the end, or stopping short of it, is damage.
        #expect(throws: BackupError.self) { try readArchive(path, count: size + 1) }
        #expect(throws: BackupError.self) { try readArchive(path, count: size - 1) }
        #expect(throws: BackupError.wrongPassphrase) { try readArchive(path, count: size, passphrase: "other") }
    }

    @Test func aCutAtAChunkBoundaryIsRefused() throws {
        let body = [UInt8](repeating: 0x5A, count: 2 * Self.chunk + 100)
        let path = try writeArchive(body, named: "b")
        let whole = try dir.read("b")
        try dir.write(Array(whole.prefix(BackupArchiveHeader.byteCount + 2 * BackupChunks.sealedByteCount)), to: "cut")
        // The new last chunk was sealed as not the last: it does not open as the last.
        let error = #expect(throws: BackupError.self) { try readArchive(dir.child("cut"), count: 2 * Self.chunk) }
        #expect(error?.exitCode == .damage)
        #expect(try readArchive(path, count: body.count) == body)
    }

    /// Chunks sealed and opened on several lanes at once come back in order, and no two of
    /// them can trade places: far more chunks than are ever in flight.
    @Test func manyChunksComeBackInOrderAndCannotBeSwapped() throws {
        let count = 3 * ChunkSealer.chunksInFlight + 5
        let body = (0..<(count * Self.chunk - 11)).map { UInt8(truncatingIfNeeded: $0 / Self.chunk &+ $0 &* 31) }
        let path = try writeArchive(body, named: "many")
        #expect(try readArchive(path, count: body.count) == body)
        var whole = try dir.read("many")
        let sealed = BackupChunks.sealedByteCount, start = BackupArchiveHeader.byteCount
        let third = Array(whole[(start + 2 * sealed)..<(start + 3 * sealed)])
        let fourth = Array(whole[(start + 3 * sealed)..<(start + 4 * sealed)])
        whole.replaceSubrange((start + 2 * sealed)..<(start + 3 * sealed), with: fourth)
        whole.replaceSubrange((start + 3 * sealed)..<(start + 4 * sealed), with: third)
        try dir.write(whole, to: "swapped")
        let error = #expect(throws: BackupError.self) { try readArchive(dir.child("swapped"), count: body.count) }
        #expect(error == .damaged("chunk 2 does not authenticate"))
    }

    /// A backup that fails midway drops its writer, a restore that fails drops its reader:
    /// neither waits forever for its threads nor leaves a descriptor of the archive open.
    @Test func droppedWritersAndReadersStopTheirThreads() throws {
        let body = [UInt8](repeating: 0xA5, count: 3 * ChunkSealer.chunksInFlight * Self.chunk)
        let path = try writeArchive(body, named: "whole")
        for round in 0..<20 {
            let name = dir.child("dropped\(round)")
            do {
                let file = try FileDescriptor.open(path: name, [.writeOnly, .create, .exclusive])
                defer { file.close() }
                let header = BackupArchiveHeader(kdf: .interactive, contentAEAD: .xchacha20Poly1305)
                let writer = try BackupStreamWriter(file: file, path: name, header: header,
                                                    keys: try header.keys(passphrase: passcode("phrase")))
                try writer.append(Array(body.prefix((round + 1) * Self.chunk)))
            }
            #expect(try descriptors(of: name) == 0, "the sealer of a dropped writer still holds the archive")
            do {
                let archive = try FileDescriptor.open(path: path, [.readOnly])
                defer { archive.close() }
                let (reader, _) = try BackupStreamReader.open(file: archive, passphrase: passcode("phrase")) { (_) throws(BackupError) in
                    { () throws(BackupError) in }
                }
                #expect(try reader.read(round * 1000 + 1).allSatisfy { $0 == 0xA5 })
            }
            #expect(try descriptors(of: path) == 0, "the opener of a dropped reader still holds the archive")
        }
    }

    /// How many of this process's descriptors are open on `path` (other tests run beside
    /// this one, so a count of all descriptors would not do).
    private func descriptors(of path: String) throws -> Int {
        let fds = try FileDescriptor.open(path: "/proc/self/fd", [.readOnly, .directory])
        defer { fds.close() }
        return try fds.entryNames().filter { name in
            var target = [UInt8](repeating: 0, count: 4096)
            let n = readlinkat(fds.rawValue, name, &target, target.count)
            return n > 0 && String(decoding: target.prefix(n), as: UTF8.self) == path
        }.count
    }

    /// An entry's xattrs as an archive holds them: a count, then each name and value.
    static func extendedAttributes(_ attributes: [(name: String, valueBytes: Int)]) -> [UInt8] {
        var out: [UInt8] = []
        out.appendLittleEndian(UInt16(attributes.count))
        for (name, valueBytes) in attributes {
            out.appendLittleEndian(UInt16(name.utf8.count))
            out += Array(name.utf8)
            out.appendLittleEndian(UInt32(valueBytes))
            out += [UInt8](repeating: 0x61, count: valueBytes)
        }
        return out
    }

    func readExtendedAttributes(_ attributes: [(name: String, valueBytes: Int)]) throws -> Int {
        let body = Self.extendedAttributes(attributes)
        let path = try writeArchive(body, named: "xattrs")
        defer { unlink(path) }
        let file = try FileDescriptor.open(path: path, [.readOnly])
        defer { file.close() }
        let (reader, _) = try BackupStreamReader.open(file: file, passphrase: passcode("phrase")) { (_) throws(BackupError) in
            { () throws(BackupError) in }
        }
        return try reader.readExtendedAttributes().count
    }

    /// A crafted entry may not make a restore hold more than a file's xattrs can be: one value
    /// past 64 KiB, names past the kernel's 64 KiB list, or more than 16 MiB of values.
    @Test func extendedAttributesPastWhatAFileCanHoldAreDamage() throws {
        #expect(try readExtendedAttributes([("user.a", 65536), ("user.b", 3)]) == 2)
        let damaged = BackupError.damaged("an entry's extended attributes are larger than any file's can be")
        #expect(throws: damaged) { try readExtendedAttributes([("user.a", 65537)]) }
        let manyNames = (0..<4000).map { (name: "user.name-number-\($0)", valueBytes: 0) }
        #expect(throws: damaged) { try readExtendedAttributes(manyNames) }
        let manyValues = (0..<257).map { (name: "user.v\($0)", valueBytes: 65536) }
        #expect(throws: damaged) { try readExtendedAttributes(manyValues) }
    }
}
