import ProtfsFormat

/// Names as bytes made printable on one line: valid UTF-8 is kept, except that control
/// characters, invalid bytes and the backslash are written as `\xNN`.
public enum DisplayName {
    public static func escaped(_ bytes: [UInt8]) -> String {
        var result = ""
        var index = 0
        while index < bytes.count {
            let length = scalarLength(bytes, at: index)
            if length > 0, let scalar = String(decoding: bytes[index ..< index + length], as: UTF8.self).unicodeScalars.first,
               scalar.value >= 0x20, scalar.value != 0x7F, scalar != "\\", !(0x80...0x9F).contains(scalar.value) {
                result.unicodeScalars.append(scalar)
                index += length
            } else {
                result += "\\x" + String(bytes[index], radix: 16, uppercase: false).leftPadded(to: 2)
                index += 1
            }
        }
        return result
    }

    /// The length of the well-formed UTF-8 sequence at `index`, or 0.
    private static func scalarLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length = lead < 0x80 ? 1 : lead >= 0xC2 && lead < 0xE0 ? 2 : lead >= 0xE0 && lead < 0xF0 ? 3 : lead >= 0xF0 && lead < 0xF5 ? 4 : 0
        guard length > 0, index + length <= bytes.count else { return 0 }
        let sequence = Array(bytes[index ..< index + length])
        // Decoding repairs what is not well formed; only an exact round trip is kept.
        return Array(String(decoding: sequence, as: UTF8.self).utf8) == sequence ? length : 0
    }
}
