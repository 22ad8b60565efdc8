import ProtfsCrypto

/// The deterministic, authenticated name encryption of FORMAT.md "Names":
///
///     padded     = name || k bytes of value k          (PKCS#7 to a multiple of 16)
///     SIV        = BLAKE2b-128(key = MAC key, tweak || UInt16 LE name length || padded)
///     ciphertext = XChaCha20(padded, nonce = SIV || 8 zero bytes, key = stream key)
///     stored     = base64url(SIV || ciphertext)
///
/// Deterministic so that a lookup needs no directory scan; the tweak (a directory id, or the
/// object id for xattr names) makes the same name differ between directories, and the SIV
/// is both the nonce and the authenticator, so no nonce is ever fixed or reused across names.
public struct SIVNameCipher: Sendable {
    public static let maximumNameLength = 255
    static let sivByteCount = 16
    static let blockSize = 16

    private let macKey: LockedKey
    private let streamKey: LockedKey

    public init(macKey: LockedKey, streamKey: LockedKey) {
        self.macKey = macKey
        self.streamKey = streamKey
    }

    /// The cipher of directory entry names (tweak: the directory id).
    public static func entryNames(_ keys: FilesystemKeys) -> SIVNameCipher {
        SIVNameCipher(macKey: keys.nameMAC, streamKey: keys.nameEncryption)
    }

    /// The cipher of `user.*` xattr names (tweak: the file or directory id).
    public static func xattrNames(_ keys: FilesystemKeys) -> SIVNameCipher {
        SIVNameCipher(macKey: keys.xattrNameMAC, streamKey: keys.xattrNameEncryption)
    }

    /// Length of the stored form of a name of `nameLength` bytes (no key needed).
    public static func encodedLength(ofNameLength nameLength: Int) -> Int {
        Base64URL.encodedLength(ofByteCount: sivByteCount + paddedLength(ofNameLength: nameLength))
    }

    static func paddedLength(ofNameLength nameLength: Int) -> Int { (nameLength / blockSize + 1) * blockSize }

    /// Encrypts a name of 1...255 bytes (callers validate names before they get here).
    public func encrypt(_ name: [UInt8], tweak: ObjectID) -> String {
        precondition((1...Self.maximumNameLength).contains(name.count), "names are validated before encryption")
        let padCount = Self.paddedLength(ofNameLength: name.count) - name.count
        var padded = name + [UInt8](repeating: UInt8(padCount), count: padCount)
        defer { secureZero(&padded) }
        let siv = syntheticIV(tweak: tweak, nameLength: name.count, padded: padded)
        return Base64URL.encode(siv + XChaCha20.xor(padded, nonce: Self.nonce(siv), key: streamKey))
    }

    /// Decrypts a stored name, or nil if it is malformed, damaged, or was made for another
    /// tweak or key.
    public func decrypt(_ encoded: String, tweak: ObjectID) -> [UInt8]? {
        guard let stored = Base64URL.decode(encoded) else { return nil }
        let paddedCount = stored.count - Self.sivByteCount
        guard paddedCount >= Self.blockSize, paddedCount % Self.blockSize == 0,
              paddedCount <= Self.paddedLength(ofNameLength: Self.maximumNameLength) else { return nil }
        let siv = Array(stored[0..<Self.sivByteCount])
        var padded = XChaCha20.xor(Array(stored[Self.sivByteCount...]), nonce: Self.nonce(siv), key: streamKey)
        defer { secureZero(&padded) }
        let padCount = Int(padded[padded.count - 1])
        guard (1...Self.blockSize).contains(padCount),
              padded[(padded.count - padCount)...].allSatisfy({ $0 == UInt8(padCount) }) else { return nil }
        let nameLength = padded.count - padCount
        guard nameLength >= 1,
              ConstantTime.equal(siv, syntheticIV(tweak: tweak, nameLength: nameLength, padded: padded)) else { return nil }
        return Array(padded[0..<nameLength])
    }

    private func syntheticIV(tweak: ObjectID, nameLength: Int, padded: [UInt8]) -> [UInt8] {
        var mac = BLAKE2b(key: macKey, outputByteCount: Self.sivByteCount)
        mac.update(tweak.bytes)
        mac.update(littleEndian: UInt16(nameLength))
        mac.update(padded)
        return mac.finalize()
    }

    private static func nonce(_ siv: [UInt8]) -> [UInt8] {
        siv + [UInt8](repeating: 0, count: XChaCha20.nonceByteCount - sivByteCount)
    }
}
