import Testing
import ProtfsTestSupport
import ProtfsCrypto
@testable import ProtfsFormat

@Suite struct SIVNameCipherTests {
    let keys = randomFilesystemKeys()
    var cipher: SIVNameCipher { .entryNames(keys) }
    let directory = ObjectID.random()

    @Test func roundTripsEveryNameLength() {
        for length in 1...SIVNameCipher.maximumNameLength {
            let name = sampleName(length: length, seed: length)
            let encoded = cipher.encrypt(name, tweak: directory)
            #expect(encoded.utf8.count == SIVNameCipher.encodedLength(ofNameLength: length))
            #expect(cipher.decrypt(encoded, tweak: directory) == name, "length \(length)")
        }
    }

    @Test func roundTripsBytesThatAreNotUTF8() {
        let names: [[UInt8]] = [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0x80, 0x81, 0xFE, 0xFF, 0x01],
                                Array(1...255).filter { $0 != UInt8(ascii: "/") }]
        for name in names {
            #expect(cipher.decrypt(cipher.encrypt(name, tweak: directory), tweak: directory) == name)
        }
    }

    @Test func namesOf160BytesAndMoreEncodePast255() {
        #expect(SIVNameCipher.encodedLength(ofNameLength: 159) <= 255)
        #expect(SIVNameCipher.encodedLength(ofNameLength: 160) > 255)
        #expect(SIVNameCipher.encodedLength(ofNameLength: 255) == 363)
    }

    @Test func isDeterministicWithinADirectoryAndDiffersAcrossDirectories() {
        let name = Array("report.pdf".utf8)
        let other = ObjectID.random()
        #expect(cipher.encrypt(name, tweak: directory) == cipher.encrypt(name, tweak: directory))
        #expect(cipher.encrypt(name, tweak: directory) != cipher.encrypt(name, tweak: other))
        #expect(cipher.decrypt(cipher.encrypt(name, tweak: directory), tweak: other) == nil)
    }

    @Test func entryAndXattrCiphersAreDistinct() {
        let name = Array("same".utf8)
        let encoded = cipher.encrypt(name, tweak: directory)
        #expect(SIVNameCipher.xattrNames(keys).encrypt(name, tweak: directory) != encoded)
        #expect(SIVNameCipher.xattrNames(keys).decrypt(encoded, tweak: directory) == nil)
        #expect(SIVNameCipher.entryNames(randomFilesystemKeys()).decrypt(encoded, tweak: directory) == nil)
    }

    @Test(arguments: [1, 15, 16, 17, 100, 159, 160, 255])
    func flippingAnyStoredByteIsDetected(length: Int) throws {
        let stored = try #require(Base64URL.decode(cipher.encrypt(sampleName(length: length), tweak: directory)))
        for index in stored.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var tampered = stored
                tampered[index] ^= mask
                #expect(cipher.decrypt(Base64URL.encode(tampered), tweak: directory) == nil, "byte \(index)")
            }
        }
    }

    @Test func rejectsMalformedStoredNames() throws {
        let encoded = cipher.encrypt(Array("hello".utf8), tweak: directory)
        let stored = try #require(Base64URL.decode(encoded))
        let cases: [String] = [
            "", String(encoded.dropLast()), String(encoded.dropLast(2)), encoded + "A", encoded + "AAAA",
            Base64URL.encode(Array(stored[0..<16])),                  // SIV alone
            Base64URL.encode(Array(stored[0..<24])),                  // not a whole block
            Base64URL.encode(stored + [UInt8](repeating: 0, count: 16)),
            Base64URL.encode([UInt8](repeating: 0, count: 16 + 272)), // past the longest name
            encoded + "=", "." + encoded,
        ]
        for text in cases { #expect(cipher.decrypt(text, tweak: directory) == nil, "\(text)") }
    }

    /// A stored name built by hand with the keys, as only the daemon could: SIV over
    /// `directory || nameLength || padded`, then the stream.
    private func handBuilt(padded: [UInt8], nameLength: Int) -> String {
        var mac = BLAKE2b(key: keys.nameMAC, outputByteCount: 16)
        mac.update(directory.bytes)
        mac.update(littleEndian: UInt16(nameLength))
        mac.update(padded)
        let siv = mac.finalize()
        let ciphertext = XChaCha20.xor(padded, nonce: siv + [UInt8](repeating: 0, count: 8), key: keys.nameEncryption)
        return Base64URL.encode(siv + ciphertext)
    }

    @Test func handBuiltNameMatchesTheFormat() {
        let name = [UInt8](repeating: 0x61, count: 13)
        let encoded = handBuilt(padded: name + [3, 3, 3], nameLength: 13)
        #expect(encoded == cipher.encrypt(name, tweak: directory))
        #expect(cipher.decrypt(encoded, tweak: directory) == name)
    }

    /// A stored name whose SIV is right but whose padding is not PKCS#7 is refused.
    @Test(arguments: [
        ([UInt8](repeating: 0x61, count: 13) + [1, 3, 3], 13),  // last byte 3, but not three 3s
        ([UInt8](repeating: 0x61, count: 15) + [0], 15),        // pad byte 0
        ([UInt8](repeating: 0x61, count: 15) + [17], 15),       // pad longer than a block
        ([UInt8](repeating: 16, count: 16), 0),                 // all padding: an empty name
    ])
    func rejectsBadPaddingEvenWithAValidSIV(padded: [UInt8], nameLength: Int) {
        #expect(cipher.decrypt(handBuilt(padded: padded, nameLength: nameLength), tweak: directory) == nil)
    }
}
