import ProtfsCrypto

/// A recovery key (docs/OPERATIONS.md, "The TPM"): 32 random bytes that stand in for the TPM.
/// Shown once as 72 modhex characters (the key, then a 4-byte checksum that catches a
/// mistyped character) in nine groups of eight; modhex's letters read the same on every
/// keyboard layout. Only the public half of the X25519 key derived from it stays on disk.
public struct RecoveryKey: Sendable {
    static let alphabet = Array("cbdefghijklnrtuv".utf8)
    static let checksumByteCount = 4
    static let digitCount = 2 * (LockedKey.byteCount + checksumByteCount)
    static let groupLength = 8

    let secret: LockedKey

    private init(secret: LockedKey) { self.secret = secret }

    public static func generate() -> RecoveryKey { RecoveryKey(secret: LockedKey.random()) }

    /// Reads the text form from `text` (dashes, blanks and a line end ignored, either case).
    public init(parsing text: SecureBuffer) throws(VaultError) {
        // One nibble a byte, in locked memory like the key it spells.
        let digits = SecureBuffer(count: Self.digitCount)
        defer { digits.wipe() }
        let valid = text.withUnsafeBytes { bytes in
            digits.withUnsafeMutableBytes { out in
                var count = 0
                for byte in bytes where ![UInt8(ascii: "-"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n")].contains(byte) {
                    guard count < Self.digitCount, let value = Self.alphabet.firstIndex(of: byte | 0x20) else { return false }
                    out[count] = UInt8(value)
                    count += 1
                }
                return count == Self.digitCount
            }
        }
        guard valid else {
            throw .recoveryKeyRefused(reason: "it is not a recovery key: expected \(Self.digitCount) characters of "
                                      + "'\(String(decoding: Self.alphabet, as: UTF8.self))' in groups of \(Self.groupLength)")
        }
        let (secret, checksum) = digits.withUnsafeBytes { nibbles in
            let byte = { (index: Int) in nibbles[2 * index] << 4 | nibbles[2 * index + 1] }
            let secret = LockedKey.make { slot in
                for index in 0..<LockedKey.byteCount { slot[index] = byte(index) }
            }
            return (secret, (0..<Self.checksumByteCount).map { byte(LockedKey.byteCount + $0) })
        }
        guard checksum == Self.checksum(of: secret) else {
            throw .recoveryKeyRefused(reason: "its checksum does not match: a character is mistyped")
        }
        self.secret = secret
    }

    /// The text form, in locked memory, for the one time it is shown.
    public var text: SecureBuffer {
        let checksum = Self.checksum(of: secret)
        let groups = Self.digitCount / Self.groupLength
        let buffer = SecureBuffer(count: Self.digitCount + groups - 1)
        buffer.withUnsafeMutableBytes { out in
            secret.withUnsafeBytes { key in
                var position = 0
                for digit in 0..<Self.digitCount {
                    if digit > 0 && digit % Self.groupLength == 0 { out[position] = UInt8(ascii: "-"); position += 1 }
                    let byte = digit / 2 < LockedKey.byteCount ? key[digit / 2] : checksum[digit / 2 - LockedKey.byteCount]
                    out[position] = Self.alphabet[Int(digit % 2 == 0 ? byte >> 4 : byte & 0x0f)]
                    position += 1
                }
            }
        }
        return buffer
    }

    /// The X25519 private key the sealed boxes open with.
    var privateKey: LockedKey {
        var derived = BLAKE2b(key: secret, outputByteCount: LockedKey.byteCount)
        derived.update(Array("protfs recovery key v1".utf8))
        return derived.finalizeKey()
    }

    /// What the vault keeps: the public half, to seal to.
    public var publicKey: [UInt8] { X25519.publicKey(for: privateKey) }

    private static func checksum(of secret: LockedKey) -> [UInt8] {
        var hash = BLAKE2b(outputByteCount: 16)
        hash.update(Array("protfs recovery checksum v1".utf8))
        hash.update(secret)
        return Array(hash.finalize().prefix(checksumByteCount))
    }
}
