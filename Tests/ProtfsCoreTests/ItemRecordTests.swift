import Foundation
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem
import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat

/// FORMAT.md "Keychain items": the known answers of `Vectors/items-v1` (computed from the
/// document by `make-vectors.py`, independently of this code) open here, and every way of
/// moving or changing a record is refused as damage.
@Suite struct ItemRecordTests {
    struct Vectors: Decodable {
        struct Item: Decodable {
            let owner: UInt32
            let accessibility, service, account, label, description, comment, generic, secret, recordName, record: String
            let created, modified: Int64
        }
        let filesystemKey, deviceKey, vaultID: String
        let classKeys: [String: String]
        let items: [Item]
    }

    let vectors: Vectors
    let keys: FilesystemKeys
    let keyring: ClassKeyring

    init() throws {
        let folder = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: folder.appendingPathComponent("items-v1/items-v1.json")))
        keys = try filesystemKeys(hex: vectors.filesystemKey)
        keyring = try Self.keyring(vectors, deviceKeyHex: vectors.deviceKey)
    }

    static func key(_ hex: String) throws -> LockedKey {
        try #require(hexBytes(hex)).withUnsafeBytes { try LockedKey.copying($0) }
    }

    static func keyring(_ vectors: Vectors, deviceKeyHex: String) throws -> ClassKeyring {
        let keyring = ClassKeyring(vaultID: try ObjectID(hex: vectors.vaultID), deviceKeys: DeviceKeys(deviceKey: try key(deviceKeyHex)),
                                   classBPublicKey: [], contentAEAD: .xchacha20Poly1305)
        for (id, hex) in vectors.classKeys {
            let classID = try #require(UInt8(id))
            keyring.install(try key(hex), for: try #require(ProtectionClass(rawValue: classID)))
        }
        return keyring
    }

    @Test func theKnownAnswersOpen() throws {
        #expect(Set(vectors.items.map(\.accessibility)).count == vectors.items.count)
        for vector in vectors.items {
            let accessibility = try #require(ItemAccessibility(spelling: vector.accessibility))
            let identity = ItemIdentity(owner: vector.owner, service: vector.service, account: vector.account)
            #expect(identity.recordName(keys: keys) == vector.recordName)
            let record = try ItemRecord(parsing: try #require(hexBytes(vector.record)))
            #expect(record.bytes == hexBytes(vector.record))
            let metadata = try record.openMetadata(recordName: vector.recordName, vaultID: keyring.vaultID, keys: keys)
            #expect(metadata == ItemMetadata(owner: vector.owner, attributes: ItemAttributes(
                service: vector.service, account: vector.account, label: vector.label, description: vector.description,
                comment: vector.comment, generic: try #require(hexBytes(vector.generic)), accessibility: accessibility,
                created: vector.created, modified: vector.modified)))
            let secret = try record.openSecret(accessibility: accessibility, recordName: vector.recordName, keyring: keyring)
            #expect(secret.withUnsafeBytes { Array($0) } == hexBytes(vector.secret))
        }
    }

    @Test func thisDeviceOnlyNeedsTheDeviceKeyAndTheOthersDoNot() throws {
        let elsewhere = try Self.keyring(vectors, deviceKeyHex: String(repeating: "ab", count: 32))
        for vector in vectors.items {
            let accessibility = try #require(ItemAccessibility(spelling: vector.accessibility))
            let record = try ItemRecord(parsing: try #require(hexBytes(vector.record)))
            let opened = Result { () throws(Errno) in
                try record.openSecret(accessibility: accessibility, recordName: vector.recordName, keyring: elsewhere)
            }
            if accessibility.isThisDeviceOnly {
                #expect(throws: Errno.io) { try opened.get() }
            } else {
                #expect(try opened.get().withUnsafeBytes { Array($0) } == hexBytes(vector.secret))
            }
        }
    }

    @Test func withoutTheClassKeyTheSecretIsRefusedButTheAttributesOpen() throws {
        let vector = vectors.items[0]
        let record = try ItemRecord(parsing: try #require(hexBytes(vector.record)))
        keyring.remove([.complete])
        #expect(throws: Errno.permissionDenied) {
            try record.openSecret(accessibility: .whenUnlocked, recordName: vector.recordName, keyring: keyring)
        }
        #expect(try record.openMetadata(recordName: vector.recordName, vaultID: keyring.vaultID, keys: keys).owner == 1000)
    }

    @Test func aRecordElsewhereIsDamage() throws {
        let first = vectors.items[0], other = vectors.items[3]
        let record = try ItemRecord(parsing: try #require(hexBytes(first.record)))
        // Under another item's name (same owner and service, another account), in another
        // vault, or read with another accessibility.
        #expect(throws: Errno.io) { try record.openMetadata(recordName: other.recordName, vaultID: keyring.vaultID, keys: keys) }
        #expect(throws: Errno.io) { try record.openMetadata(recordName: first.recordName, vaultID: .random(), keys: keys) }
        #expect(throws: Errno.io) { try record.openMetadata(recordName: first.recordName, vaultID: keyring.vaultID, keys: randomFilesystemKeys()) }
        #expect(throws: Errno.io) {
            try record.openSecret(accessibility: .whenUnlockedThisDeviceOnly, recordName: first.recordName, keyring: keyring)
        }
        #expect(throws: Errno.io) { try record.openSecret(accessibility: .whenUnlocked, recordName: other.recordName, keyring: keyring) }
    }

    @Test func everyByteFlipAndTruncationIsDamage() throws {
        let vector = vectors.items[2]
        let bytes = try #require(hexBytes(vector.record))
        let accessibility = try #require(ItemAccessibility(spelling: vector.accessibility))
        func opens(_ candidate: [UInt8]) -> Bool {
            guard let record = try? ItemRecord(parsing: candidate),
                  let metadata = try? record.openMetadata(recordName: vector.recordName, vaultID: keyring.vaultID, keys: keys),
                  (try? record.openSecret(accessibility: metadata.attributes.accessibility, recordName: vector.recordName,
                                          keyring: keyring)) != nil else { return false }
            return true
        }
        #expect(opens(bytes))
        #expect(accessibility == .afterFirstUnlockThisDeviceOnly)
        for offset in bytes.indices {
            var flipped = bytes
            flipped[offset] ^= 0x01
            #expect(!opens(flipped), "a flip at byte \(offset) went unnoticed")
        }
        for length in [0, 8, 31, 32, 100, bytes.count - 1] { #expect(!opens(Array(bytes.prefix(length)))) }
        #expect(!opens(bytes + [0]))
    }

    @Test func aSealedRecordRoundTripsAndAMetadataChangeKeepsTheSecret() throws {
        let identity = ItemIdentity(owner: 42, service: "svc", account: "acct")
        let name = identity.recordName(keys: keys)
        let metadata = ItemMetadata(owner: 42, attributes: ItemAttributes(service: "svc", account: "acct", label: "L",
                                                                          accessibility: .alwaysThisDeviceOnly))
        let secret = Array("\u{0}binary\n".utf8)
        let record = try ItemRecord.seal(metadata, secret: secret.withUnsafeBytes { SecureBuffer(copying: $0) }, itemID: .random(),
                                         recordName: name, keyring: keyring, keys: keys)
        let reread = try ItemRecord(parsing: record.bytes)
        #expect(try reread.openMetadata(recordName: name, vaultID: keyring.vaultID, keys: keys) == metadata)
        var relabelled = metadata
        relabelled.attributes.label = "M"
        let changed = reread.replacingMetadata(relabelled, recordName: name, vaultID: keyring.vaultID, keys: keys)
        #expect(try changed.openMetadata(recordName: name, vaultID: keyring.vaultID, keys: keys).attributes.label == "M")
        #expect(try changed.openSecret(accessibility: .alwaysThisDeviceOnly, recordName: name, keyring: keyring)
            .withUnsafeBytes { Array($0) } == secret)
    }

    struct VersionTwoVectors: Decodable {
        struct Item: Decodable {
            let owner: UInt32
            let accessibility, service, account, label, contentType, secret, recordName, record: String
            let attributes: [String: String]
            let created, modified: Int64
        }
        let filesystemKey, deviceKey, vaultID: String
        let classKeys: [String: String]
        let items: [Item]
    }

    /// `Vectors/items-v2`: records with lookup attributes and a content type open, byte-exact.
    @Test func theVersionTwoKnownAnswersOpen() throws {
        let folder = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        let data = try Data(contentsOf: folder.appendingPathComponent("items-v2/items-v2.json"))
        let two = try JSONDecoder().decode(VersionTwoVectors.self, from: data)
        let keys = try filesystemKeys(hex: two.filesystemKey)
        let keyring = ClassKeyring(vaultID: try ObjectID(hex: two.vaultID), deviceKeys: DeviceKeys(deviceKey: try Self.key(two.deviceKey)),
                                   classBPublicKey: [], contentAEAD: .xchacha20Poly1305)
        for (id, hex) in two.classKeys {
            let classID = try #require(UInt8(id))
            keyring.install(try Self.key(hex), for: try #require(ProtectionClass(rawValue: classID)))
        }
        for vector in two.items {
            let accessibility = try #require(ItemAccessibility(spelling: vector.accessibility))
            let record = try ItemRecord(parsing: try #require(hexBytes(vector.record)))
            #expect(record.version == 2 && record.bytes == hexBytes(vector.record))
            let metadata = try record.openMetadata(recordName: vector.recordName, vaultID: keyring.vaultID, keys: keys)
            #expect(metadata == ItemMetadata(owner: vector.owner, attributes: ItemAttributes(
                service: vector.service, account: vector.account, label: vector.label, accessibility: accessibility,
                created: vector.created, modified: vector.modified, lookupAttributes: vector.attributes,
                contentType: vector.contentType)))
            #expect(try record.openSecret(accessibility: accessibility, recordName: vector.recordName, keyring: keyring)
                .withUnsafeBytes { Array($0) } == hexBytes(vector.secret))
        }
    }

    /// A version 1 record takes new attributes in place while they fit version 1 (no class
    /// key needed), and only a full re-seal, which makes version 2, gives it lookup attributes.
    @Test func aVersionOneRecordStaysVersionOneUntilItNeedsLookupAttributes() throws {
        let vector = vectors.items[0]
        let accessibility = try #require(ItemAccessibility(spelling: vector.accessibility))
        let record = try ItemRecord(parsing: try #require(hexBytes(vector.record)))
        #expect(record.version == 1)
        var metadata = try record.openMetadata(recordName: vector.recordName, vaultID: keyring.vaultID, keys: keys)
        metadata.attributes.label = "relabelled"
        #expect(record.canReplaceMetadata(with: metadata, accessibility: accessibility))
        let relabelled = record.replacingMetadata(metadata, recordName: vector.recordName, vaultID: keyring.vaultID, keys: keys)
        #expect(relabelled.version == 1)
        #expect(try relabelled.openMetadata(recordName: vector.recordName, vaultID: keyring.vaultID, keys: keys) == metadata)
        #expect(try relabelled.openSecret(accessibility: accessibility, recordName: vector.recordName, keyring: keyring)
            .withUnsafeBytes { Array($0) } == hexBytes(vector.secret))
        metadata.attributes.lookupAttributes = ["user": "alice"]
        #expect(!record.canReplaceMetadata(with: metadata, accessibility: accessibility))
        let secret = try record.openSecret(accessibility: accessibility, recordName: vector.recordName, keyring: keyring)
        let upgraded = try ItemRecord.seal(metadata, secret: secret, itemID: record.itemID, recordName: vector.recordName,
                                           keyring: keyring, keys: keys)
        #expect(upgraded.version == 2)
        #expect(try ItemRecord(parsing: upgraded.bytes).openMetadata(recordName: vector.recordName, vaultID: keyring.vaultID,
                                                                    keys: keys) == metadata)
    }

    /// Lookup attributes must be in ascending order without repeats: one encoding only.
    @Test func versionTwoAttributesHaveOneEncoding() {
        let metadata = ItemMetadata(owner: 1, attributes: ItemAttributes(service: "s", account: "a",
                                                                         lookupAttributes: ["b": "2", "a": "1"], contentType: "text/plain"))
        let bytes = metadata.bytes(version: 2)
        #expect(ItemMetadata(parsing: bytes, version: 2) == metadata)
        #expect(ItemMetadata(parsing: bytes, version: 1) == nil)
        var swapped = bytes
        let pairs = Array(bytes.suffix(12))  // two pairs of one-byte names and values, 6 bytes each
        swapped.replaceSubrange((bytes.count - 12)..., with: Array(pairs[6...]) + Array(pairs[..<6]))
        #expect(ItemMetadata(parsing: swapped, version: 2) == nil)
        #expect(ItemMetadata(parsing: bytes + [0], version: 2) == nil)
    }

    @Test func everyAccessibilityHasItsClassAndSpellings() {
        #expect(ItemAccessibility.allCases.map(\.protectionClass) == [.complete, .completeUntilFirstUserAuthentication, .none,
                                                                    .complete, .complete, .completeUntilFirstUserAuthentication, .none])
        #expect(ItemAccessibility(spelling: "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly") == .whenPasscodeSetThisDeviceOnly)
        #expect(ItemAccessibility(spelling: "kSecAttrAccessibleAfterFirstUnlock") == .afterFirstUnlock)
        #expect(ItemAccessibility(spelling: "WhenUnlocked") == nil)
        #expect(ItemAccessibility.allCases.filter(\.isThisDeviceOnly).count == 4)
    }
}
