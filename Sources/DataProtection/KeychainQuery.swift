import Foundation
import ProtfsDomain

/// A `SecItem` dictionary read into what the item requests need (docs/DATAPROTECTION.md).
/// Whatever the protfs keychain cannot honour is refused with Apple's status, never silently
/// ignored: an unknown key or a value of the wrong type is `errSecParam`, keys, certificates
/// and identities or synchronizing are `errSecUnimplemented`, an access control that needs a prompt is
/// `errSecAuthFailed`.
struct KeychainQuery {
    var service: String?
    var account: String?
    var label: String?
    var description: String?
    var comment: String?
    var generic: Data?
    var accessibility: ItemAccessibility?
    /// `kSecAttrAccessGroup`: kept with the item (docs/DATAPROTECTION.md), and matched; nil:
    /// the program's application identifier.
    var accessGroup: String?
    /// `kSecValueData`: the caller's bytes, copied into locked memory only to be sent.
    var secret: Data?
    var returnData = false
    var returnAttributes = false
    var returnPersistentRef = false
    /// `kSecMatchLimit`: how many items a search returns; 1 returns one value, any other
    /// limit an array.
    var limit = 1
    /// Whether the dictionary is `SecItemCopyMatching`'s (or `SecItemAdd`'s, which returns the
    /// item it added).
    var isSearch = false
    /// Whether the dictionary named `kSecClass` (queries need it; update's attributes do not).
    var hasClass = false
    /// The internet password attributes, for a query of `kSecClassInternetPassword`; nil for
    /// generic passwords.
    var internet: InternetPasswordQuery?
    /// Whether `kSecAttrAccount` was given as `Data`: iOS returns it as it was given.
    var accountIsData = false
    /// `kSecAttrSynchronizable` true in a search: only synchronized items, of which there
    /// are none.
    var onlySynchronized = false

    /// The keys each call accepts.
    enum Use {
        case add, match, search, changes

        var keys: Set<String> {
            let changeable: Set<String> = [kSecAttrService, kSecAttrAccount, kSecAttrLabel, kSecAttrDescription, kSecAttrComment,
                                           kSecAttrGeneric, kSecAttrAccessible, kSecAttrAccessControl, kSecAttrAccessGroup,
                                           kSecAttrSynchronizable]
            let common = changeable.union(KeychainQuery.internetAttributes)
                .union([kSecClass, kSecUseDataProtectionKeychain, kSecUseAuthenticationUI, kSecUseOperationPrompt])
            switch self {
            case .add: return common.union([kSecValueData, kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef])
            case .match: return common.union([kSecValuePersistentRef])
            case .search: return common.union([kSecValuePersistentRef, kSecReturnData, kSecReturnAttributes,
                                               kSecReturnPersistentRef, kSecMatchLimit])
            case .changes: return changeable.union([kSecValueData])
            }
        }
    }

    /// The attributes of Apple's internet passwords: understood, so that such a query is
    /// refused for its class (`errSecUnimplemented`), not for an unknown key.
    static let internetAttributes: Set<String> = [kSecAttrServer, kSecAttrProtocol, kSecAttrPort, kSecAttrPath,
                                                  kSecAttrAuthenticationType, kSecAttrSecurityDomain]

    init(_ dictionary: CFDictionary, for use: Use) throws(KeychainStatus) {
        var entries: [String: Any] = [:]
        for (rawKey, rawValue) in dictionary {
            guard let key = rawKey as? String, use.keys.contains(key), let value = unwrapped(rawValue) else { throw .param }
            entries[key] = value
        }
        // The class first, so that another class is refused as such whatever else is asked.
        if let name = entries[kSecClass], try Self.isInternetPassword(try Self.string(name)) { internet = InternetPasswordQuery() }
        let keys = Set(entries.keys)
        var accessControl: SecAccessControl?
        for (key, value) in entries {
            switch key {
            case kSecClass: continue
            case kSecAttrService: service = try Self.text(value)
            case kSecAttrAccount:
                account = try Self.text(value)
                accountIsData = value is Data
            case kSecAttrLabel: label = try Self.string(value)
            case kSecAttrDescription: description = try Self.string(value)
            case kSecAttrComment: comment = try Self.string(value)
            case kSecAttrGeneric: generic = try Self.data(value)
            case kSecAttrAccessible:
                guard let found = ItemAccessibility(constant: try Self.string(value)) else { throw .param }
                accessibility = found
            case kSecAttrAccessControl:
                guard let control = value as? SecAccessControl else { throw .param }
                accessControl = control
            case kSecAttrAccessGroup:
                // Moving an item to another group would rewrite each match's own lookup
                // attributes: not implemented (docs/DATAPROTECTION.md).
                guard use != .changes else { throw .unimplemented }
                accessGroup = try Self.string(value)
            case kSecUseOperationPrompt: _ = try Self.string(value)
            case kSecAttrSynchronizable: onlySynchronized = try Self.synchronizable(value, use: use)
            case kSecUseDataProtectionKeychain: _ = try Self.bool(value)
            case kSecUseAuthenticationUI:
                guard [kSecUseAuthenticationUIAllow, kSecUseAuthenticationUIFail, kSecUseAuthenticationUISkip]
                    .contains(try Self.string(value)) else { throw .param }
            case kSecValueData: secret = try Self.data(value)
            case kSecValuePersistentRef:
                guard let reference = PersistentReference(try Self.data(value)) else { throw .param }
                service = reference.service
                account = reference.account
            case kSecReturnData: returnData = try Self.bool(value)
            case kSecReturnAttributes: returnAttributes = try Self.bool(value)
            case kSecReturnPersistentRef: returnPersistentRef = try Self.bool(value)
            case kSecMatchLimit: limit = try Self.limit(value)
            default:
                // An internet password's attribute: refused below for a generic password.
                if internet != nil, try !(internet?.read(key, value) ?? false) { throw .param }
            }
        }
        hasClass = keys.contains(kSecClass)
        isSearch = use == .search || use == .add
        if use != .changes && !hasClass { throw .param }
        if let accessControl {
            // Apple refuses both at once: the access control carries the accessibility.
            guard accessibility == nil else { throw .param }
            accessibility = try accessControl.usableAccessibility()
        }
        if internet == nil ? !keys.isDisjoint(with: Self.internetAttributes) : keys.contains(kSecAttrService) {
            throw .param  // each class has its own attributes
        }
        try checkLengths()
        if use == .add, let internet, internet.newPassword.service.utf8.count > ItemLimits.maximumTextLength { throw .param }
    }

    /// What the daemon would refuse for its length is `errSecParam` here, before anything is
    /// sent: a secret or an attribute too long for an item (or for a control message).
    private func checkLengths() throws(KeychainStatus) {
        if let secret, secret.count > ItemLimits.maximumSecretLength { throw .param }
        if let generic, generic.count > ItemLimits.maximumGenericLength { throw .param }
        for text in [service, account, label, description, comment, accessGroup] {
            if let text, text.utf8.count > ItemLimits.maximumTextLength { throw .param }
        }
    }

    /// The query the daemon matches items with (docs/CONTROL.md); nil when no item can match
    /// (`kSecAttrSynchronizable` true: nothing synchronizes).
    var itemQuery: ItemQuery? {
        guard !onlySynchronized else { return nil }
        var pairs = internet?.lookupAttributes ?? [:]
        var choices: [String: LookupAttributeChoice] = [:]
        if let accessGroup {
            pairs[Self.accessGroupAttribute] = accessGroup
        } else {
            // The program's own group; items of no group (the Secret Service's, protfsctl's,
            // earlier builds') only when the query names them, never by a class-wide match.
            choices[Self.accessGroupAttribute] = LookupAttributeChoice(values: [ProtfsKeychain.applicationIdentifier],
                                                                       orAbsent: namesItems)
        }
        // Updates and deletes act on every match, as on iOS; only a search has a limit.
        return ItemQuery(service: service, account: account, label: label, description: description, comment: comment,
                         generic: generic.map(Array.init), accessibility: accessibility, lookupAttributes: pairs,
                         absentLookupAttributes: internet == nil ? [InternetPassword.classAttribute] : [],
                         lookupAttributeChoices: choices, limit: limit == .max || !isSearch ? nil : limit, returnsSecrets: returnData)
    }

    /// Whether the query names the items it wants: by service, account, server or reference.
    private var namesItems: Bool {
        service != nil || account != nil || internet?.server != nil
    }

    /// The lookup attribute that keeps an item's access group.
    static let accessGroupAttribute = "protfs:accessGroup"

    /// The item `SecItemAdd` creates; without `kSecAttrService` its service is empty, and
    /// without `kSecAttrAccessGroup` its group is the program's application identifier, as on iOS.
    func newItem() -> ItemAttributes {
        let password = internet?.newPassword
        var item = ItemAttributes(service: password?.service ?? service ?? "", account: account ?? "", label: label ?? "",
                                  description: description ?? "", comment: comment ?? "", generic: generic.map(Array.init) ?? [],
                                  accessibility: accessibility ?? .default, lookupAttributes: password?.lookupAttributes ?? [:])
        if accountIsData { AccountType.markData(&item) }
        item.lookupAttributes[Self.accessGroupAttribute] = accessGroup ?? ProtfsKeychain.applicationIdentifier
        AccountType.showToSecretService(&item)
        return item
    }

    /// What `SecItemUpdate`'s attributes change besides the name (the secret travels apart).
    var changes: ItemChanges {
        ItemChanges(label: label, description: description, comment: comment, generic: generic.map(Array.init),
                    accessibility: accessibility)
    }

    /// Whether the result carries anything.
    var returnsSomething: Bool { returnData || returnAttributes || returnPersistentRef }

    /// The new service and account `SecItemUpdate`'s attributes give.
    var rename: ItemRename { ItemRename(service: service, account: account) }

    /// Generic and internet passwords are kept; Apple's other classes are known and not
    /// implemented.
    private static func isInternetPassword(_ name: String) throws(KeychainStatus) -> Bool {
        switch name {
        case kSecClassGenericPassword: return false
        case kSecClassInternetPassword: return true
        case kSecClassKey, kSecClassCertificate, kSecClassIdentity: throw .unimplemented
        default: throw .param
        }
    }

    /// `kSecAttrSynchronizable`: nothing synchronizes on protfs. False and "any" are every
    /// item; true finds none and cannot be given to an item.
    private static func synchronizable(_ value: Any, use: Use) throws(KeychainStatus) -> Bool {
        if let any = value as? String, any == kSecAttrSynchronizableAny, use != .add, use != .changes { return false }
        guard try bool(value) else { return false }
        guard use == .search || use == .match else { throw .unimplemented }
        return true
    }

    /// `kSecMatchLimitOne`, `kSecMatchLimitAll` or a positive number.
    private static func limit(_ value: Any) throws(KeychainStatus) -> Int {
        if let name = value as? String {
            switch name {
            case kSecMatchLimitOne: return 1
            case kSecMatchLimitAll: return .max
            default: throw .param
            }
        }
        guard let number = value as? NSNumber, number.intValue > 0 else { throw .param }
        return number.intValue
    }

    private static func string(_ value: Any) throws(KeychainStatus) -> String {
        guard let string = value as? String else { throw .param }
        return string
    }

    /// A service or account: a string, or its UTF-8 bytes as `Data` (as many wrappers pass it).
    private static func text(_ value: Any) throws(KeychainStatus) -> String {
        if let data = value as? Data {
            guard let text = String(validating: data, as: UTF8.self) else { throw .param }
            return text
        }
        return try string(value)
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
