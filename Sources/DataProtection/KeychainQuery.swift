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
    /// `keptAttributes` given, as their lookup attribute values.
    var kept: [String: String] = [:]

    /// The keys each call accepts.
    enum Use {
        case add, match, search, changes

        var keys: Set<String> {
            let changeable = strings(kSecAttrService, kSecAttrAccount, kSecAttrLabel, kSecAttrDescription, kSecAttrComment,
                                     kSecAttrGeneric, kSecAttrAccessible, kSecAttrAccessControl, kSecAttrAccessGroup,
                                     kSecAttrSynchronizable)
            let common = changeable.union(KeychainQuery.internetAttributes).union(KeychainQuery.keptAttributes)
                .union(strings(kSecClass, kSecUseDataProtectionKeychain, kSecUseAuthenticationUI, kSecUseOperationPrompt,
                               kSecUseAuthenticationContext, kSecUseNoAuthenticationUI))
            switch self {
            case .add:
                return common.union(strings(kSecValueData, kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef, kSecReturnRef))
            // Wrappers pass the item they add as SecItemUpdate's query too: its data is not matched.
            case .match: return common.union(strings(kSecValuePersistentRef, kSecValueRef, kSecValueData))
            case .search: return common.union(strings(kSecValuePersistentRef, kSecValueRef, kSecReturnData, kSecReturnAttributes,
                                                      kSecReturnPersistentRef, kSecReturnRef, kSecMatchLimit))
            case .changes: return changeable.union(KeychainQuery.keptAttributes).union(strings(kSecValueData))
            }
        }

        /// Who takes the dictionary, for the reasons of `errSecParam`.
        var caller: String {
            switch self {
            case .add: "SecItemAdd"
            case .match: "the query of SecItemUpdate or SecItemDelete"
            case .search: "SecItemCopyMatching"
            case .changes: "the attributes SecItemUpdate changes"
            }
        }
    }

    /// The attributes of Apple's internet passwords: understood, so that such a query is
    /// refused for its class (`errSecUnimplemented`), not for an unknown key.
    static let internetAttributes = strings(kSecAttrServer, kSecAttrProtocol, kSecAttrPort, kSecAttrPath, kSecAttrAuthenticationType,
                                            kSecAttrSecurityDomain)

    /// Attributes kept with the item by their raw keys (`kept`), matched and returned.
    static let keptAttributes: Set<String> = strings(kSecAttrCreator, kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative)

    init(_ dictionary: CFDictionary, for use: Use) throws(KeychainStatus) {
        var entries: [String: QueryValue] = [:]
        for (rawKey, rawValue) in dictionary {
            guard let key = rawKey as? String else { throw .param("a key is a \(type(of: rawKey)), not a String") }
            guard use.keys.contains(key) else { throw .param("\(KeyNames.name(of: key)) is not a key \(use.caller) takes") }
            guard let value = unwrapped(rawValue) else { throw .param(Self.nilReason(key)) }
            entries[key] = QueryValue(key: key, value: value)
        }
        // The class first, so that another class is refused as such whatever else is asked.
        if let name = entries[kSecClass as String], try Self.isInternetPassword(name) { internet = InternetPasswordQuery() }
        let keys = Set(entries.keys)
        var accessControl: SecAccessControl?
        for (key, entry) in entries {
            switch key {
            case kSecClass: continue
            case kSecAttrService: service = try entry.text()
            case kSecAttrAccount:
                account = try entry.text()
                accountIsData = entry.value is Data
            case kSecAttrLabel: label = try entry.string()
            case kSecAttrDescription: description = try entry.string()
            case kSecAttrComment: comment = try entry.string()
            case kSecAttrGeneric: generic = try entry.data()
            case kSecAttrAccessible:
                guard let found = ItemAccessibility(constant: try entry.string()) else {
                    throw .param("kSecAttrAccessible is not one of the seven kSecAttrAccessible... values")
                }
                accessibility = found
            case kSecAttrAccessControl:
                guard let control = entry.value as? SecAccessControl else { throw entry.wrongType("a SecAccessControl") }
                accessControl = control
            case kSecAttrAccessGroup:
                // Moving an item to another group would rewrite each match's own lookup
                // attributes: not implemented (docs/DATAPROTECTION.md).
                guard use != .changes else { throw .unimplemented }
                accessGroup = try entry.string()
            case kSecAttrCreator, kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative: try readKept(entry, use: use)
            case kSecUseOperationPrompt: _ = try entry.string()
            case kSecAttrSynchronizable: onlySynchronized = try Self.synchronizable(entry, use: use)
            case kSecUseDataProtectionKeychain, kSecUseNoAuthenticationUI: _ = try entry.bool()
            case kSecUseAuthenticationContext: continue  // an LAContext: protfs never prompts
            case kSecUseAuthenticationUI:
                _ = try entry.oneOf([kSecUseAuthenticationUIAllow, kSecUseAuthenticationUIFail, kSecUseAuthenticationUISkip],
                                    "one of the kSecUseAuthenticationUI... values")
            case kSecValueData: secret = try entry.data()
            case kSecValuePersistentRef:
                guard let reference = PersistentReference(try entry.data()) else {
                    throw .param("kSecValuePersistentRef is not a reference kSecReturnPersistentRef returned")
                }
                service = reference.service
                account = reference.account
            case kSecValueRef: throw .unimplemented  // passwords have no object reference
            case kSecReturnData: returnData = try entry.bool()
            case kSecReturnAttributes: returnAttributes = try entry.bool()
            case kSecReturnPersistentRef: returnPersistentRef = try entry.bool()
            case kSecReturnRef: if try entry.bool() { throw .unimplemented }
            case kSecMatchLimit: limit = try Self.limit(entry)
            default:
                // An internet password's attribute: refused below for a generic password.
                if internet != nil, try !(internet?.read(entry) ?? false) { throw .param("\(entry.name) is not known") }
            }
        }
        hasClass = keys.contains(kSecClass as String)
        isSearch = use == .search || use == .add
        if use != .changes && !hasClass { throw .param("kSecClass is missing: \(use.caller) needs it") }
        if let accessControl {
            // Apple refuses both at once: the access control carries the accessibility.
            guard accessibility == nil else { throw .param("kSecAttrAccessible and kSecAttrAccessControl are both given") }
            accessibility = try accessControl.usableAccessibility()
        }
        if internet == nil, let other = keys.first(where: Self.internetAttributes.contains) {
            throw .param("\(KeyNames.name(of: other)) is an attribute of kSecClassInternetPassword, not of kSecClassGenericPassword")
        }
        if internet != nil, keys.contains(kSecAttrService as String) {
            throw .param("kSecAttrService is an attribute of kSecClassGenericPassword; an internet password has kSecAttrServer")
        }
        try checkLengths()
        if use == .add, let internet, internet.newPassword.service.utf8.count > ItemLimits.maximumTextLength {
            throw .param("the internet password's server, path and security domain together are too long for an item")
        }
    }

    /// Why a nil value is refused; the common cause on Linux, for a service or account.
    private static func nilReason(_ key: String) -> String {
        let reason = "\(KeyNames.name(of: key)) is nil"
        guard key == kSecAttrService as String || key == kSecAttrAccount as String else { return reason }
        return reason + " (on Linux Bundle.main.bundleIdentifier is nil without an Info.plist beside the executable: "
            + "docs/DATAPROTECTION.md)"
    }

    /// The attributes kept as lookup attributes by their raw keys, matched and returned:
    /// creator and type (numbers), invisible and negative (booleans). Changing them is not
    /// implemented, as for an access group.
    private mutating func readKept(_ entry: QueryValue, use: Use) throws(KeychainStatus) {
        guard use != .changes else { throw .unimplemented }
        switch entry.key {
        case kSecAttrCreator, kSecAttrType: kept[entry.key] = String(try entry.number())
        default: kept[entry.key] = try entry.bool() ? "1" : "0"
        }
    }

    /// What the daemon would refuse for its length is `errSecParam` here, before anything is
    /// sent: a secret or an attribute too long for an item (or for a control message).
    private func checkLengths() throws(KeychainStatus) {
        if let secret, secret.count > ItemLimits.maximumSecretLength {
            throw .param("kSecValueData has \(secret.count) bytes; an item holds at most \(ItemLimits.maximumSecretLength) "
                         + "(keep larger secrets in a file of the same class)")
        }
        if let generic, generic.count > ItemLimits.maximumGenericLength {
            throw .param("kSecAttrGeneric has \(generic.count) bytes; at most \(ItemLimits.maximumGenericLength) are allowed")
        }
        for (key, text) in [(kSecAttrService, service), (kSecAttrAccount, account), (kSecAttrLabel, label),
                            (kSecAttrDescription, description), (kSecAttrComment, comment), (kSecAttrAccessGroup, accessGroup)] {
            if let text, text.utf8.count > ItemLimits.maximumTextLength {
                throw .param("\(KeyNames.name(of: key as String)) has \(text.utf8.count) bytes; "
                             + "at most \(ItemLimits.maximumTextLength) are allowed")
            }
        }
    }

    /// The query the daemon matches items with (docs/CONTROL.md); nil when no item can match
    /// (`kSecAttrSynchronizable` true: nothing synchronizes).
    var itemQuery: ItemQuery? {
        guard !onlySynchronized else { return nil }
        var pairs = internet?.lookupAttributes ?? [:]
        var choices: [String: LookupAttributeChoice] = [:]
        for (key, value) in kept {
            // A boolean false is also every item that never said (Apple's default).
            if value == "0" { choices[key] = LookupAttributeChoice(values: ["0"], orAbsent: true) } else { pairs[key] = value }
        }
        if let accessGroup {
            pairs[Self.accessGroupAttribute] = accessGroup
        } else {
            // The program's own groups; items of no group (the Secret Service's, protfsctl's,
            // earlier builds') only when the query names them, never by a class-wide match.
            choices[Self.accessGroupAttribute] = LookupAttributeChoice(values: Set(ProtfsKeychain.accessGroups), orAbsent: namesItems)
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
        item.lookupAttributes.merge(kept) { $1 }
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
    private static func isInternetPassword(_ entry: QueryValue) throws(KeychainStatus) -> Bool {
        switch try entry.string() {
        case kSecClassGenericPassword: return false
        case kSecClassInternetPassword: return true
        case kSecClassKey, kSecClassCertificate, kSecClassIdentity: throw .unimplemented
        default: throw .param("kSecClass is not one of the kSecClass... values")
        }
    }

    /// `kSecAttrSynchronizable`: nothing synchronizes on protfs. False and "any" are every
    /// item; true finds none and cannot be given to an item.
    private static func synchronizable(_ entry: QueryValue, use: Use) throws(KeychainStatus) -> Bool {
        if let any = entry.value as? String, any == kSecAttrSynchronizableAny as String, use != .add, use != .changes { return false }
        guard try entry.bool() else { return false }
        guard use == .search || use == .match else { throw .unimplemented }
        return true
    }

    /// `kSecMatchLimitOne`, `kSecMatchLimitAll` or a positive number.
    private static func limit(_ entry: QueryValue) throws(KeychainStatus) -> Int {
        if entry.value is String {
            return try entry.oneOf([kSecMatchLimitOne, kSecMatchLimitAll], "kSecMatchLimitOne, kSecMatchLimitAll or a number")
                == kSecMatchLimitOne as String ? 1 : .max
        }
        let number = try entry.number()
        guard number > 0 else { throw .param("kSecMatchLimit is \(number); a limit is at least 1") }
        return number
    }
}

/// The value inside any depth of `Optional` (`kCFBooleanTrue` is an implicitly unwrapped
/// optional, so a dictionary literal holds it wrapped); nil for none, and for `NSNull`, which
/// a nil optional becomes in `query as CFDictionary`.
func unwrapped(_ value: Any) -> Any? {
    if value is NSNull { return nil }
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    return mirror.children.first.flatMap { unwrapped($0.value) }
}

extension ItemAccessibility {
    /// The value of Apple's `kSecAttrAccessible...` constant.
    var constant: String {
        switch self {
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked as String
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock as String
        case .always: kSecAttrAccessibleAlways as String
        case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as String
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String
        case .alwaysThisDeviceOnly: kSecAttrAccessibleAlwaysThisDeviceOnly as String
        }
    }

    init?(constant: String) {
        guard let found = Self.allCases.first(where: { $0.constant == constant }) else { return nil }
        self = found
    }
}
