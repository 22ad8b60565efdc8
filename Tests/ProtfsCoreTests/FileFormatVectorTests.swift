import Foundation
import ProtfsDomain
import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// Known-answer vectors for regular files (docs/FORMAT.md, "Regular files"), made once with
/// the fixed test keys in `Vectors/file-v1/keys.json`: `file-v1` by the first builds (the
/// class in the clear), `file-v2` by the current format (the class hidden). They pin the
/// header layout, the slot MAC, both wrap kinds, the chunk associated data and the hole
/// rule: if this fails, the format changed by accident, and existing vaults would stop
/// reading. Each format's folder is kept for good: a build reads every format it ever wrote.
@Suite struct FileFormatVectorTests {
    static let vectors = Bundle.module.url(forResource: "Vectors", withExtension: nil)!
    /// The test keys and the plaintext, shared by every format.
    static let folder = vectors.appendingPathComponent("file-v1")

    /// One format's pair of files and what is known of them.
    struct Format: Sendable, CustomTestStringConvertible {
        let version: UInt16
        let completeFileID: String
        let classBFileID: String
        /// The slot each file's key is in (format 2 picks a new file's at random).
        let completeSlot: Int
        let classBSlot: Int
        var folder: URL { FileFormatVectorTests.vectors.appendingPathComponent("file-v\(version)") }
        var testDescription: String { "format \(version)" }
    }
    static let formats = [
        Format(version: 1, completeFileID: "c3daba86308a64931590d499b57f5b02", classBFileID: "fc2d4c8c4c81469a8ccf9a3497a3e5d6",
               completeSlot: 0, classBSlot: 1),
        Format(version: 2, completeFileID: "2d13ec235fd61e89f65412e597708bbd", classBFileID: "0eef83e42713f368af2695fe732f87bf",
               completeSlot: 1, classBSlot: 1),
    ]

    let keys: ContentTestKeys
    let plaintext: [UInt8]
    let directory: ContentTestDirectory

    init() throws {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.folder.appendingPathComponent("keys.json"))) as! [String: String]
        func key(_ name: String) throws -> LockedKey {
            var bytes = Self.hex(json[name]!)
            defer { secureZero(&bytes) }
            return try bytes.withUnsafeBytes { try LockedKey.copying($0) }
        }
        var classKeys: [ProtectionClass: LockedKey] = [:]
        for protectionClass in ProtectionClass.allCases { classKeys[protectionClass] = try key(protectionClass.name) }
        keys = ContentTestKeys(vaultID: ObjectID(bytes: Self.hex(json["vaultID"]!))!, deviceKey: try key("deviceKey"), classKeys: classKeys)
        plaintext = try Self.vector("plaintext.bin")
        directory = try ContentTestDirectory()
    }

    static func vector(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: folder.appendingPathComponent(name))) }

    static func hex(_ string: String) -> [UInt8] {
        var out: [UInt8] = []
        var digits = string.makeIterator()
        while let high = digits.next(), let low = digits.next() { out.append(UInt8(String([high, low]), radix: 16)!) }
        return out
    }

    func open(_ vector: String, _ format: Format) throws -> EncryptedFile {
        try directory.setBackingBytes(vector, Self.vector(vector, format))
        return try EncryptedFile.open(vector, in: directory.descriptor, keyring: keys.keyring)
    }

    static func vector(_ name: String, _ format: Format) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: format.folder.appendingPathComponent(name)))
    }

    @Test(arguments: formats)
    func classKeyWrapInSlotZero(_ format: Format) throws {
        let file = try open("complete.pfsf", format)
        #expect(file.fileID.description == format.completeFileID)
        #expect(file.header.version == format.version)
        #expect(file.protectionClass == .complete)
        #expect(file.header.generation == 1 && file.header.activeSlotIndex == format.completeSlot)
        #expect(try file.size() == Int64(plaintext.count))
        #expect(try file.readAll() == plaintext)
        let backing = try Self.vector("complete.pfsf", format)
        #expect(Int64(backing.count) == ContentLayout.backingSize(plaintextSize: Int64(plaintext.count)))
        // Chunk 1 is stored as a hole.
        #expect(backing[328 + 4136 ..< 328 + 2 * 4136].allSatisfy { $0 == 0 })
        // The unused slot: zeros in format 1, random bytes in format 2.
        let unused = 24 + (1 - format.completeSlot) * 152
        #expect(backing[unused ..< unused + 152].allSatisfy { $0 == 0 } == (format.version == 1))
    }

    @Test(arguments: formats)
    func ephemeralX25519WrapInSlotOneAfterReclass(_ format: Format) throws {
        let file = try open("completeUnlessOpen.pfsf", format)
        #expect(file.fileID.description == format.classBFileID)
        #expect(file.header.version == format.version)
        #expect(file.protectionClass == .completeUnlessOpen)
        #expect(file.header.generation == 2 && file.header.activeSlotIndex == format.classBSlot)
        #expect(try file.readAll() == plaintext)
        let superseded = 24 + (1 - format.classBSlot) * 152
        #expect(try Self.vector("completeUnlessOpen.pfsf", format)[superseded ..< superseded + 152].allSatisfy { $0 == 0 } == (format.version == 1))
    }

    @Test(arguments: formats)
    func vectorsNeedTheirOwnKeys(_ format: Format) throws {
        try directory.setBackingBytes("complete.pfsf", Self.vector("complete.pfsf", format))
        #expect(throws: Errno.io) { try EncryptedFile.open("complete.pfsf", in: directory.descriptor, keyring: ContentTestKeys().keyring) }
    }
}
