import CSodium

/// Argon2id cost parameters, as stored in the keybag.
public struct Argon2idParameters: Sendable, Equatable, Hashable {
    public var opsLimit: UInt64
    public var memLimit: UInt64

    public init(opsLimit: UInt64, memLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// 64 MiB, 2 passes: the floor, for tests (`--kdf interactive`).
    public static let interactive = Argon2idParameters(opsLimit: 2, memLimit: 64 << 20)
    /// 256 MiB, 3 passes: the default, as costly as an unlock can be and still feel prompt.
    public static let moderate = Argon2idParameters(opsLimit: 3, memLimit: 256 << 20)
    /// Anything weaker than this in a keybag is refused.
    public static let minimum = interactive

    public var meetsMinimum: Bool {
        opsLimit >= Self.minimum.opsLimit && memLimit >= Self.minimum.memLimit
    }
}

public enum Argon2id {
    public static let saltByteCount = 16

    /// Derives a 32-byte key from a passcode held in locked memory.
    public static func deriveKey(passcode: SecureBuffer, salt: [UInt8], parameters: Argon2idParameters) throws(CryptoError) -> LockedKey {
        Sodium.ensure()
        guard salt.count == saltByteCount else { throw .invalidLength }
        return try LockedKey.make { (out) throws(CryptoError) in
            let rc = passcode.withUnsafeBytes { pw in
                salt.withUnsafeBytes { s in
                    crypto_pwhash(out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(out.count),
                                  pw.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(pw.count),
                                  s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                  parameters.opsLimit, Int(parameters.memLimit), crypto_pwhash_ALG_ARGON2ID13)
                }
            }
            guard rc == 0 else { throw .passwordHashFailed }
        }
    }
}
