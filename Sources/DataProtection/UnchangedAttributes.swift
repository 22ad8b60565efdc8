import Foundation

/// `SecItemUpdate`'s attributes that repeat the query's value change nothing: Apple accepts
/// them whatever the key, and wrappers pass the item they found as both (Locksmith's update
/// sends its whole query, an internet password's server, port, protocol and security domain
/// included, which protfs could not rename).
enum UnchangedAttributes {
    /// `attributes` without the entries whose key `query` has with the same value, but for
    /// `kSecValueData`, which a query does not match (Locksmith passes the new secret in both).
    static func removed(from attributes: CFDictionary, sameAs query: CFDictionary) -> CFDictionary {
        let changes = NSMutableDictionary(dictionary: attributes as! [AnyHashable: Any])
        for (key, value) in attributes where !(key as? String == kSecValueData as String) {
            if let given = query[key], isSame(unwrapped(given), unwrapped(value)) { changes.removeObject(forKey: key) }
        }
        return changes
    }

    /// Equal strings, bytes or numbers (a Bool is a number, as in Core Foundation).
    private static func isSame(_ one: Any?, _ other: Any?) -> Bool {
        switch (one, other) {
        case let (one as String, other as String): one == other
        case let (one as Data, other as Data): one == other
        case let (one as NSNumber, other as NSNumber): one == other
        default: false
        }
    }
}
