import CSodium

/// Unpadded base64url (RFC 4648 section 5), libsodium's `URLSAFE_NO_PADDING` variant: the
/// alphabet of every name and symlink target protfs stores. It has no `/`, `.` or NUL, so an
/// encoded name can never be `.`, `..` or one of the daemon's own `protfs.*` files.
///
/// Decoding is strict: a byte string has exactly one accepted encoding, so a stored name
/// cannot be varied (padding, stray characters, non-zero trailing bits) to make a second
/// backing entry that decodes to the same plaintext name. libsodium refuses each of those
/// when no characters are to be ignored and the whole input must be consumed.
public enum Base64URL {
    private static let variant = sodium_base64_VARIANT_URLSAFE_NO_PADDING

    /// Characters in the encoding of `byteCount` bytes.
    public static func encodedLength(ofByteCount byteCount: Int) -> Int { (byteCount * 4 + 2) / 3 }

    /// Bytes encoded by `characterCount` characters, or nil when no byte string encodes to that
    /// many (a remainder of one character carries fewer than 8 bits).
    public static func decodedLength(ofCharacterCount characterCount: Int) -> Int? {
        characterCount % 4 == 1 ? nil : characterCount * 3 / 4
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        Sodium.ensure()
        // libsodium writes a terminating NUL after the characters.
        var text = [CChar](repeating: 0, count: sodium_base64_encoded_len(bytes.count, variant))
        _ = sodium_bin2base64(&text, text.count, bytes, bytes.count, variant)
        return String(decoding: text.prefix(encodedLength(ofByteCount: bytes.count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes `text`, or nil if it is not exactly the canonical unpadded encoding of some bytes.
    public static func decode(_ text: String) -> [UInt8]? {
        Sodium.ensure()
        let characters = text.utf8.map { CChar(bitPattern: $0) }
        guard let byteCount = decodedLength(ofCharacterCount: characters.count) else { return nil }
        // libsodium 1.0.18 (Debian 12) takes every byte from 0x80 up for a character of the
        // alphabet (a signed char in its constant-time table lookup): the decoder fuzz test
        // found "\u{FFFD}\u{FFFD}w" decoding to five bytes. Only ASCII reaches it.
        guard characters.allSatisfy({ $0 >= 0 }) else { return nil }
        // One spare byte, so the buffer has an address even for the empty string.
        var bytes = [UInt8](repeating: 0, count: byteCount + 1)
        var decodedCount = 0
        // No end pointer: libsodium then fails unless every character was consumed.
        guard sodium_base642bin(&bytes, byteCount, characters, characters.count, nil, &decodedCount, nil, variant) == 0,
              decodedCount == byteCount else { return nil }
        bytes.removeLast()
        return bytes
    }
}
