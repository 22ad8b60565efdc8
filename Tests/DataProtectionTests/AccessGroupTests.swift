@testable import DataProtection
import Foundation
import ProtfsDomain
import Testing

/// Each program its own keychain (docs/DATAPROTECTION.md): the groups a query without
/// `kSecAttrAccessGroup` reaches, and the group of an item added without one.
@Suite("DataProtection: access groups", .serialized)
struct AccessGroupTests {
    private static var named: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com", kSecAttrAccount as String: "alice"]
    }
    private static var wholeClass: [String: Any] { [kSecClass as String: kSecClassGenericPassword] }

    private static func item(group: String?) -> ItemAttributes {
        var item = ItemAttributes(service: "api.example.com", account: "alice")
        item.lookupAttributes[KeychainQuery.accessGroupAttribute] = group
        return item
    }

    @Test func anItemAddedWithoutAGroupIsInTheProgramsGroup() throws {
        let item = try KeychainQuery(Self.named as CFDictionary, for: .add).newItem()
        #expect(item.lookupAttributes[KeychainQuery.accessGroupAttribute] == ProtfsKeychain.applicationIdentifier)
    }

    @Test func aQueryWithoutAGroupReachesOnlyTheProgramsGroup() throws {
        let mine = Self.item(group: ProtfsKeychain.applicationIdentifier)
        let others = Self.item(group: "com.example.other")
        for query in [Self.named, Self.wholeClass] {
            for use in [KeychainQuery.Use.search, .match] {
                #expect(try KeychainQuery(query as CFDictionary, for: use).matches(mine))
                #expect(try !KeychainQuery(query as CFDictionary, for: use).matches(others))
            }
        }
        var explicit = Self.wholeClass
        explicit[kSecAttrAccessGroup as String] = "com.example.other"
        #expect(try KeychainQuery(explicit as CFDictionary, for: .match).matches(others))
        #expect(try !KeychainQuery(explicit as CFDictionary, for: .match).matches(mine))
    }

    /// Items of no group (the Secret Service's, protfsctl's, earlier builds'): a query that
    /// names them finds them, a class-wide one (a wipe) never does.
    @Test func itemsOfNoGroupAreReachedOnlyByName() throws {
        let unowned = Self.item(group: nil)
        #expect(try KeychainQuery(Self.named as CFDictionary, for: .match).matches(unowned))
        #expect(try KeychainQuery([kSecClass: kSecClassGenericPassword, kSecAttrAccount: "alice"] as CFDictionary, for: .match)
            .matches(unowned))
        #expect(try !KeychainQuery(Self.wholeClass as CFDictionary, for: .match).matches(unowned))
        #expect(try !KeychainQuery([kSecClass: kSecClassGenericPassword, kSecAttrLabel: ""] as CFDictionary, for: .match)
            .matches(unowned))
    }
}
