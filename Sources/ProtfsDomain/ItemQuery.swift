/// Which of an owner's items a search, an update or a delete of matches acts on
/// (docs/CONTROL.md): those with every field given (nil: any), every pair of
/// `lookupAttributes` among theirs (the Secret Service's `SearchItems`) and none of
/// `absentLookupAttributes` (a generic password is an item that is not an internet password),
/// and each of `lookupAttributeChoices` allowing the item's value (its access group).
/// The daemon matches, so that a `SecItemCopyMatching` is one request answered from one state
/// of the store.
public struct ItemQuery: Sendable, Equatable {
    public var service: String?
    public var account: String?
    public var label: String?
    public var description: String?
    public var comment: String?
    public var generic: [UInt8]?
    public var accessibility: ItemAccessibility?
    public var lookupAttributes: [String: String]
    public var absentLookupAttributes: Set<String>
    public var lookupAttributeChoices: [String: LookupAttributeChoice]
    /// At most this many items, the first by service then account; nil: all.
    public var limit: Int?
    /// Whether a search answers with the secrets too (read in the same step as the attributes).
    public var returnsSecrets: Bool
    /// Whether `lookupAttributes` are matched against the attributes the Secret Service shows
    /// (`ItemAttributes.shownAttributes`) rather than the lookup attributes alone, so that one
    /// search answers its `SearchItems`.
    public var matchesShownAttributes = false
    /// Whether a search answers, for each item, whether its secret cannot be read now (as the
    /// daemon's access table decides), with the vault's lock state.
    public var reportsLocks = false

    public init(service: String? = nil, account: String? = nil, label: String? = nil, description: String? = nil,
                comment: String? = nil, generic: [UInt8]? = nil, accessibility: ItemAccessibility? = nil,
                lookupAttributes: [String: String] = [:], absentLookupAttributes: Set<String> = [],
                lookupAttributeChoices: [String: LookupAttributeChoice] = [:], limit: Int? = nil, returnsSecrets: Bool = false) {
        self.service = service
        self.account = account
        self.label = label
        self.description = description
        self.comment = comment
        self.generic = generic
        self.accessibility = accessibility
        self.lookupAttributes = lookupAttributes
        self.absentLookupAttributes = absentLookupAttributes
        self.lookupAttributeChoices = lookupAttributeChoices
        self.limit = limit
        self.returnsSecrets = returnsSecrets
    }

    public func matches(_ item: ItemAttributes) -> Bool {
        Self.equal(service, item.service) && Self.equal(account, item.account) && Self.equal(label, item.label)
            && Self.equal(description, item.description) && Self.equal(comment, item.comment)
            && Self.equal(generic, item.generic) && Self.equal(accessibility, item.accessibility)
            && lookupAttributes.allSatisfy { pair in
                (matchesShownAttributes ? item.shownAttributes : item.lookupAttributes)[pair.key] == pair.value
            }
            && absentLookupAttributes.allSatisfy { item.lookupAttributes[$0] == nil }
            && lookupAttributeChoices.allSatisfy { $0.value.allows(item.lookupAttributes[$0.key]) }
    }

    /// What is wrong with the query as given, or nil: it must fit the bounds an item has, so
    /// that a hostile one costs no more than an item does.
    public var problem: String? {
        if let limit, limit < 1 { return "a match limit must be at least 1" }
        return ItemLimits.problem(service: service ?? "", account: account ?? "", label: label, description: description,
                                  comment: comment, generic: generic)
            ?? ItemLimits.problem(lookupAttributes: lookupAttributes, contentType: nil)
            ?? (absentLookupAttributes.count > ItemLimits.maximumLookupAttributes
                ? "a query names \(absentLookupAttributes.count) absent lookup attributes; at most "
                  + "\(ItemLimits.maximumLookupAttributes) are allowed" : nil)
            ?? LookupAttributeChoice.problem(lookupAttributeChoices)
    }

    private static func equal<T: Equatable>(_ wanted: T?, _ actual: T) -> Bool { wanted.map { $0 == actual } ?? true }
}

/// A rename of the item a `SecItemUpdate` matches: the new service and account (nil: kept).
public struct ItemRename: Sendable, Equatable {
    public var service: String?
    public var account: String?

    public init(service: String? = nil, account: String? = nil) {
        self.service = service
        self.account = account
    }

    public var isEmpty: Bool { service == nil && account == nil }
}
