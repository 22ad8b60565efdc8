import Testing
@testable import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

@Suite struct DirectoryMetadataTests {
    let keys = FilesystemKeys(filesystemKey: .random())
    let vaultID = ObjectID.random()

    @Test func roundTripAndLayout() throws {
        let metadata = DirectoryMetadata.new(protectionClass: .completeUnlessOpen)
        let bytes = metadata.encoded(vaultID: vaultID, keys: keys)
        #expect(bytes.count == 64)
        #expect(Array(bytes[0..<8]) == Array("PROTFSDR".utf8))
        #expect(bytes[8] == 1 && bytes[9] == 0 && bytes[10] == 2)
        #expect(Array(bytes[16..<32]) == metadata.directoryID.bytes)
        #expect(try DirectoryMetadata.decode(bytes, vaultID: vaultID, keys: keys) == metadata)
    }

    @Test func everyBitFlipIsEIO() {
        let bytes = DirectoryMetadata.new(protectionClass: .none).encoded(vaultID: vaultID, keys: keys)
        for bit in stride(from: 0, to: 64 * 8, by: 7) {
            var tampered = bytes
            tampered[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(throws: Errno.io) { try DirectoryMetadata.decode(tampered, vaultID: vaultID, keys: keys) }
        }
        #expect(throws: Errno.io) { try DirectoryMetadata.decode(Array(bytes[0..<63]), vaultID: vaultID, keys: keys) }
        #expect(throws: Errno.io) { try DirectoryMetadata.decode(bytes, vaultID: .random(), keys: keys) }
    }

    @Test func createReadAndReplaceInADirectory() throws {
        let dir = TemporaryDirectory()
        let fd = try dir.openDirectory()
        defer { fd.close() }
        let metadata = DirectoryMetadata.new(protectionClass: .complete)
        try metadata.create(in: fd, vaultID: vaultID, keys: keys)
        #expect(throws: Errno.exists) { try metadata.create(in: fd, vaultID: vaultID, keys: keys) }
        #expect(try DirectoryMetadata.read(in: fd, vaultID: vaultID, keys: keys) == metadata)
        let reclassed = metadata.withClass(.none)
        try reclassed.replace(in: fd, vaultID: vaultID, keys: keys)
        #expect(try DirectoryMetadata.read(in: fd, vaultID: vaultID, keys: keys) == reclassed)
        #expect(try fd.entryNames() == ["protfs.dir"])
        try dir.write([1, 2, 3], to: "protfs.dir")
        #expect(throws: Errno.io) { try DirectoryMetadata.read(in: fd, vaultID: vaultID, keys: keys) }
        try fd.removeFile("protfs.dir")
        #expect(throws: Errno.noEntry) { try DirectoryMetadata.read(in: fd, vaultID: vaultID, keys: keys) }
    }
}
