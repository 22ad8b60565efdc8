import Foundation
import ProtfsDomain

/// Adds a generic password to the protfs keychain, as the Security framework's
/// `SecItemAdd` does on iOS:
///
/// ```swift
/// let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
///                             kSecAttrService as String: "api.example.com",
///                             kSecAttrAccount as String: "alice",
///                             kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
///                             kSecValueData as String: token]
/// let status = SecItemAdd(query as CFDictionary, nil)
/// ```
///
/// The item belongs to the calling user. `kSecAttrService` and `kSecAttrAccount` default to
/// empty, `kSecAttrAccessible` to `kSecAttrAccessibleWhenUnlocked`. With `kSecReturnData`,
/// `kSecReturnAttributes` or `kSecReturnPersistentRef`, `result` gets what
/// `SecItemCopyMatching` would return for the new item.
///
/// - Returns: `errSecSuccess`, `errSecDuplicateItem`, `errSecInteractionNotAllowed` (the
///   item's class key is not available now), `errSecParam` (a secret over 64 KiB, an
///   attribute too long), `errSecUnimplemented`, `errSecAuthFailed` or `errSecNotAvailable`.
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    Keychain.status { () throws(KeychainStatus) in
        let query = try KeychainQuery(attributes, for: .add)
        var item = query.newItem()
        InsertionOrder.mark(&item)
        let vault = try KeychainVault.find()
        try vault.add(item, secret: query.secret ?? Data())
        guard let result, query.returnsSomething else { return }
        // The item as stored (its times), found again by its name.
        var found = query
        found.limit = 1
        guard var match = found.itemQuery else { return }
        match.service = item.service
        match.account = item.account
        result.pointee = Keychain.copy(found, from: try vault.search(match))
    }
}

/// Finds the caller's generic passwords that have every attribute the query names, as
/// `SecItemCopyMatching` does on iOS:
///
/// ```swift
/// var result: CFTypeRef?
/// let status = SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword,
///                                   kSecAttrService as String: "api.example.com",
///                                   kSecReturnData as String: true] as CFDictionary, &result)
/// let token = result as? Data
/// ```
///
/// `result` is `Data` for `kSecReturnData` (or `kSecReturnPersistentRef`) alone, else a
/// `[String: Any]` dictionary of what was asked (attributes, `kSecValueData`,
/// `kSecValuePersistentRef`), an array of those with `kSecMatchLimitAll` or a limit above 1,
/// and nil when nothing is to be returned. The data is the
/// caller's; the library keeps no copy.
///
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecInteractionNotAllowed` (a
///   secret asked for while its class key is not available), `errSecParam` or
///   `errSecNotAvailable`.
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    Keychain.status { () throws(KeychainStatus) in
        let parsed = try KeychainQuery(query, for: .search)
        let vault = try KeychainVault.find()
        guard let match = parsed.itemQuery else { throw .itemNotFound }
        let found = try vault.search(match)  // also when `result` is nil: the status says whether any matched
        result?.pointee = Keychain.copy(parsed, from: found)
    }
}

/// Changes every matching item of the caller, as `SecItemUpdate` does on iOS.
/// `attributesToUpdate` may change `kSecAttrLabel`, `kSecAttrDescription`,
/// `kSecAttrComment`, `kSecAttrGeneric`, `kSecAttrAccessible` and `kSecValueData`, and
/// rename an item (`kSecAttrService`, `kSecAttrAccount`) unless that makes a duplicate
/// (`errSecDuplicateItem`); an attribute that repeats the query's value changes nothing and
/// is accepted whatever its key. The daemon matches and changes every item in one request, and
/// changes none when it refuses one. A rename seals the item under its new name, so it needs
/// the item's secret (its class key available now).
///
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecDuplicateItem`,
///   `errSecInteractionNotAllowed` (a new secret or accessibility, or a rename, while a class
///   key it needs is not available), `errSecParam` or `errSecNotAvailable`.
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    Keychain.status { () throws(KeychainStatus) in
        let parsed = try KeychainQuery(query, for: .match)
        let update = try KeychainQuery(UnchangedAttributes.removed(from: attributesToUpdate, sameAs: query), for: .changes)
        // An internet password's service is its server, protocol, port, path and so on.
        if parsed.internet != nil && update.service != nil {
            throw .param("kSecAttrService cannot rename an internet password: its service is its server, protocol, port and path")
        }
        let vault = try KeychainVault.find()
        guard let match = parsed.itemQuery else { throw .itemNotFound }
        try vault.update(match, changes: update.changes, rename: update.rename, secret: update.secret)
    }
}

/// Deletes every matching item of the caller, as `SecItemDelete` does on iOS; works in
/// every lock state.
///
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecParam` or `errSecNotAvailable`.
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    Keychain.status { () throws(KeychainStatus) in
        let parsed = try KeychainQuery(query, for: .match)
        let vault = try KeychainVault.find()
        guard let match = parsed.itemQuery else { throw .itemNotFound }
        try vault.delete(match)
    }
}

/// What `SecItem*` share: matching, the result shapes, statuses.
enum Keychain {
    static func status(_ body: () throws(KeychainStatus) -> Void) -> OSStatus {
        do {
            try body()
            return errSecSuccess
        } catch {
            if error.status == errSecParam { ParamExplanation.record(error.reason ?? "a parameter was not valid") }
            return error.status
        }
    }

    /// The result `SecItemCopyMatching` gives for the items found, nil when the query returns
    /// nothing.
    static func copy(_ query: KeychainQuery, from found: [(item: ItemAttributes, secret: NSData?)]) -> CFTypeRef? {
        guard query.returnsSomething else { return nil }
        var values: [Any] = []
        for (item, secret) in InsertionOrder.sorted(found) {
            let reference = query.returnPersistentRef ? PersistentReference(service: item.service, account: item.account).data : nil
            if query.returnAttributes || (secret != nil && reference != nil) {
                var attributes = query.returnAttributes ? attributeDictionary(item) : [:]
                attributes[kSecValueData as String] = secret
                attributes[kSecValuePersistentRef as String] = reference
                values.append(NSDictionary(dictionary: attributes))
            } else if let secret {
                values.append(secret)
            } else if let reference {
                values.append(reference)
            }
        }
        return query.limit == 1 ? values.first as CFTypeRef? : NSArray(array: values)
    }

    /// An item's attributes as iOS returns them (empty texts and bytes left out).
    static func attributeDictionary(_ item: ItemAttributes) -> [String: Any] {
        var attributes: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword as String,
            kSecAttrAccount as String: item.account,
            kSecAttrAccessible as String: item.accessibility.constant,
            kSecAttrCreationDate as String: Date(timeIntervalSince1970: TimeInterval(item.created)),
            kSecAttrModificationDate as String: Date(timeIntervalSince1970: TimeInterval(item.modified)),
            kSecAttrSynchronizable as String: false,
        ]
        for (key, text) in [(kSecAttrLabel, item.label), (kSecAttrDescription, item.description), (kSecAttrComment, item.comment)]
        where !text.isEmpty {
            attributes[key as String] = text
        }
        if !item.generic.isEmpty { attributes[kSecAttrGeneric as String] = Data(item.generic) }
        if AccountType.isData(item) { attributes[kSecAttrAccount as String] = Data(item.account.utf8) }
        if let group = item.lookupAttributes[KeychainQuery.accessGroupAttribute] { attributes[kSecAttrAccessGroup as String] = group }
        for key in KeychainQuery.keptAttributes {
            guard let value = item.lookupAttributes[key] else { continue }
            attributes[key] = key == kSecAttrCreator as String || key == kSecAttrType as String ? (Int(value) ?? 0) as Any : value == "1"
        }
        if let password = InternetPassword(item) {
            attributes[kSecClass as String] = kSecClassInternetPassword as String
            attributes.merge(password.attributeDictionary) { $1 }
        } else {
            attributes[kSecAttrService as String] = item.service
        }
        return attributes
    }
}
