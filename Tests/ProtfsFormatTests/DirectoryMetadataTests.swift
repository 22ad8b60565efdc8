import ProtfsDomain
import Testing
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem
import ProtfsTestSupport

@Suite struct DirectoryMetadataTests {
    let keys = FilesystemKeys(filesystemKey: .random())
    let vaultID = ObjectID.random()

    @Test func roundTripAndLayout() throws {
        let metadata = DirectoryMetadata.new(protectionClass: .completeUnlessOpen)
        let bytes = metadata.encoded(vaultID: vaultID, keys: keys)
        #expect(bytes.count == 96)
        #expect(Array(bytes[0..<8]) == Array("PROTFSDR".utf8))
        #expect(bytes[8] == 2 && bytes[9..<16].allSatisfy { $0 == 0 })
        #expect(Array(bytes[16..<32]) == metadata.directoryID.bytes)
        let classBlock = XChaCha20.xor(Array(bytes[56..<64]), nonce: Array(bytes[32..<56]), key: keys.directoryClass)
        #expect(classBlock == [2, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(bytes[64...]) == BLAKE2b.mac(key: keys.directoryMetadata, outputByteCount: 32, vaultID.bytes, Array(bytes[0..<64])))
        #expect(try DirectoryMetadata.decode(bytes, vaultID: vaultID, keys: keys) == metadata)
    }

    @Test func formatOneIsReadAndUpgradedByAReclass() throws {
        var bytes = Array("PROTFSDR".utf8) + [1, 0, 4, 0, 0, 0, 0, 0]
        let directoryID = ObjectID.random()
        bytes += directoryID.bytes
        bytes += BLAKE2b.mac(key: keys.directoryMetadata, outputByteCount: 32, vaultID.bytes, bytes)
        let metadata = try DirectoryMetadata.decode(bytes, vaultID: vaultID, keys: keys)
        #expect(metadata.directoryID == directoryID && metadata.protectionClass == .none)
        #expect(metadata.encoded(vaultID: vaultID, keys: keys) == bytes, "read in format 1, written back unchanged")
        let reclassed = metadata.withClass(.complete).encoded(vaultID: vaultID, keys: keys)
        #expect(reclassed.count == 96 && reclassed[8] == 2)
        #expect(try DirectoryMetadata.decode(reclassed, vaultID: vaultID, keys: keys).directoryID == directoryID)
    }

    /// Records of one directory in every class look alike: the class sits under a fresh
    /// nonce at each write. Format 1 fails this, which shows the check can fail.
    @Test func theClassIsHiddenFromTheBackingBytes() {
        let directory = DirectoryMetadata.new(protectionClass: .none)
        func classDependentOffsets(_ record: (ProtectionClass) -> DirectoryMetadata) -> [Int] {
            tellingOffsets(ProtectionClass.allCases.map { protectionClass in
                (0..<24).map { _ in record(protectionClass).encoded(vaultID: vaultID, keys: keys) }
            })
        }
        #expect(classDependentOffsets { directory.withClass($0) } == [])
        let formatOne = classDependentOffsets {
            DirectoryMetadata(directoryID: directory.directoryID, protectionClass: $0, classNonce: nil)
        }
        #expect(formatOne.contains(10), "format 1 stored the class in the clear")
    }

    @Test(arguments: [DirectoryMetadata.Layout.v1, .v2])
    func everyBitFlipIsEIO(_ layout: DirectoryMetadata.Layout) {
        let metadata = DirectoryMetadata(directoryID: .random(), protectionClass: .none,
                                         classNonce: layout.version == 1 ? nil : SecureRandom.bytes(24))
        let bytes = metadata.encoded(vaultID: vaultID, keys: keys)
        #expect(bytes.count == layout.byteCount)
        for bit in stride(from: 0, to: layout.byteCount * 8, by: 7) {
            var tampered = bytes
            tampered[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(throws: Errno.io) { try DirectoryMetadata.decode(tampered, vaultID: vaultID, keys: keys) }
        }
        #expect(throws: Errno.io) { try DirectoryMetadata.decode(Array(bytes.dropLast()), vaultID: vaultID, keys: keys) }
        #expect(throws: Errno.io) { try DirectoryMetadata.decode(bytes + [0], vaultID: vaultID, keys: keys) }
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
