/// A keychain item's attributes: everything but its secret (SPEC section 6). Sealed under
/// the vault's metadata key, so they are readable in every lock state.
public struct ItemAttributes: Sendable, Equatable {
    public var service: String
    public var account: String
    public var label: String
    public var description: String
    public var comment: String
    /// Application bytes (`kSecAttrGeneric`).
    public var generic: [UInt8]
    public var accessibility: ItemAccessibility
    /// Seconds since the Unix epoch.
    public var created: Int64
    public var modified: Int64

    public init(service: String, account: String, label: String = "", description: String = "", comment: String = "",
                generic: [UInt8] = [], accessibility: ItemAccessibility = .default, created: Int64 = 0, modified: Int64 = 0) {
        self.service = service
        self.account = account
        self.label = label
        self.description = description
        self.comment = comment
        self.generic = generic
        self.accessibility = accessibility
        self.created = created
        self.modified = modified
    }
}

/// What an `update` changes; nil leaves an attribute as it is.
public struct ItemChanges: Sendable, Equatable {
    public var label: String?
    public var description: String?
    public var comment: String?
    public var generic: [UInt8]?
    public var accessibility: ItemAccessibility?

    public init(label: String? = nil, description: String? = nil, comment: String? = nil, generic: [UInt8]? = nil,
                accessibility: ItemAccessibility? = nil) {
        self.label = label
        self.description = description
        self.comment = comment
        self.generic = generic
        self.accessibility = accessibility
    }
}

/// The bounds of SPEC section 6 and of the item store.
public enum ItemLimits {
    /// A secret's bytes: more is a usage error (a file of the same class is the place).
    public static let maximumSecretLength = 64 * 1024
    /// Bytes of each text attribute (service, account, label, description, comment).
    public static let maximumTextLength = 1024
    public static let maximumGenericLength = 4096
    /// Per owner uid.
    public static let maximumItemsPerOwner = 1024
    public static let maximumSecretBytesPerOwner = 16 * 1024 * 1024
    /// Between all owners other than root and the mounting user. Any uid that reaches the
    /// control socket may keep items, and a user namespace hands one user up to 65,536 uids:
    /// per-owner bounds alone would let them fill the backing disk and the daemon's index.
    /// Root and the mounting user keep their per-owner room whatever the others hold.
    public static let maximumItemsOfOtherUsers = 8192
    public static let maximumSecretBytesOfOtherUsers = 64 * 1024 * 1024

    /// What is wrong with attributes as given, or nil.
    public static func problem(service: String, account: String, label: String?, description: String?, comment: String?,
                               generic: [UInt8]?) -> String? {
        let texts = [("service", service), ("account", account), ("label", label ?? ""),
                     ("description", description ?? ""), ("comment", comment ?? "")]
        for (name, text) in texts where text.utf8.count > maximumTextLength {
            return "the \(name) has \(text.utf8.count) bytes; at most \(maximumTextLength) are allowed"
        }
        if let generic, generic.count > maximumGenericLength {
            return "the generic attribute has \(generic.count) bytes; at most \(maximumGenericLength) are allowed"
        }
        return nil
    }
}
