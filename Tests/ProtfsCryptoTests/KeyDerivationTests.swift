import ProtfsCrypto
import Testing

/// The two derivations: a passcode stretched by Argon2id, and subkeys of a key by purpose
/// (crypto_kdf). Each gives the same key for the same inputs and another for any other.
@Suite struct KeyDerivationTests {
    static func passcode(_ text: String) -> SecureBuffer { Array(text.utf8).withUnsafeBytes { SecureBuffer(copying: $0) } }

    @Test func argon2idDependsOnThePasscodeAndTheSaltOnly() throws {
        let salt = [UInt8](repeating: 0x5A, count: Argon2id.saltByteCount)
        let other = [UInt8](repeating: 0xA5, count: Argon2id.saltByteCount)
        func derive(_ text: String, _ salt: [UInt8]) throws -> LockedKey {
            try Argon2id.deriveKey(passcode: Self.passcode(text), salt: salt, parameters: .interactive)
        }
        let key = try derive("correct horse", salt)
        #expect(try derive("correct horse", salt).isEqual(to: key))
        #expect(!(try derive("correct horsf", salt).isEqual(to: key)))
        #expect(!(try derive("correct horse", other).isEqual(to: key)))
        #expect(throws: CryptoError.invalidLength) {
            try Argon2id.deriveKey(passcode: Self.passcode("p"), salt: Array(salt.dropLast()), parameters: .interactive)
        }
    }

    @Test func theFloorIsTheInteractiveCost() {
        #expect(Argon2idParameters.interactive.meetsMinimum && Argon2idParameters.moderate.meetsMinimum)
        #expect(!Argon2idParameters(opsLimit: 1, memLimit: 64 << 20).meetsMinimum)
        #expect(!Argon2idParameters(opsLimit: 2, memLimit: (64 << 20) - 1).meetsMinimum)
    }

    @Test func subkeysDifferByIdAndContext() {
        let master = LockedKey.random()
        let first = master.deriveSubkey(id: 1, context: KDFContext("protfs-a"))
        #expect(master.deriveSubkey(id: 1, context: KDFContext("protfs-a")).isEqual(to: first))
        #expect(!master.deriveSubkey(id: 2, context: KDFContext("protfs-a")).isEqual(to: first))
        #expect(!master.deriveSubkey(id: 1, context: KDFContext("protfs-b")).isEqual(to: first))
        #expect(!LockedKey.random().deriveSubkey(id: 1, context: KDFContext("protfs-a")).isEqual(to: first))
        #expect(!first.isEqual(to: master))
    }
}
