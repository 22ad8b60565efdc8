import Testing
import ProtfsCrypto

@Suite struct Base64URLTests {
    @Test(arguments: [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
                      ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")])
    func rfc4648Vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func usesTheURLAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test func roundTripsEveryLengthUpTo300() {
        for length in 0...300 {
            let bytes = SecureRandom.bytes(length)
            let encoded = Base64URL.encode(bytes)
            #expect(encoded.utf8.count == Base64URL.encodedLength(ofByteCount: length))
            #expect(Base64URL.decodedLength(ofCharacterCount: encoded.utf8.count) == length)
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test(arguments: ["Zg==", "Zg=", "Zm8=", "=", "Zm9v===="])
    func rejectsPadding(_ text: String) { #expect(Base64URL.decode(text) == nil) }

    @Test(arguments: ["+_-_", "-/-_", "Zm9 v", "Zm9v\n", "Zm9\u{0}", "Zm9é", "Zm.v", "Zm@v"])
    func rejectsCharactersOutsideTheAlphabet(_ text: String) { #expect(Base64URL.decode(text) == nil) }

    @Test(arguments: ["Z", "Zm9vY", "Zm9vYmFyZ"])
    func rejectsLengthsOneModFour(_ text: String) {
        #expect(Base64URL.decodedLength(ofCharacterCount: text.utf8.count) == nil)
        #expect(Base64URL.decode(text) == nil)
    }

    /// "Zg" is the one encoding of "f"; "Zh".."Zv" carry the same byte with non-zero unused bits.
    @Test(arguments: ["Zh", "Zi", "Zp", "Zv", "Zm9", "Zm-", "Zm_", "Zm9vYh"])
    func rejectsNonCanonicalTrailingBits(_ text: String) { #expect(Base64URL.decode(text) == nil) }

    /// Debian's libsodium 1.0.18 decodes any byte from 0x80 up as if it were in the alphabet.
    @Test(arguments: [[0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD, 0x77], [0x5A, 0x80], [0xFF, 0xFF, 0xFF, 0xFF]] as [[UInt8]])
    func rejectsBytesAboveASCII(_ bytes: [UInt8]) {
        #expect(Base64URL.decode(String(decoding: bytes, as: UTF8.self)) == nil)
    }
}
