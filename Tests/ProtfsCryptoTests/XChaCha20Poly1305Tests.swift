import ProtfsCrypto
import Testing

/// The format's one AEAD: what it seals opens with the same key and associated data only,
/// and any change to the sealed bytes is caught.
@Suite struct XChaCha20Poly1305Tests {
    static let ad = Array("associated data".utf8)

    @Test(arguments: [0, 1, 16, 4096])
    func roundTripOfEveryLength(_ length: Int) throws {
        let key = LockedKey.random()
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let sealed = XChaCha20Poly1305.seal(plaintext, authenticating: Self.ad, with: key)
        #expect(sealed.count == length + XChaCha20Poly1305.overhead)
        #expect(try XChaCha20Poly1305.open(sealed, authenticating: Self.ad, with: key) == plaintext)
    }

    @Test func aFreshNonceEachTime() {
        let key = LockedKey.random()
        let first = XChaCha20Poly1305.seal([1, 2, 3], authenticating: [], with: key)
        let second = XChaCha20Poly1305.seal([1, 2, 3], authenticating: [], with: key)
        #expect(first.prefix(XChaCha20Poly1305.nonceByteCount) != second.prefix(XChaCha20Poly1305.nonceByteCount))
        #expect(first != second)
    }

    @Test func everyBitFlipAnotherKeyOrOtherDataFails() {
        let key = LockedKey.random()
        let sealed = XChaCha20Poly1305.seal(Array("secret".utf8), authenticating: Self.ad, with: key)
        for bit in 0..<(sealed.count * 8) {
            var flipped = sealed
            flipped[bit / 8] ^= 1 << (bit % 8)
            #expect(throws: CryptoError.authenticationFailed, "bit \(bit)") {
                try XChaCha20Poly1305.open(flipped, authenticating: Self.ad, with: key)
            }
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(sealed, authenticating: Self.ad, with: LockedKey.random())
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(sealed, authenticating: Self.ad + [0], with: key)
        }
        #expect(throws: CryptoError.invalidLength) {
            try XChaCha20Poly1305.open(Array(sealed.prefix(XChaCha20Poly1305.overhead - 1)), authenticating: Self.ad, with: key)
        }
    }

    @Test func aWrappedKeyUnwrapsOnlyWithItsKeyAndData() throws {
        let wrapping = LockedKey.random()
        let secret = LockedKey.random()
        let wrapped = XChaCha20Poly1305.wrap(secret, authenticating: Self.ad, with: wrapping)
        #expect(wrapped.count == LockedKey.byteCount + XChaCha20Poly1305.overhead)
        #expect(try XChaCha20Poly1305.unwrap(wrapped, authenticating: Self.ad, with: wrapping).isEqual(to: secret))
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.unwrap(wrapped, authenticating: [], with: wrapping)
        }
        #expect(throws: CryptoError.invalidLength) {
            try XChaCha20Poly1305.unwrap(Array(wrapped.dropLast()), authenticating: Self.ad, with: wrapping)
        }
    }
}
