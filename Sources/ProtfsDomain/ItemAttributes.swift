/// A keychain item's attributes: everything but its secret (docs/CONTROL.md). Sealed under
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
    /// The free-form map by which the Secret Service finds items (its "lookup attributes",
    /// `a{ss}`, with `xdg:schema`); empty for most items made by `protfsctl` or `SecItemAdd`.
    public var lookupAttributes: [String: String]
    /// The MIME type of the secret as the Secret Service gives it (`text/plain`); empty when
    /// nobody said.
    public var contentType: String

    public init(service: String, account: String, label: String = "", description: String = "", comment: String = "",
                generic: [UInt8] = [], accessibility: ItemAccessibility = .default, created: Int64 = 0, modified: Int64 = 0,
                lookupAttributes: [String: String] = [:], contentType: String = "") {
        self.service = service
        self.account = account
        self.label = label
        self.description = description
        self.comment = comment
        self.generic = generic
        self.accessibility = accessibility
        self.created = created
        self.modified = modified
        self.lookupAttributes = lookupAttributes
        self.contentType = contentType
    }

    /// The attributes the Secret Service shows (docs/SECRETS.md, "One item, three views"): the
    /// item's lookup attributes, or for an item without any, its service and account as
    /// Python's `keyring` names them. A Secret Service search matches these
    /// (`ItemQuery.matchesShownAttributes`).
    public var shownAttributes: [String: String] {
        lookupAttributes.isEmpty ? ["service": service, "username": account] : lookupAttributes
    }
}

/// What an `update` changes; nil leaves an attribute as it is.
public struct ItemChanges: Sendable, Equatable {
    public var label: String?
    public var description: String?
    public var comment: String?
    public var generic: [UInt8]?
    public var accessibility: ItemAccessibility?
    public var lookupAttributes: [String: String]?
    public var contentType: String?

    public init(label: String? = nil, description: String? = nil, comment: String? = nil, generic: [UInt8]? = nil,
                accessibility: ItemAccessibility? = nil, lookupAttributes: [String: String]? = nil, contentType: String? = nil) {
        self.label = label
        self.description = description
        self.comment = comment
        self.generic = generic
        self.accessibility = accessibility
        self.lookupAttributes = lookupAttributes
        self.contentType = contentType
    }
}

/// The bounds of docs/CONTROL.md and of the item store.
public enum ItemLimits {
    /// A secret's bytes: more is a usage error (a file of the same class is the place).
    public static let maximumSecretLength = 64 * 1024
    /// Bytes of each text attribute (service, account, label, description, comment).
    public static let maximumTextLength = 1024
    public static let maximumGenericLength = 4096
    /// Lookup attributes: how many, the bytes of a name (never empty) and of a value.
    public static let maximumLookupAttributes = 64
    public static let maximumLookupNameLength = 255
    public static let maximumLookupValueLength = 1024
    public static let maximumContentTypeLength = 255
    /// Per owner uid: room for a desktop's Secret Service items, which are searched in memory.
    public static let maximumItemsPerOwner = 16 * 1024
    public static let maximumSecretBytesPerOwner = 16 * 1024 * 1024
    /// Between all owners other than root and the mounting user. Any uid that reaches the
    /// control socket may keep items, and a user namespace hands one user up to 65,536 uids:
    /// per-owner bounds alone would let them fill the backing disk and the daemon's index.
    /// Root and the mounting user keep their per-owner room whatever the others hold.
    public static let maximumItemsOfOtherUsers = 16 * 1024
    public static let maximumSecretBytesOfOtherUsers = 64 * 1024 * 1024
    /// The secrets one reply carries together (a match with `kSecReturnData`): the daemon holds
    /// them in locked memory until the client has read them, on each of the many connections
    /// it may serve at once, so a match asking for more is refused (docs/CONTROL.md).
    public static let maximumMatchedSecretBytes = 4 * 1024 * 1024
    /// The bytes of sealed attributes (docs/FORMAT.md's item record, without the secret) per
    /// owner uid, and between all owners other than root and the mounting user. A listing or
    /// search holds every match's attributes in memory and sends them in one reply: without
    /// these bounds one user's 16,384 items of 62 KB of attributes each took the daemon to
    /// 4 GB. With them, a listing of all of one owner's items fits one reply
    /// (`maximumListingBytes`) whatever the attributes hold.
    public static let maximumAttributeBytesPerOwner = 4 * 1024 * 1024
    public static let maximumAttributeBytesOfOtherUsers = 16 * 1024 * 1024
    /// The most a listing or search reply may take, judged before any record is read by
    /// `listingBytes(attributeBytes:)`; below the control protocol's reply bound.
    public static let maximumListingBytes = 48 * 1024 * 1024

    /// The most bytes an item whose sealed attributes take `attributeBytes` takes in a reply:
    /// a byte of a text attribute is at most 6 in JSON (`\u00XX`), a byte of `generic` 4/3
    /// (base64), each length field 2 bytes of the record; the names of the JSON fields, the
    /// accessibility's name and the times take less than `listingBytesPerItem`.
    public static func listingBytes(attributeBytes: Int) -> Int { 6 * attributeBytes + listingBytesPerItem }
    public static let listingBytesPerItem = 512

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

    /// What is wrong with a lookup attribute map or a content type, or nil.
    public static func problem(lookupAttributes: [String: String]?, contentType: String?) -> String? {
        if let contentType, contentType.utf8.count > maximumContentTypeLength {
            return "the content type has \(contentType.utf8.count) bytes; at most \(maximumContentTypeLength) are allowed"
        }
        guard let lookupAttributes else { return nil }
        guard lookupAttributes.count <= maximumLookupAttributes else {
            return "the item has \(lookupAttributes.count) lookup attributes; at most \(maximumLookupAttributes) are allowed"
        }
        for (name, value) in lookupAttributes {
            guard !name.isEmpty, name.utf8.count <= maximumLookupNameLength else {
                return "a lookup attribute's name must have 1 to \(maximumLookupNameLength) bytes"
            }
            guard value.utf8.count <= maximumLookupValueLength else {
                return "the lookup attribute '\(name)' has \(value.utf8.count) bytes; at most \(maximumLookupValueLength) are allowed"
            }
        }
        return nil
    }
}
