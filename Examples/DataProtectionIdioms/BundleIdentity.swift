import DataProtection
import Foundation

/// `DataProtectionIdioms --identity`: the program's identifiers, and seed 001's keychain
/// snippet, which names its service by the bundle identifier, unchanged. Foundation reads
/// `Bundle.main.bundleIdentifier` from an Info.plist beside the executable; without one it is
/// nil (and the snippet's query `errSecParam`), while the library's application identifier
/// falls back to the executable's name (docs/DATAPROTECTION.md).
enum BundleIdentity {
    static func run() {
        print("bundleIdentifier: \(Bundle.main.bundleIdentifier ?? "nil")")
        print("applicationIdentifier: \(ProtfsKeychain.applicationIdentifier)")
        print("accessGroups: \(ProtfsKeychain.accessGroups.joined(separator: ","))")

        let bundleIdentifier = Bundle.main.bundleIdentifier
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                    kSecAttrService as String: bundleIdentifier as Any,
                                    kSecAttrAccount as String: "seed",
                                    kSecValueData as String: "seed secret".data(using: .utf8)!]
        SecItemDelete(query as CFDictionary)
        let status = SecItemAdd(query as CFDictionary, nil)
        print("SecItemAdd: \(status) (\(SecCopyErrorMessageString(status, nil) ?? "unknown"))")
    }
}
