import ProtfsCrypto
import ProtfsDomain

/// A protfs item's identity for its owner, and how a Secret Service item maps to it
/// (docs/SECRETS.md, "One item, three views").
struct ItemKey: Hashable, Sendable {
    let service: String
    let account: String

    init(service: String, account: String) {
        self.service = service
        self.account = account
    }

    init(_ item: ItemAttributes) { self.init(service: item.service, account: item.account) }

    /// The last element of the item's object path: `i` and 32 hexadecimal digits of
    /// `SHA-256(len (4, little-endian) || service || len (4) || account)`.
    var pathElement: String {
        var input: [UInt8] = []
        for text in [service, account] {
            let bytes = Array(text.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { input += $0 }
            input += bytes
        }
        return "i" + hex(SHA256.hash(input).prefix(16))
    }

    static let genericSchema = "org.freedesktop.Secret.Generic"

    /// The service a new item made through the Secret Service gets.
    static func service(for attributes: [String: String]) -> String {
        for name in ["service", "xdg:schema"] { if let value = attributes[name], !value.isEmpty { return value } }
        return genericSchema
    }

    /// The account it would like (taken when free); else a random one.
    static func preferredAccount(for attributes: [String: String]) -> String? {
        ["username", "account", "user"].lazy.compactMap { attributes[$0] }.first { !$0.isEmpty }
    }

    static func randomAccount() -> String { hex(SecureRandom.bytes(16)[...]) }
}

/// Lowercase hexadecimal.
func hex(_ bytes: ArraySlice<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
    return String(decoding: out, as: UTF8.self)
}
