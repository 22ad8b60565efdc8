import Foundation
import ProtfsCommandLine
import ProtfsCrypto
import ProtfsDomain

/// How `protfsctl item get --json` and `item list` print items. The secret goes from locked
/// memory to standard output in base64, never through a `String`.
enum ItemOutput {
    /// One object per item, keys sorted: the attributes, `generic` in base64, times in Unix
    /// seconds, the lookup attributes as an object.
    static func dictionary(_ item: ItemAttributes) -> [String: Any] {
        ["service": item.service, "account": item.account, "label": item.label, "description": item.description,
         "comment": item.comment, "generic": Data(item.generic).base64EncodedString(), "accessible": item.accessibility.name,
         "created": item.created, "modified": item.modified, "attributes": item.lookupAttributes,
         "contentType": item.contentType]
    }

    static func json(_ items: [ItemAttributes]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: items.map(dictionary), options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The attributes with `"secret"` in its sorted place: the JSON is made with an empty
    /// secret, and the base64 goes between its quotes (a `"` inside a value is escaped, so
    /// the empty member occurs exactly once).
    static func writeJSON(_ item: ItemAttributes, secret: SecureBuffer) throws {
        var object = dictionary(item)
        object["secret"] = ""
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        let text = String(decoding: data, as: UTF8.self)
        let placeholder = "\"secret\":\"\""
        guard let range = text.range(of: placeholder) else { preconditionFailure("the secret member is missing") }
        writeOutput(String(text[..<range.lowerBound]) + "\"secret\":\"")
        let encoded = secret.base64Encoded()
        encoded.withUnsafeBytes { _ = writeOutput($0) }
        writeOutput("\"" + String(text[range.upperBound...]) + "\n")
    }

    /// `SERVICE<TAB>ACCOUNT<TAB>ACCESSIBILITY<TAB>LABEL` lines, control characters escaped, then
    /// `<TAB>NAME=VALUE` per lookup attribute (by name).
    static func text(_ items: [ItemAttributes]) -> String {
        items.map { item in
            let pairs = item.lookupAttributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return ([item.service, item.account, item.accessibility.name, item.label] + pairs).map(escaped).joined(separator: "\t") + "\n"
        }.joined()
    }

    private static func escaped(_ text: String) -> String {
        text.unicodeScalars.map { scalar in
            scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\\" ? String(format: "\\x%02x", scalar.value) : String(scalar)
        }.joined()
    }
}
