import Testing
@testable import ProtfsCore
import ProtfsCrypto

/// The recovery key's text form (docs/FORMAT.md, "Recovery seals") and the sealed boxes it opens.
@Suite struct RecoveryKeyTests {
    static func text(_ key: RecoveryKey) -> String { key.text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    static func parse(_ text: String) throws(VaultError) -> RecoveryKey {
        try RecoveryKey(parsing: Array(text.utf8).withUnsafeBytes { SecureBuffer(copying: $0) })
    }

    @Test func textIsNineModhexGroupsAndReadsBack() throws {
        let key = RecoveryKey.generate()
        let text = Self.text(key)
        #expect(text.split(separator: "-").map(\.count) == Array(repeating: 8, count: 9))
        #expect(text.allSatisfy { "cbdefghijklnrtuv-".contains($0) })
        #expect(try Self.parse(text).secret.isEqual(to: key.secret))
        // Upper case, blanks instead of dashes, a line end: the same key.
        let retyped = text.uppercased().replacingOccurrences(of: "-", with: " ") + "\n"
        #expect(try Self.parse(retyped).secret.isEqual(to: key.secret))
    }

    @Test func mistypedOrShortKeysAreRefused() {
        let text = Self.text(RecoveryKey.generate())
        let first = text.first!
        let mistyped = (first == "c" ? "b" : "c") + text.dropFirst()
        #expect(throws: VaultError.recoveryKeyRefused(reason: "its checksum does not match: a character is mistyped")) {
            try Self.parse(mistyped)
        }
        for bad in [String(text.dropLast()), text + "c", text.replacingOccurrences(of: "c", with: "a"), ""] where bad != text {
            #expect(performing: { try Self.parse(bad) }, throws: { error in
                guard case VaultError.recoveryKeyRefused(let reason) = error else { return false }
                return reason.contains("it is not a recovery key")
            })
        }
    }

    @Test func sealedBoxOpensOnlyWithItsPrivateKey() throws {
        let key = RecoveryKey.generate(), other = RecoveryKey.generate()
        let secret = LockedKey.random()
        let sealed = try SealedBox.seal(secret, to: key.publicKey)
        #expect(sealed.count == SealedBox.byteCount)
        #expect(try SealedBox.open(sealed, privateKey: key.privateKey).isEqual(to: secret))
        #expect(throws: CryptoError.authenticationFailed) { try SealedBox.open(sealed, privateKey: other.privateKey) }
        var tampered = sealed
        tampered[60] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try SealedBox.open(tampered, privateKey: key.privateKey) }
    }
}
