/// Unpadded base64url (RFC 4648 section 5): the alphabet of every name and symlink target
/// protfs stores. It has no `/`, `.` or NUL, so an encoded name can never be `.`, `..` or one
/// of the daemon's own `protfs.*` files.
///
/// Decoding is strict: a byte string has exactly one accepted encoding, so a stored name
/// cannot be varied (padding, stray characters, non-zero trailing bits) to make a second
/// backing entry that decodes to the same plaintext name.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Value of each byte in the alphabet, or -1.
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = Int8(value) }
        return table
    }()

    /// Characters in the encoding of `byteCount` bytes.
    public static func encodedLength(ofByteCount byteCount: Int) -> Int { (byteCount * 4 + 2) / 3 }

    /// Bytes encoded by `characterCount` characters, or nil when no byte string encodes to that
    /// many (a remainder of one character carries fewer than 8 bits).
    public static func decodedLength(ofCharacterCount characterCount: Int) -> Int? {
        characterCount % 4 == 1 ? nil : characterCount * 3 / 4
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(encodedLength(ofByteCount: bytes.count))
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            let characters = min(remaining, 3) + 1
            for position in 0..<characters {
                out.append(alphabet[Int(group >> UInt32(18 - 6 * position) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `text`, or nil if it is not exactly the canonical unpadded encoding of some bytes.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard let byteCount = decodedLength(ofCharacterCount: characters.count) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(byteCount)
        var index = 0
        while index < characters.count {
            let count = min(characters.count - index, 4)
            var group: UInt32 = 0
            for position in 0..<4 {
                var value: Int8 = 0
                if position < count {
                    value = values[Int(characters[index + position])]
                    guard value >= 0 else { return nil }
                }
                group = group << 6 | UInt32(value)
            }
            let bytes = [UInt8(group >> 16 & 0xFF), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
            // A short last group must leave its unused low bits zero (only then is it canonical).
            guard bytes[(count - 1)...].allSatisfy({ $0 == 0 }) else { return nil }
            out.append(contentsOf: bytes[0..<(count - 1)])
            index += 4
        }
        return out
    }
}
