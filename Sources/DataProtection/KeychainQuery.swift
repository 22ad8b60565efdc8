import Foundation
import ProtfsDomain

/// A `SecItem` dictionary read into what the item requests need (docs/CONTROL.md and README.md).
/// Whatever the protfs keychain cannot honour is `errSecParam`, never silently ignored: an
/// unknown key, another item class, a value of the wrong type.
struct KeychainQuery {
    var service: String?
    var account: String?
    var label: String?
    var description: String?
    var comment: String?
    var generic: Data?
    var accessibility: ItemAccessibility?
    /// `kSecValueData`: the caller's bytes, copied into locked memory only to be sent.
    var secret: Data?
    var returnData = false
    var returnAttributes = false
    var matchAll = false
    /// Whether the dictionary named `kSecClass` (queries need it; update's attributes do not).
    var hasClass = false

    /// The keys each call accepts.
    enum Use {
        case add, match, search, changes

        var keys: Set<String> {
            let attributes: Set<String> = [kSecAttrService, kSecAttrAccount, kSecAttrLabel, kSecAttrDescription,
                                            kSecAttrComment, kSecAttrGeneric, kSecAttrAccessible]
            switch self {
            case .add: return attributes.union([kSecClass, kSecValueData, kSecReturnData, kSecReturnAttributes])
            case .match: return attributes.union([kSecClass])
            case .search: return attributes.union([kSecClass, kSecReturnData, kSecReturnAttributes, kSecMatchLimit])
            case .changes: return [kSecAttrLabel, kSecAttrDescription, kSecAttrComment, kSecAttrGeneric, kSecAttrAccessible,
                                   kSecValueData]
            }
        }
    }

    init(_ dictionary: CFDictionary, for use: Use) throws(KeychainStatus) {
        for (rawKey, rawValue) in dictionary {
            guard let key = rawKey as? String, use.keys.contains(key), let value = unwrapped(rawValue) else { throw .param }
            switch key {
            case kSecClass:
                guard try Self.string(value) == kSecClassGenericPassword else { throw .param }
                hasClass = true
            case kSecAttrService: service = try Self.string(value)
            case kSecAttrAccount: account = try Self.string(value)
            case kSecAttrLabel: label = try Self.string(value)
            case kSecAttrDescription: description = try Self.string(value)
            case kSecAttrComment: comment = try Self.string(value)
            case kSecAttrGeneric: generic = try Self.data(value)
            case kSecAttrAccessible:
                guard let found = ItemAccessibility(constant: try Self.string(value)) else { throw .param }
                accessibility = found
            case kSecValueData: secret = try Self.data(value)
            case kSecReturnData: returnData = try Self.bool(value)
            case kSecReturnAttributes: returnAttributes = try Self.bool(value)
            case kSecMatchLimit:
                switch try Self.string(value) {
                case kSecMatchLimitOne: matchAll = false
                case kSecMatchLimitAll: matchAll = true
                default: throw .param
                }
            default: throw .param
            }
        }
        if use != .changes && !hasClass { throw .param }
    }

    /// Whether an item has every attribute the query names.
    func matches(_ item: ItemAttributes) -> Bool {
        (service.map { $0 == item.service } ?? true) && (account.map { $0 == item.account } ?? true)
            && (label.map { $0 == item.label } ?? true) && (description.map { $0 == item.description } ?? true)
            && (comment.map { $0 == item.comment } ?? true) && (generic.map { Array($0) == item.generic } ?? true)
            && (accessibility.map { $0 == item.accessibility } ?? true)
    }

    /// The item `SecItemAdd` creates; protfs requires a service.
    func newItem() throws(KeychainStatus) -> ItemAttributes {
        guard let service, !service.isEmpty else { throw .param }
        return ItemAttributes(service: service, account: account ?? "", label: label ?? "", description: description ?? "",
                              comment: comment ?? "", generic: generic.map(Array.init) ?? [],
                              accessibility: accessibility ?? .default)
    }

    /// What `SecItemUpdate`'s attributes change (the secret travels apart).
    var changes: ItemChanges {
        ItemChanges(label: label, description: description, comment: comment, generic: generic.map(Array.init),
                    accessibility: accessibility)
    }

    private static func string(_ value: Any) throws(KeychainStatus) -> String {
        guard let string = value as? String else { throw .param }
        return string
    }

    private static func data(_ value: Any) throws(KeychainStatus) -> Data {
        guard let data = value as? Data else { throw .param }
        return data
    }

    private static func bool(_ value: Any) throws(KeychainStatus) -> Bool {
        if let bool = value as? Bool { return bool }
        if let number = value as? NSNumber { return number.boolValue }
        throw .param
    }
}

/// The value inside any depth of `Optional` (`kCFBooleanTrue` is an implicitly unwrapped
/// optional, so a dictionary literal holds it wrapped); nil for none.
private func unwrapped(_ value: Any) -> Any? {
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    return mirror.children.first.flatMap { unwrapped($0.value) }
}

extension ItemAccessibility {
    /// The value of Apple's `kSecAttrAccessible...` constant.
    var constant: String {
        switch self {
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
        case .always: kSecAttrAccessibleAlways
        case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .alwaysThisDeviceOnly: kSecAttrAccessibleAlwaysThisDeviceOnly
        }
    }

    init?(constant: String) {
        guard let found = Self.allCases.first(where: { $0.constant == constant }) else { return nil }
        self = found
    }
}
