import Testing
@testable import ProtfsCore
import ProtfsCrypto
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
        let header = BackupArchiveHeader(kdf: .interactive)
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
}
