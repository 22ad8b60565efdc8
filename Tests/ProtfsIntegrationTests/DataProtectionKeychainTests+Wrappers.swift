import DataProtection
import Foundation
import Testing

/// Calls shaped as the public keychain wrappers make them (docs/DATAPROTECTION.md, "The
/// keychain wrappers"), on a mount.
extension DataProtectionKeychainTests {
    /// Locksmith's `updateInSecureStore()`: the query, with the new secret, passed again as the
    /// attributes to change (all but its class), an internet password's server and port
    /// included.
    @Test func anUpdateThatRepeatsItsQueryChangesTheSecret() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            var query: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "net.example",
                                        kSecAttrPort as String: 8080, kSecAttrProtocol as String: kSecAttrProtocolFTP,
                                        kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTTPBasic,
                                        kSecAttrPath as String: "somePath", kSecAttrSecurityDomain as String: "someDomain",
                                        kSecAttrAccount as String: "alice", kSecValueData as String: Data("first".utf8)]
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)
            query[kSecValueData as String] = Data("second".utf8)
            var attributes = query
            attributes[kSecClass as String] = nil
            #expect(SecItemUpdate(query as CFDictionary, attributes as CFDictionary) == errSecSuccess)
            var read = query
            read[kSecValueData as String] = nil
            read[kSecReturnData as String] = true
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(read as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("second".utf8))
        }
    }

    /// SwiftKeychainWrapper's `allKeys()`: accounts stored as `Data`, read from a result cast to
    /// `[[AnyHashable: Any]]` with the constant as the key.
    @Test func accountsAreFoundByTheConstantInHashableDictionaries() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            for key in ["one", "two"] {
                let add: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "wrapper",
                                          kSecAttrAccount as String: Data(key.utf8), kSecValueData as String: Data("v".utf8)]
                #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            }
            let all: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "wrapper",
                                      kSecReturnAttributes as String: kCFBooleanTrue!, kSecMatchLimit as String: kSecMatchLimitAll]
            var result: AnyObject?
            #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
            let keys = (result as? [[AnyHashable: Any]] ?? []).compactMap { ($0[kSecAttrAccount] as? Data).map { String(decoding: $0, as: UTF8.self) } }
            #expect(keys == ["one", "two"])
        }
    }
}
