import ProtfsCrypto

/// Lowercase hex of `bytes`, for known-answer tests.
public func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] }, as: UTF8.self)
}

/// Bytes from lowercase or uppercase hex digits, or nil.
public func hexBytes(_ hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
        bytes.append(byte)
    }
    return bytes
}

extension LockedKey {
    /// A copy of the key's bytes, for tests that compare or pin keys.
    public var testBytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
