import Foundation
import ProtfsControlProtocol
import ProtfsDomain
import Testing
@testable import DataProtection

/// `SecItem` dictionaries read into item requests, and the daemon's refusals as Apple's
/// `OSStatus` values.
@Suite struct KeychainQueryTests {
    @Test func anAddQueryAsIOSCodeWritesIt() throws {
        let token = Data("token".utf8)
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                    kSecAttrService as String: "api.example.com",
                                    kSecAttrAccount as String: "alice",
                                    kSecAttrLabel as String: "label",
                                    kSecAttrGeneric as String: Data([1, 2]),
                                    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                                    kSecValueData as String: token,
                                    kSecReturnData as String: kCFBooleanTrue!]
        let parsed = try KeychainQuery(query as CFDictionary, for: .add)
        #expect(parsed.newItem() == ItemAttributes(service: "api.example.com", account: "alice", label: "label",
                                                       generic: [1, 2], accessibility: .afterFirstUnlockThisDeviceOnly,
                                                       lookupAttributes: [KeychainQuery.accessGroupAttribute: ProtfsKeychain.applicationIdentifier,
                                                                          "service": "api.example.com", "username": "alice"]))
        #expect(parsed.secret == token)
        #expect(parsed.returnData && !parsed.returnAttributes && parsed.limit == 1)
    }

    @Test func everyAccessibleConstantIsApplesAndMapsToItsAccessibility() {
        let constants: [(CFString, ItemAccessibility)] = [
            (kSecAttrAccessibleWhenUnlocked, .whenUnlocked), (kSecAttrAccessibleAfterFirstUnlock, .afterFirstUnlock),
            (kSecAttrAccessibleAlways, .always), (kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .whenPasscodeSetThisDeviceOnly),
            (kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .whenUnlockedThisDeviceOnly),
            (kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .afterFirstUnlockThisDeviceOnly),
            (kSecAttrAccessibleAlwaysThisDeviceOnly, .alwaysThisDeviceOnly),
        ]
        for (constant, accessibility) in constants {
            #expect(ItemAccessibility(constant: constant as String) == accessibility)
            #expect(accessibility.constant == constant as String)
        }
        #expect(Set(constants.map(\.0)) == ["ak", "ck", "dk", "akpu", "aku", "cku", "dku"])
    }

    @Test func searchesReadTheirLimitAndReturnKeysWithNSStringKeysToo() throws {
        let query = [kSecClass: kSecClassGenericPassword, kSecMatchLimit: kSecMatchLimitAll,
                     kSecReturnAttributes: NSNumber(value: true)] as [String: Any]
        let parsed = try KeychainQuery(NSDictionary(dictionary: query), for: .search)
        #expect(parsed.limit == .max && parsed.returnAttributes && !parsed.returnData)
        let item = ItemAttributes(service: "s", account: "a", label: "l",
                                  lookupAttributes: [KeychainQuery.accessGroupAttribute: ProtfsKeychain.applicationIdentifier])
        #expect(parsed.matches(item))
        #expect(try KeychainQuery([kSecClass: kSecClassGenericPassword, kSecAttrLabel: "l"] as CFDictionary, for: .match).matches(item))
        #expect(try !KeychainQuery([kSecClass: kSecClassGenericPassword, kSecAttrAccount: "b"] as CFDictionary, for: .match).matches(item))
    }

    @Test func whatCannotBeHonouredIsErrSecParam() {
        let refused: [([CFString: Any], KeychainQuery.Use)] = [
            ([kSecAttrService: "s"], .search),                                                  // no class
            ([kSecClass: "nonsense", kSecAttrService: "s"], .search),                                            // unknown class
            ([kSecClass: kSecClassGenericPassword, "nonsense": true], .search),                                  // unknown key
            ([kSecClass: kSecClassGenericPassword, kSecAttrServer: "example.com"], .search),                    // internet attribute
            ([kSecClass: kSecClassGenericPassword, kSecMatchLimit: 0], .search),                                // no item
            ([kSecClass: kSecClassGenericPassword, kSecAttrAccount: Data([0xFF])], .match),                     // not UTF-8
            ([kSecClass: kSecClassGenericPassword, kSecAttrAccessible: kSecAttrAccessibleAlways,
              kSecAttrAccessControl: SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAlways, [], nil)!], .add),  // both
            ([kSecClass: kSecClassGenericPassword, kSecValueData: Data()], .search),                             // data in a search
            ([kSecClass: kSecClassGenericPassword, kSecMatchLimit: "m_LimitTwo"], .search),                     // unknown limit
            ([kSecClass: kSecClassGenericPassword, kSecAttrAccessible: "whenUnlocked"], .match),                // not Apple's constant
            ([kSecClass: kSecClassGenericPassword, kSecAttrService: 7], .match),                                // wrong type
            ([kSecClass: kSecClassGenericPassword, kSecReturnData: true], .match),                              // return in a delete
        ]
        for (query, use) in refused {
            #expect(throws: KeychainStatus(status: errSecParam), "\(query)") { try KeychainQuery(query as CFDictionary, for: use) }
        }
    }

    @Test func addWithoutAServiceHasTheEmptyServiceAsOnIOS() throws {
        let query = try KeychainQuery([kSecClass: kSecClassGenericPassword, kSecAttrAccount: Data("a".utf8)] as CFDictionary, for: .add)
        #expect(query.newItem().service == "" && query.newItem().account == "a")
    }

    @Test func statusesAreApplesValues() {
        #expect([errSecSuccess, errSecItemNotFound, errSecDuplicateItem, errSecInteractionNotAllowed, errSecParam, errSecNotAvailable]
                == [0, -25300, -25299, -25308, -50, -25291])
        let mapped: [(ExitCode, OSStatus)] = [(.refusedByLockState, errSecInteractionNotAllowed), (.notFound, errSecItemNotFound),
                                              (.alreadyExists, errSecDuplicateItem), (.usage, errSecParam),
                                              (.failure, errSecNotAvailable)]
        for (exitCode, status) in mapped {
            #expect(KeychainStatus(ControlFailure(exitCode, "")).status == status)
        }
    }

    @Test func returnedAttributesUseApplesKeys() {
        let item = ItemAttributes(service: "s", account: "a", comment: "c", generic: [9], accessibility: .always, created: 10, modified: 20)
        let attributes = Keychain.attributeDictionary(item)
        #expect(Set(attributes.keys) == Set([kSecClass, kSecAttrService, kSecAttrAccount, kSecAttrAccessible, kSecAttrCreationDate,
                                             kSecAttrModificationDate, kSecAttrComment, kSecAttrGeneric, kSecAttrSynchronizable]
                                            .map { $0 as String }))
        #expect(attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAlways as String)
        #expect(attributes[kSecAttrGeneric as String] as? Data == Data([9]))
        #expect(attributes[kSecAttrModificationDate as String] as? Date == Date(timeIntervalSince1970: 20))
    }
}

extension KeychainQuery {
    /// Whether the daemon would return `item` for this query: the matcher it runs
    /// (`ItemQuery.matches`) with the query the library sends.
    func matches(_ item: ItemAttributes) -> Bool { itemQuery?.matches(item) ?? false }
}
