import Foundation
import ProtfsDomain
import Testing
@testable import DataProtection

/// The Security framework's vocabulary beyond generic passwords, read as iOS code writes it;
/// what protfs cannot honour gets Apple's status, never a trap. None of these reach a daemon:
/// they are decided before the vault is looked for.
@Suite struct SecurityVocabularyTests {
    private let genericPassword: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                                  kSecAttrService as String: "api.example.com",
                                                  kSecAttrAccount as String: "alice"]

    @Test func aSecretOver64KiBIsErrSecParamNotATrap() {
        var add = genericPassword
        add[kSecValueData as String] = Data(count: ItemLimits.maximumSecretLength + 1)
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecParam)
        #expect(SecItemUpdate(genericPassword as CFDictionary,
                              [kSecValueData as String: Data(count: 70_000)] as CFDictionary) == errSecParam)
    }

    @Test func anOversizedAttributeIsErrSecParam() {
        let long = String(repeating: "x", count: 70_000)
        for key in [kSecAttrLabel, kSecAttrAccount, kSecAttrService, kSecAttrComment, kSecAttrDescription] {
            var add = genericPassword
            add[key as String] = long
            add[kSecValueData as String] = Data("token".utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecParam, "\(key)")
            #expect(SecItemCopyMatching(add.filter { $0.key != kSecValueData as String } as CFDictionary, nil) == errSecParam, "\(key)")
        }
        var generic = genericPassword
        generic[kSecAttrGeneric as String] = Data(count: 70_000)
        #expect(SecItemAdd(generic as CFDictionary, nil) == errSecParam)
    }

    @Test func keysCertificatesAndIdentitiesAreKnownAndNotImplemented() {
        for itemClass in [kSecClassKey, kSecClassCertificate, kSecClassIdentity] {
            #expect(SecItemCopyMatching([kSecClass as String: itemClass] as CFDictionary, nil) == errSecUnimplemented)
        }
    }

    /// Apple's uniqueness rule: account, server, protocol, port, path, authentication type
    /// and security domain together name an internet password.
    @Test func internetPasswordsAreNamedByAllTheirAttributes() throws {
        let https: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                                    kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                                    kSecAttrAccount as String: "alice"]
        let item = try KeychainQuery(https as CFDictionary, for: .add).newItem()
        var otherPort = https
        otherPort[kSecAttrPort as String] = 8443
        #expect(try KeychainQuery(otherPort as CFDictionary, for: .add).newItem().service != item.service)
        var samePlace = https
        samePlace[kSecAttrLabel as String] = "another label"
        #expect(try KeychainQuery(samePlace as CFDictionary, for: .add).newItem().service == item.service)
        #expect(InternetPassword(item)?.port == 443)

        let byServer = try KeychainQuery([kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com"] as CFDictionary,
                                         for: .search)
        #expect(byServer.matches(item))
        #expect(try !KeychainQuery([kSecClass: kSecClassInternetPassword, kSecAttrPort: 80] as CFDictionary, for: .search).matches(item))
        #expect(try !KeychainQuery([kSecClass: kSecClassGenericPassword] as CFDictionary, for: .search).matches(item))
        #expect(!byServer.matches(ItemAttributes(service: "example.com", account: "alice")))
        let returned = Keychain.attributeDictionary(item)
        #expect(returned[kSecClass as String] as? String == kSecClassInternetPassword as String && returned[kSecAttrService as String] == nil)
        #expect(returned[kSecAttrServer as String] as? String == "example.com" && returned[kSecAttrPort as String] as? Int == 443)
        #expect(throws: KeychainStatus.param) {
            try KeychainQuery([kSecClass: kSecClassInternetPassword, kSecAttrService: "s"] as CFDictionary, for: .search)
        }
    }

    @Test func nothingSynchronizes() throws {
        var add = genericPassword
        add[kSecAttrSynchronizable as String] = kCFBooleanTrue
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecUnimplemented)
        var any = genericPassword
        any[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        #expect(try KeychainQuery(any as CFDictionary, for: .search).matches(ItemAttributes(service: "api.example.com", account: "alice")))
        var only = genericPassword
        only[kSecAttrSynchronizable as String] = true
        #expect(try !KeychainQuery(only as CFDictionary, for: .search).matches(ItemAttributes(service: "api.example.com", account: "alice")))
    }

    @Test func accessControlGivesItsAccessibilityAndRefusesPrompts() throws {
        var error: Unmanaged<CFError>?
        let plain = try #require(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleAfterFirstUnlock, [], &error))
        var add = genericPassword
        add[kSecAttrAccessControl as String] = plain
        #expect(try KeychainQuery(add as CFDictionary, for: .add).newItem().accessibility == .afterFirstUnlock)
        for flags: SecAccessControlCreateFlags in [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode] {
            add[kSecAttrAccessControl as String] = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, flags, nil)!
            add[kSecValueData as String] = Data("token".utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecAuthFailed)
        }
        #expect(SecAccessControlCreateWithFlags(nil, "whenUnlocked", [], &error) == nil)
        #expect(error?.takeRetainedValue().code == Int(errSecParam))
    }

    @Test func optionsThatChangeNothingOnLinuxAreAccepted() throws {
        var query = genericPassword
        query[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
        query[kSecUseDataProtectionKeychain as String] = true
        query[kSecReturnPersistentRef as String] = true
        query[kSecMatchLimit as String] = 5
        let parsed = try KeychainQuery(query as CFDictionary, for: .search)
        #expect(parsed.limit == 5 && parsed.returnPersistentRef && parsed.itemQuery?.limit == 5)
    }

    @Test func aPersistentReferenceFindsItsItemAgain() throws {
        let reference = PersistentReference(service: "s", account: "a\u{0}b").data
        let query = try KeychainQuery([kSecClass: kSecClassGenericPassword, kSecValuePersistentRef: reference] as CFDictionary,
                                      for: .match)
        #expect(query.service == "s" && query.account == "a\u{0}b")
        #expect(throws: KeychainStatus.param) {
            try KeychainQuery([kSecClass: kSecClassGenericPassword, kSecValuePersistentRef: Data("x".utf8)] as CFDictionary, for: .match)
        }
    }

    @Test func anAccountGivenAsDataComesBackAsData() throws {
        let asData = try KeychainQuery([kSecClass: kSecClassGenericPassword, kSecAttrAccount: Data("key".utf8)] as CFDictionary,
                                       for: .add).newItem()
        #expect(Keychain.attributeDictionary(asData)[kSecAttrAccount as String] as? Data == Data("key".utf8))
        #expect(asData.lookupAttributes["username"] == "key")
        let asString = try KeychainQuery([kSecClass: kSecClassGenericPassword, kSecAttrAccount: "key"] as CFDictionary, for: .add).newItem()
        #expect(Keychain.attributeDictionary(asString)[kSecAttrAccount as String] as? String == "key")
        #expect(asString.lookupAttributes == [KeychainQuery.accessGroupAttribute: ProtfsKeychain.applicationIdentifier,
                                              "service": "", "username": "key"])
    }

    @Test func updateMayRename() throws {
        let update = try KeychainQuery([kSecAttrAccount: "bob"] as CFDictionary, for: .changes)
        #expect(update.rename == ItemRename(account: "bob"))
        #expect(try KeychainQuery([kSecAttrLabel: "l"] as CFDictionary, for: .changes).rename.isEmpty)
    }

    /// iOS keeps an item's access group, finds items by it, and returns it; a query without
    /// one reaches only the program's own group.
    @Test func theAccessGroupIsKeptAndMatched() throws {
        var add = genericPassword
        add[kSecAttrAccessGroup as String] = "TEAMID.com.example.shared"
        let item = try KeychainQuery(add as CFDictionary, for: .add).newItem()
        #expect(Keychain.attributeDictionary(item)[kSecAttrAccessGroup as String] as? String == "TEAMID.com.example.shared")
        #expect(try KeychainQuery(add as CFDictionary, for: .search).matches(item))
        add[kSecAttrAccessGroup as String] = "TEAMID.com.example.other"
        #expect(try !KeychainQuery(add as CFDictionary, for: .search).matches(item))
        #expect(try !KeychainQuery(genericPassword as CFDictionary, for: .search).matches(item))
        #expect(throws: KeychainStatus.unimplemented) {
            try KeychainQuery([kSecAttrAccessGroup: "TEAMID.com.example.other"] as CFDictionary, for: .changes)
        }
    }

    @Test func statusesAndMessagesAreApples() {
        #expect([noErr, errSecUnimplemented, errSecUserCanceled, errSecAuthFailed, errSecMissingEntitlement]
                == [0, -4, -128, -25293, -34018])
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil) == "The specified item could not be found in the keychain.")
        #expect(SecCopyErrorMessageString(errSecParam, nil)?.hasPrefix("One or more parameters passed to a function were not valid.") == true)
        #expect(SecCopyErrorMessageString(12345, nil) == nil)
    }
}
