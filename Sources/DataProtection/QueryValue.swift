import Foundation

/// One entry of a `SecItem` dictionary, read as the type its key takes. What is wrong is
/// `errSecParam` saying which key (by Apple's constant name) and what it got, by type only:
/// a value may be a secret, so no reason ever holds one.
struct QueryValue {
    let key: String
    let value: Any

    var name: String { KeyNames.name(of: key) }

    func string() throws(KeychainStatus) -> String {
        guard let string = value as? String else { throw wrongType("a String") }
        return string
    }

    /// A service or account: a string, or its UTF-8 bytes as `Data` (as many wrappers pass it).
    func text() throws(KeychainStatus) -> String {
        if let data = value as? Data {
            guard let text = String(validating: data, as: UTF8.self) else { throw .param("\(name) is Data that is not UTF-8") }
            return text
        }
        guard let string = value as? String else { throw wrongType("a String or UTF-8 Data") }
        return string
    }

    func data() throws(KeychainStatus) -> Data {
        guard let data = value as? Data else { throw wrongType("Data") }
        return data
    }

    func bool() throws(KeychainStatus) -> Bool {
        if let bool = value as? Bool { return bool }
        if let number = value as? NSNumber { return number.boolValue }
        throw wrongType("a Bool or a number")
    }

    /// A number, kept as its decimal digits (`kSecAttrCreator`, `kSecAttrType`: four
    /// character codes).
    func number() throws(KeychainStatus) -> Int {
        guard let number = value as? NSNumber else { throw wrongType("a number") }
        return number.intValue
    }

    /// One of `allowed`: anything else is `errSecParam` naming the value's key.
    func oneOf(_ allowed: [CFString], _ what: String) throws(KeychainStatus) -> String {
        let string = try string()
        guard allowed.contains(where: { $0 as String == string }) else { throw .param("\(name) is not \(what)") }
        return string
    }

    func wrongType(_ expected: String) -> KeychainStatus {
        .param("\(name) must be \(expected), not \(type(of: value))")
    }
}

/// Apple's constant names of the keys, for the reasons of `errSecParam`.
enum KeyNames {
    static func name(of key: String) -> String {
        names[key] ?? "the key \"\(key.prefix(64))\""
    }

    private static let names: [String: String] = Dictionary(uniqueKeysWithValues: constants.map { ($0.0 as String, $0.1) })

    private static var constants: [(CFString, String)] { [
        (kSecClass, "kSecClass"), (kSecAttrService, "kSecAttrService"), (kSecAttrAccount, "kSecAttrAccount"),
        (kSecAttrLabel, "kSecAttrLabel"), (kSecAttrDescription, "kSecAttrDescription"), (kSecAttrComment, "kSecAttrComment"),
        (kSecAttrGeneric, "kSecAttrGeneric"), (kSecAttrAccessible, "kSecAttrAccessible"),
        (kSecAttrAccessControl, "kSecAttrAccessControl"), (kSecAttrAccessGroup, "kSecAttrAccessGroup"),
        (kSecAttrSynchronizable, "kSecAttrSynchronizable"), (kSecAttrServer, "kSecAttrServer"),
        (kSecAttrProtocol, "kSecAttrProtocol"), (kSecAttrPort, "kSecAttrPort"), (kSecAttrPath, "kSecAttrPath"),
        (kSecAttrAuthenticationType, "kSecAttrAuthenticationType"), (kSecAttrSecurityDomain, "kSecAttrSecurityDomain"),
        (kSecAttrCreator, "kSecAttrCreator"), (kSecAttrType, "kSecAttrType"), (kSecAttrIsInvisible, "kSecAttrIsInvisible"),
        (kSecAttrIsNegative, "kSecAttrIsNegative"), (kSecUseDataProtectionKeychain, "kSecUseDataProtectionKeychain"),
        (kSecUseAuthenticationUI, "kSecUseAuthenticationUI"), (kSecUseOperationPrompt, "kSecUseOperationPrompt"),
        (kSecUseAuthenticationContext, "kSecUseAuthenticationContext"), (kSecUseNoAuthenticationUI, "kSecUseNoAuthenticationUI"),
        (kSecValueData, "kSecValueData"), (kSecValuePersistentRef, "kSecValuePersistentRef"), (kSecValueRef, "kSecValueRef"),
        (kSecReturnData, "kSecReturnData"), (kSecReturnAttributes, "kSecReturnAttributes"),
        (kSecReturnPersistentRef, "kSecReturnPersistentRef"), (kSecReturnRef, "kSecReturnRef"), (kSecMatchLimit, "kSecMatchLimit"),
        (kSecAttrCreationDate, "kSecAttrCreationDate"), (kSecAttrModificationDate, "kSecAttrModificationDate"),
    ] }
}
