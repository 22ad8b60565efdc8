import ProtfsDomain
import ProtfsTestSupport
import Testing
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// Every way of damaging or swapping backing bytes that docs/FORMAT.md promises to detect
/// ends as `EIO` on content access.
@Suite struct EncryptedFileTamperTests {
    let keys = ContentTestKeys()
    let directory: ContentTestDirectory
    var keyring: ClassKeyring { keys.keyring }
    /// Three full chunks and a partial fourth.
    let contents: [UInt8]

    init() throws {
        directory = try ContentTestDirectory()
        var generator = SeededGenerator(seed: 42)
        contents = randomBytes(3 * 4096 + 1000, using: &generator)
        try makeFile("f")
    }

    func makeFile(_ name: String, keyring: ClassKeyring? = nil) throws {
        let file = try EncryptedFile.create(in: directory.descriptor, name: name, mode: 0o600, protectionClass: .complete,
                                            keyring: keyring ?? self.keyring)
        try file.write(contents, at: 0)
    }

    func reopen(_ name: String = "f") throws -> EncryptedFile {
        try EncryptedFile.open(name, in: directory.descriptor, keyring: keyring)
    }

    func chunkOffset(_ index: Int64) -> Int64 { ContentLayout.backingOffset(ofChunk: index) }

    /// Reading chunk 1 fails, as does any read that touches it, as a whole; chunk 0 still reads.
    func expectChunkOneDamaged(_ comment: Comment? = nil) throws {
        let file = try reopen()
        #expect(throws: Errno.io, comment) { try file.read(count: 10, at: 4096 + 5) }
        #expect(throws: Errno.io, comment) { try file.readAll() }
        #expect(throws: Errno.io, comment) { try file.read(count: 2, at: 4095) }
        #expect(try file.read(count: 4096, at: 0) == Array(contents[0..<4096]), comment)
        #expect(throws: Errno.io, comment) { try file.write([1], at: 4096 + 7) }
        #expect(throws: Errno.io, comment) { try file.truncate(to: 4096 + 9) }
    }

    @Test func failedReadZeroesTheBufferAndIsNeverShort() throws {
        try directory.flipBit("f", at: chunkOffset(2) + 100)
        let file = try reopen()
        var buffer = [UInt8](repeating: 0xEE, count: contents.count)
        let result = buffer.withUnsafeMutableBytes { b in Result { () throws(Errno) in try file.read(into: b, at: 0) } }
        #expect(result == .failure(.io))
        #expect(buffer.allSatisfy { $0 == 0 })
    }

    @Test func flippedBitsInAChunk() throws {
        for (what, offset) in [("nonce", 3), ("ciphertext", 24 + 2000), ("tag", 4135)] {
            let original = try directory.backingBytes("f")
            try directory.flipBit("f", at: chunkOffset(1) + Int64(offset), bit: 3)
            try expectChunkOneDamaged("\(what)")
            try directory.setBackingBytes("f", original)
        }
    }

    @Test func damagedChunkIsNotOverwrittenByAPartialWrite() throws {
        try directory.flipBit("f", at: chunkOffset(1) + 50)
        let before = try directory.backingBytes("f")
        #expect(throws: Errno.io) { try reopen().write([1, 2], at: 4096 + 100) }
        #expect(try directory.backingBytes("f") == before)
        // A write that covers the whole chunk does not need the old contents.
        try reopen().write([UInt8](repeating: 3, count: 4096), at: 4096)
        #expect(try reopen().read(count: 4096, at: 4096) == [UInt8](repeating: 3, count: 4096))
    }

    @Test func chunkMovedToAnotherIndex() throws {
        let bytes = try directory.backingBytes("f")
        let zero = Array(bytes[Int(chunkOffset(0)) ..< Int(chunkOffset(1))])
        let one = Array(bytes[Int(chunkOffset(1)) ..< Int(chunkOffset(2))])
        try directory.patchBacking("f", at: chunkOffset(0), one)
        try directory.patchBacking("f", at: chunkOffset(1), zero)
        let file = try reopen()
        #expect(throws: Errno.io) { try file.read(count: 1, at: 0) }
        #expect(throws: Errno.io) { try file.read(count: 1, at: 4096) }
        #expect(try file.read(count: 1, at: 2 * 4096) == [contents[2 * 4096]])
    }

    @Test func chunkCopiedFromAnotherFileAtTheSameIndex() throws {
        try makeFile("g")
        let other = try directory.backingBytes("g")
        try directory.patchBacking("f", at: chunkOffset(1), Array(other[Int(chunkOffset(1)) ..< Int(chunkOffset(2))]))
        try expectChunkOneDamaged()
    }

    @Test func headerFromAnotherFileOfTheSameVault() throws {
        try makeFile("g")
        let other = try directory.backingBytes("g")
        try directory.patchBacking("f", at: 0, Array(other[0..<328]))
        let file = try reopen()
        #expect(throws: Errno.io) { try file.read(count: 1, at: 0) }
        #expect(throws: Errno.io) { try file.read(count: 1, at: 3 * 4096) }
    }

    @Test func headerFromAnotherVault() throws {
        let otherVault = ContentTestKeys()
        try makeFile("g", keyring: otherVault.keyring)
        let other = try directory.backingBytes("g")
        try directory.patchBacking("f", at: 0, Array(other[0..<328]))
        #expect(throws: Errno.io) { try reopen() }
        // Same device key, another vault id.
        let sameDevice = ClassKeyring(vaultID: .random(), deviceKeys: keyring.deviceKeys, classBPublicKey: keyring.classBPublicKey,
                                      contentAEAD: keyring.contentAEAD)
        sameDevice.install(keys.classKeys[.complete]!, for: .complete)
        #expect(throws: Errno.io) { try EncryptedFile.open("g", in: directory.descriptor, keyring: sameDevice) }
    }

    @Test func flippedHeaderBits() throws {
        // The prefix, and the slot in force (the other holds no key).
        let active = Int64(24 + (try reopen().header.activeSlotIndex) * 152)
        for offset: Int64 in [0, 5, 8, 23] + [0, 8, 9, 50, 130].map({ active + $0 }) {
            let original = try directory.backingBytes("f")
            try directory.flipBit("f", at: offset, bit: 1)
            #expect(throws: Errno.io, "byte \(offset)") { try reopen() }
            try directory.setBackingBytes("f", original)
        }
        #expect(try reopen().readAll() == contents)
    }

    /// The class byte is stored under a stream (format 2): writing `none`'s value over it
    /// changed nothing once in 256 files. Changing it by the difference of the two classes
    /// makes it read `none` whatever the stream.
    @Test func headerClassChangedWithoutTheMAC() throws {
        let active = Int64(24 + (try reopen().header.activeSlotIndex) * 152)
        let stored = try directory.backingBytes("f")[Int(active) + 8]
        let difference = ProtectionClass.complete.rawValue ^ ProtectionClass.none.rawValue
        try directory.patchBacking("f", at: active + 8, [stored ^ difference])
        #expect(throws: Errno.io) { try reopen() }
    }

    @Test func shortOrEmptyBackingFile() throws {
        try directory.truncateBacking("f", to: 200)
        #expect(throws: Errno.io) { try reopen() }
        try directory.truncateBacking("f", to: 0)
        #expect(throws: Errno.io) { try reopen() }
    }

    @Test func fileCutAtAChunkBoundary() throws {
        // The partial last chunk removed: chunk 2 was not sealed as the last one.
        try directory.truncateBacking("f", to: chunkOffset(3))
        let file = try reopen()
        #expect(try file.size() == 3 * 4096)
        #expect(throws: Errno.io) { try file.read(count: 10, at: 2 * 4096) }
        #expect(try file.read(count: 10, at: 4096) == Array(contents[4096 ..< 4106]))
    }

    @Test func fileCutMidChunk() throws {
        try directory.truncateBacking("f", to: chunkOffset(3) + 20)
        let file = try reopen()
        #expect(try file.size() == 3 * 4096)
        #expect(throws: Errno.io) { try file.read(count: 1, at: 0) }
        try directory.truncateBacking("f", to: chunkOffset(3) + 500)
        #expect(throws: Errno.io) { try reopen().read(count: 10, at: 3 * 4096) }
    }

    @Test func zeroedChunkIsAHoleAsDocumented() throws {
        try directory.patchBacking("f", at: chunkOffset(1), [UInt8](repeating: 0, count: 4136))
        #expect(try reopen().read(count: 4096, at: 4096) == [UInt8](repeating: 0, count: 4096))
    }
}
