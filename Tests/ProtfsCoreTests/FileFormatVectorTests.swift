import Foundation
import Testing
@testable import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

/// Known-answer vectors for regular files (docs/FORMAT.md, "Regular files"), made once with
/// the fixed test keys in `Vectors/file-v1/keys.json`. They pin the header layout, the slot
/// MAC, both wrap kinds, the chunk associated data and the hole rule: if this fails, the
/// format changed by accident, and every existing vault would stop reading.
@Suite struct FileFormatVectorTests {
    static let folder = Bundle.module.url(forResource: "Vectors", withExtension: nil)!.appendingPathComponent("file-v1")

    let keys: ContentTestKeys
    let plaintext: [UInt8]
    let directory: ContentTestDirectory

    init() throws {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.folder.appendingPathComponent("keys.json"))) as! [String: String]
        func key(_ name: String) throws -> SymmetricKey {
            var bytes = Self.hex(json[name]!)
            defer { secureZero(&bytes) }
            return try bytes.withUnsafeBytes { try SymmetricKey.copying($0) }
        }
        var classKeys: [ProtectionClass: SymmetricKey] = [:]
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

    func open(_ vector: String) throws -> EncryptedFile {
        try directory.setBackingBytes(vector, Self.vector(vector))
        return try EncryptedFile.open(vector, in: directory.descriptor, keyring: keys.keyring)
    }

    @Test func classKeyWrapInSlotZero() throws {
        let file = try open("complete.pfsf")
        #expect(file.fileID.description == "c3daba86308a64931590d499b57f5b02")
        #expect(file.protectionClass == .complete)
        #expect(file.header.generation == 1 && file.header.activeSlotIndex == 0)
        #expect(try file.size() == Int64(plaintext.count))
        #expect(try file.readAll() == plaintext)
        let backing = try Self.vector("complete.pfsf")
        #expect(Int64(backing.count) == ContentLayout.backingSize(plaintextSize: Int64(plaintext.count)))
        // Chunk 1 is stored as a hole.
        #expect(backing[328 + 4136 ..< 328 + 2 * 4136].allSatisfy { $0 == 0 })
        #expect(backing[176...327].allSatisfy { $0 == 0 })
    }

    @Test func ephemeralX25519WrapInSlotOneAfterReclass() throws {
        let file = try open("completeUnlessOpen.pfsf")
        #expect(file.fileID.description == "fc2d4c8c4c81469a8ccf9a3497a3e5d6")
        #expect(file.protectionClass == .completeUnlessOpen)
        #expect(file.header.generation == 2 && file.header.activeSlotIndex == 1)
        #expect(try file.readAll() == plaintext)
        #expect(try Self.vector("completeUnlessOpen.pfsf")[24..<176].allSatisfy { $0 == 0 })
    }

    @Test func vectorsNeedTheirOwnKeys() throws {
        try directory.setBackingBytes("complete.pfsf", Self.vector("complete.pfsf"))
        #expect(throws: Errno.io) { try EncryptedFile.open("complete.pfsf", in: directory.descriptor, keyring: ContentTestKeys().keyring) }
    }
}
