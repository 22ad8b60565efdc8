import Glibc
import Testing
import ProtfsTestSupport
import ProtfsCrypto
import ProtfsSystem
@testable import ProtfsFormat

@Suite struct XattrCodecTests {
    let keys = randomFilesystemKeys()
    let object = ObjectID.random()

    private func user(_ name: String) -> [UInt8] { Array(("user." + name).utf8) }

    @Test func namesRoundTrip() throws {
        let names = [user("a"), user("mime_type"), user("xdg.origin.url"), user("protfs.class"), user("ünï/code"),
                     Array("user.".utf8) + [0xFF, 0xFE], Array("user.".utf8) + sampleName(length: 159)]
        for name in names {
            let backing = try XattrCodec.backingName(for: name, objectID: object, keys: keys)
            #expect(backing.hasPrefix("user.protfs.x."))
            #expect(backing.utf8.count <= 255)
            #expect(try XattrCodec.backingName(for: name, objectID: object, keys: keys) == backing)
            #expect(XattrCodec.name(ofBacking: backing, objectID: object, keys: keys) == name)
            #expect(XattrCodec.name(ofBacking: backing, objectID: .random(), keys: keys) == nil)
        }
    }

    @Test func sameNameDiffersBetweenObjects() throws {
        #expect(try XattrCodec.backingName(for: user("tag"), objectID: object, keys: keys)
                != XattrCodec.backingName(for: user("tag"), objectID: .random(), keys: keys))
    }

    @Test(arguments: ["user.protfs.class", "user.foo", "security.selinux", "trusted.x", "user.protfs.x.", "user.protfs.x.Zh",
                      "user.protfs.xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
    func foreignBackingNamesAreSkipped(_ backing: String) {
        #expect(XattrCodec.name(ofBacking: backing, objectID: object, keys: keys) == nil)
    }

    @Test func entryNameCiphertextIsNotAnXattrName() {
        let encoded = SIVNameCipher.entryNames(keys).encrypt(Array("tag".utf8), tweak: object)
        #expect(XattrCodec.name(ofBacking: "user.protfs.x." + encoded, objectID: object, keys: keys) == nil)
    }

    @Test func refusesBadNames() {
        #expect(throws: Errno.range) {
            try XattrCodec.backingName(for: Array("user.".utf8) + sampleName(length: 160), objectID: object, keys: keys)
        }
        #expect(throws: Errno.range) {
            try XattrCodec.sealValue([1], name: Array("user.".utf8) + sampleName(length: 250), objectID: object, keys: keys)
        }
        #expect(throws: Errno.invalid) { try XattrCodec.backingName(for: user(""), objectID: object, keys: keys) }
        #expect(throws: Errno.invalid) { try XattrCodec.backingName(for: user("a\u{0}b"), objectID: object, keys: keys) }
        #expect(throws: Errno.notSupported) {
            try XattrCodec.backingName(for: Array("trusted.x".utf8), objectID: object, keys: keys)
        }
        #expect(throws: Errno.notSupported) { try XattrCodec.backingName(for: Array("user".utf8), objectID: object, keys: keys) }
    }

    @Test(arguments: [0, 1, 100, 4096, XattrCodec.maximumValueLength])
    func valuesRoundTrip(length: Int) throws {
        let value = SecureRandom.bytes(length)
        let sealed = try XattrCodec.sealValue(value, name: user("v"), objectID: object, keys: keys)
        #expect(sealed.count == length + 40)
        #expect(try XattrCodec.openValue(sealed, name: user("v"), objectID: object, keys: keys) == value)
    }

    @Test func valuesAreBoundToTheirObjectAndName() throws {
        let sealed = try XattrCodec.sealValue(Array("secret".utf8), name: user("v"), objectID: object, keys: keys)
        #expect(throws: Errno.io) { try XattrCodec.openValue(sealed, name: user("v"), objectID: .random(), keys: keys) }
        #expect(throws: Errno.io) { try XattrCodec.openValue(sealed, name: user("w"), objectID: object, keys: keys) }
        #expect(throws: Errno.io) {
            try XattrCodec.openValue(sealed, name: user("v"), objectID: object, keys: randomFilesystemKeys())
        }
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: Errno.io) { try XattrCodec.openValue(tampered, name: user("v"), objectID: object, keys: keys) }
        }
        for short in [[], Array(sealed[0..<39])] {
            #expect(throws: Errno.io) { try XattrCodec.openValue(short, name: user("v"), objectID: object, keys: keys) }
        }
    }

    @Test func refusesValuesTooLargeToStore() {
        #expect(throws: Errno(E2BIG)) {
            try XattrCodec.sealValue([UInt8](repeating: 0, count: XattrCodec.maximumValueLength + 1),
                                     name: user("v"), objectID: object, keys: keys)
        }
    }
}
