import DataProtection
import Foundation

/// The rest of the vocabulary iOS code and keychain wrappers use, each as they write it;
/// `check()` runs them against the keychain vault and says which answered otherwise than
/// expected ("ok" when none did).
enum Idioms {
    static func check() -> String {
        var wrong: [String] = []
        func expect(_ name: String, _ status: OSStatus, _ expected: OSStatus) {
            if status != expected { wrong.append("\(name) \(status)") }
        }
        let service = "idioms.example.com"
        let account = "idioms".data(using: .utf8)!

        // Options that change nothing on Linux, accepted.
        var error: Unmanaged<CFError>?
        let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [], &error)
        let add: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                  kSecAttrService as String: service,
                                  kSecAttrAccount as String: account,
                                  kSecAttrGeneric as String: account,
                                  kSecAttrAccessGroup as String: "TEAMID.com.example.shared",
                                  kSecAttrSynchronizable as String: kCFBooleanFalse!,
                                  kSecAttrAccessControl as String: access as Any,
                                  kSecUseDataProtectionKeychain as String: true,
                                  kSecValueData as String: "v".data(using: .utf8)!]
        SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service] as CFDictionary)
        expect("add", SecItemAdd(add as CFDictionary, nil), noErr)

        var found: CFTypeRef?
        let search: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                     kSecAttrService as String: service,
                                     kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
                                     kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail,
                                     kSecReturnPersistentRef as String: true,
                                     kSecReturnAttributes as String: true,
                                     kSecMatchLimit as String: 10]
        expect("search", SecItemCopyMatching(search as CFDictionary, &found), errSecSuccess)
        if (found as? [[String: Any]])?.first?[kSecValuePersistentRef as String] as? Data == nil { wrong.append("persistent ref") }

        // A rename, as iOS allows.
        let renamed = [kSecAttrAccount as String: "renamed"] as [String: Any]
        expect("rename", SecItemUpdate([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service] as CFDictionary,
                                       renamed as CFDictionary), errSecSuccess)

        // What protfs cannot do, with Apple's statuses.
        let server: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                                     kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                                     kSecAttrPath as String: "/", kSecAttrAuthenticationType as String: "dflt",
                                     kSecAttrSecurityDomain as String: "realm"]
        SecItemDelete([kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com"] as CFDictionary)
        var login = server
        login[kSecAttrAccount as String] = "alice"
        login[kSecValueData as String] = "pw".data(using: .utf8)!
        expect("internet password", SecItemAdd(login as CFDictionary, nil), errSecSuccess)
        expect("same internet password", SecItemAdd(login as CFDictionary, nil), errSecDuplicateItem)
        login[kSecAttrPort as String] = 8443
        expect("other port", SecItemAdd(login as CFDictionary, nil), errSecSuccess)
        var logins: CFTypeRef?
        let byServer: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                                       kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]
        expect("by server", SecItemCopyMatching(byServer as CFDictionary, &logins), errSecSuccess)
        if (logins as? [[String: Any]])?.count != 2 { wrong.append("internet passwords \(String(describing: logins))") }
        expect("delete internet passwords", SecItemDelete(server.filter { $0.key != kSecAttrPort as String } as CFDictionary), errSecSuccess)
        for itemClass in [kSecClassKey, kSecClassCertificate, kSecClassIdentity] {
            expect(itemClass as String, SecItemCopyMatching([kSecClass as String: itemClass] as CFDictionary, nil), errSecUnimplemented)
        }
        var prompted = add
        prompted[kSecAttrAccessControl as String] = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil)
        expect("userPresence", SecItemAdd(prompted as CFDictionary, nil), errSecAuthFailed)
        expect("delete", SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service] as CFDictionary),
               errSecSuccess)
        for status in [errSecUserCanceled, errSecMissingEntitlement, errSecAuthFailed] where SecCopyErrorMessageString(status, nil) == nil {
            wrong.append("message \(status)")
        }

        // Seed 000's `[String: AnyObject]` query, and SwiftKeychainWrapper's `AnyObject`
        // parameter given a constant: the constants are objects, as Apple's are.
        let objects: [String: AnyObject] = [kSecClass as String: kSecClassGenericPassword,
                                            kSecAttrService as String: service as AnyObject,
                                            kSecAttrAccount as String: "object" as AnyObject,
                                            kSecValueData as String: "o".data(using: .utf8)! as AnyObject,
                                            kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked]
        func deleteKeychainSecClass(_ secClass: AnyObject) -> OSStatus {
            SecItemDelete([kSecClass as String: secClass, kSecAttrService as String: service as AnyObject] as CFDictionary)
        }
        expect("AnyObject add", SecItemAdd(objects as CFDictionary, nil), errSecSuccess)
        let readObject: [String: AnyObject] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service as AnyObject,
                                               kSecReturnData as String: kCFBooleanTrue, kSecMatchLimit as String: kSecMatchLimitOne]
        var object: CFTypeRef?
        expect("AnyObject read", SecItemCopyMatching(readObject as CFDictionary, &object), errSecSuccess)
        if object as? Data != "o".data(using: .utf8) { wrong.append("AnyObject secret") }
        expect("AnyObject delete", deleteKeychainSecClass(kSecClassGenericPassword), errSecSuccess)

        // Foundation's names.
        let protections: Set<FileProtectionType> = [.complete, .completeUnlessOpen, .completeUntilFirstUserAuthentication, .none]
        var values = URLResourceValues()
        values.fileProtection = URLFileProtection.complete
        switch values.fileProtection ?? .none {
        case .complete, .completeUnlessOpen, .completeUntilFirstUserAuthentication, .none: break
        default: wrong.append("switch")
        }
        let keys: Set<URLResourceKey> = [.fileProtectionKey]
        let names = [NSNotification.Name.UIApplicationProtectedDataWillBecomeUnavailable,
                     NSNotification.Name.UIApplicationProtectedDataDidBecomeAvailable,
                     UIApplication.protectedDataDidBecomeAvailableNotification]
        if protections.count != 4 || keys.isEmpty || Set(names).count != 2 { wrong.append("names") }
        return wrong.isEmpty ? "ok" : wrong.joined(separator: ", ")
    }
}
