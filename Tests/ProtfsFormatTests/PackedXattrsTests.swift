import Foundation
import Glibc
import Testing
import ProtfsTestSupport
import ProtfsCrypto
import ProtfsSystem
@testable import ProtfsFormat

@Suite struct PackedXattrsTests {
    let keys = randomFilesystemKeys()
    let object = ObjectID.random()

    private func user(_ name: String) -> [UInt8] { Array(("user." + name).utf8) }

    private func packed(_ pairs: [(String, String)]) throws -> PackedXattrs {
        var packed = PackedXattrs()
        for (name, value) in pairs { try packed.set(user(name), Array(value.utf8)) }
        return packed
    }

    @Test func setReplaceRemoveKeepNamesSorted() throws {
        var packed = try packed([("b", "2"), ("a", "1"), ("c", "3")])
        #expect(packed.names == [user("a"), user("b"), user("c")])
        try packed.set(user("b"), Array("two".utf8))
        #expect(try packed.value(of: user("b")) == Array("two".utf8))
        #expect(try packed.remove(user("a")))
        #expect(try !packed.remove(user("a")))
        #expect(try packed.value(of: user("a")) == nil)
        #expect(packed.names == [user("b"), user("c")])
        packed.wipe()
        #expect(packed.isEmpty)
    }

    @Test func hundredsOfSmallAttributesRoundTripInOneBlob() throws {
        var packed = PackedXattrs()
        for index in 0..<500 { try packed.set(user("attr_\(index)"), Array("v\(index)".utf8)) }
        let sealed = try packed.sealed(objectID: object, keys: keys)
        // About 14 bytes each (name and value lengths, "attr_N", "vN"), 40 for the seal.
        #expect(sealed.count < 500 * 16)
        let opened = try PackedXattrs.open(sealed, objectID: object, keys: keys)
        #expect(opened.names.count == 500)
        for index in 0..<500 { #expect(try opened.value(of: user("attr_\(index)")) == Array("v\(index)".utf8)) }
    }

    @Test func blobIsBoundToItsObjectAndKeys() throws {
        let sealed = try packed([("a", "1")]).sealed(objectID: object, keys: keys)
        #expect(throws: Errno.io) { try PackedXattrs.open(sealed, objectID: .random(), keys: keys) }
        #expect(throws: Errno.io) { try PackedXattrs.open(sealed, objectID: object, keys: randomFilesystemKeys()) }
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: Errno.io) { try PackedXattrs.open(tampered, objectID: self.object, keys: self.keys) }
        }
        #expect(throws: Errno.io) { try PackedXattrs.open(Array(sealed.dropLast()), objectID: object, keys: keys) }
        #expect(throws: Errno.io) { try PackedXattrs.open([], objectID: object, keys: keys) }
    }

    /// An attribute's own sealed value cannot be passed off as a blob, nor a blob as a value.
    @Test func blobAndOwnValuesDoNotOpenAsEachOther() throws {
        let blob = try packed([("a", "1")]).sealed(objectID: object, keys: keys)
        #expect(throws: Errno.io) { try XattrCodec.openValue(blob, name: user("a"), objectID: object, keys: keys) }
        let own = try XattrCodec.sealValue(PackedXattrs().encoded(), name: user("a"), objectID: object, keys: keys)
        #expect(throws: Errno.io) { try PackedXattrs.open(own, objectID: object, keys: keys) }
    }

    @Test func refusesValuesTooLongToPackAndBlobsTooLongForOneXattr() throws {
        var packed = PackedXattrs()
        try packed.set(user("edge"), [UInt8](repeating: 7, count: PackedXattrs.maximumPackedValueLength))
        #expect(throws: Errno(E2BIG)) {
            try packed.set(user("big"), [UInt8](repeating: 7, count: PackedXattrs.maximumPackedValueLength + 1))
        }
        for index in 0..<63 { try packed.set(user("fill_\(index)"), [UInt8](repeating: 1, count: 1024)) }
        #expect(throws: Errno(E2BIG)) { try packed.sealed(objectID: object, keys: keys) }
        #expect(throws: Errno.notSupported) { try packed.set(Array("trusted.x".utf8), [1]) }
        #expect(throws: Errno.invalid) { try packed.set(user(""), [1]) }
        #expect(throws: Errno.range) { try packed.set(Array("user.".utf8) + sampleName(length: 160), [1]) }
    }

    // MARK: hostile plaintext (as if sealed by someone holding the key)

    private func entry(_ name: [UInt8], _ value: [UInt8]) -> [UInt8] {
        [UInt8(name.count)] + name + [UInt8(value.count & 0xFF), UInt8(value.count >> 8)] + value
    }

    @Test func decodesWhatItEncodes() throws {
        let plaintext = [1, 2, 0] + entry(Array("a".utf8), [1]) + entry(Array("b".utf8), [])
        #expect(try PackedXattrs.decoded(plaintext).encoded() == plaintext)
    }

    @Test(arguments: [
        ("empty", []),
        ("unknown version", [2, 0, 0]),
        ("truncated count", [1, 0]),
        ("huge count", [1, 0xFF, 0xFF] + [1, 0x61, 0, 0]),
        ("truncated value", [1, 1, 0, 1, 0x61, 5, 0, 1, 2]),
        ("trailing bytes", [1, 0, 0, 9]),
        ("empty name", [1, 1, 0, 0, 0, 0]),
        ("NUL in a name", [1, 1, 0, 2, 0x61, 0, 0, 0]),
        ("duplicate names", [1, 2, 0, 1, 0x61, 0, 0, 1, 0x61, 0, 0]),
        ("names out of order", [1, 2, 0, 1, 0x62, 0, 0, 1, 0x61, 0, 0]),
        ("value too long to pack", [1, 1, 0, 1, 0x61, 0x01, 0x04] + [UInt8](repeating: 0, count: 1025)),
        ("name too long", [1, 1, 0, 160] + [UInt8](repeating: 0x61, count: 160) + [0, 0]),
    ] as [(String, [UInt8])])
    func hostilePlaintextIsEIO(_ label: String, _ plaintext: [UInt8]) {
        #expect(throws: Errno.io, "\(label)") { try PackedXattrs.decoded(plaintext) }
        let sealed = XChaCha20Poly1305.seal(plaintext, authenticating: object.bytes + [0] + Array("protfs xattrs v1".utf8),
                                            with: keys.xattrValue)
        #expect(throws: Errno.io, "\(label), sealed") { try PackedXattrs.open(sealed, objectID: object, keys: keys) }
    }
}

/// Known answers for FORMAT.md "xattrs", the packed form (`Vectors/xattrs-packed`), computed
/// from the document alone by `make-vectors.py`. A failure here means the format changed.
@Suite struct PackedXattrsVectorTests {
    struct Vectors: Decodable {
        struct Attribute: Decodable { let name, value: String }
        struct Blob: Decodable { let attributes: [Attribute]; let blob: String }
        let filesystemKey, objectID: String
        let blobs: [Blob]
    }

    @Test func blobsOpenToTheirAttributesInOrder() throws {
        let folder = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        let vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: folder.appendingPathComponent("xattrs-packed/xattrs-packed.json")))
        let keys = try filesystemKeys(hex: vectors.filesystemKey)
        let objectID = try ObjectID(hex: vectors.objectID)
        for vector in vectors.blobs {
            let packed = try PackedXattrs.open(try #require(hexBytes(vector.blob)), objectID: objectID, keys: keys)
            #expect(packed.names == vector.attributes.map { hexBytes($0.name) })
            for attribute in vector.attributes {
                #expect(try packed.value(of: try #require(hexBytes(attribute.name))) == hexBytes(attribute.value))
            }
        }
    }
}
