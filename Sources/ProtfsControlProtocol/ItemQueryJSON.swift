import FoundationEssentials
import ProtfsDomain

// The JSON of an item query (ControlProtocol.swift): "service" and "account" (a string or
// null) and "attributes" always, as `itemSearch` had them first; the other fields only when
// the query names them, so a Secret Service search looks as it did.

private let optionalQueryKeys: Set<String> = ["label", "description", "comment", "generic", "accessible", "absent",
                                              "choices", "limit", "secrets", "shown", "locks"]

extension KeyedEncodingContainer where Key == WireKey {
    mutating func encodeQuery(_ query: ItemQuery) throws {
        try encode(query.service, forKey: WireKey("service"))
        try encode(query.account, forKey: WireKey("account"))
        try encode(query.lookupAttributes, forKey: WireKey("attributes"))
        try encodeIfPresent(query.label, forKey: WireKey("label"))
        try encodeIfPresent(query.description, forKey: WireKey("description"))
        try encodeIfPresent(query.comment, forKey: WireKey("comment"))
        try encodeIfPresent(query.generic.map { Data($0).base64EncodedString() }, forKey: WireKey("generic"))
        try encodeIfPresent(query.accessibility?.name, forKey: WireKey("accessible"))
        if !query.absentLookupAttributes.isEmpty { try encode(query.absentLookupAttributes.sorted(), forKey: WireKey("absent")) }
        if !query.lookupAttributeChoices.isEmpty { try encode(query.lookupAttributeChoices, forKey: WireKey("choices")) }
        try encodeIfPresent(query.limit, forKey: WireKey("limit"))
        if query.returnsSecrets { try encode(true, forKey: WireKey("secrets")) }
        if query.matchesShownAttributes { try encode(true, forKey: WireKey("shown")) }
        if query.reportsLocks { try encode(true, forKey: WireKey("locks")) }
    }

    mutating func encodeRename(_ rename: ItemRename, forKey key: String) throws {
        var object = nestedContainer(keyedBy: WireKey.self, forKey: WireKey(key))
        try object.encodeIfPresent(rename.service, forKey: WireKey("service"))
        try object.encodeIfPresent(rename.account, forKey: WireKey("account"))
    }
}

extension KeyedDecodingContainer where Key == WireKey {
    /// This container as a query, with `others` (and `discriminator`) besides its keys.
    func itemQuery(others: Set<String>, discriminator: String) throws -> ItemQuery {
        let present = optionalQueryKeys.filter { contains(WireKey($0)) }
        try requireKeys(others.union(["service", "account", "attributes"]).union(present), discriminator: discriminator)
        var query = ItemQuery(service: try decodeIfPresent(String.self, forKey: WireKey("service")),
                              account: try decodeIfPresent(String.self, forKey: WireKey("account")),
                              lookupAttributes: try decode([String: String].self, forKey: WireKey("attributes")))
        query.label = try decodeIfPresent(String.self, forKey: WireKey("label"))
        query.description = try decodeIfPresent(String.self, forKey: WireKey("description"))
        query.comment = try decodeIfPresent(String.self, forKey: WireKey("comment"))
        if contains(WireKey("generic")) { query.generic = try decodeBase64(forKey: "generic") }
        if contains(WireKey("accessible")) { query.accessibility = try decodeAccessibility(forKey: "accessible") }
        query.absentLookupAttributes = Set(try decodeIfPresent([String].self, forKey: WireKey("absent")) ?? [])
        query.lookupAttributeChoices = try decodeIfPresent([String: LookupAttributeChoice].self, forKey: WireKey("choices")) ?? [:]
        query.limit = try decodeIfPresent(Int.self, forKey: WireKey("limit"))
        query.returnsSecrets = try decodeIfPresent(Bool.self, forKey: WireKey("secrets")) ?? false
        query.matchesShownAttributes = try decodeIfPresent(Bool.self, forKey: WireKey("shown")) ?? false
        query.reportsLocks = try decodeIfPresent(Bool.self, forKey: WireKey("locks")) ?? false
        if query.returnsSecrets && query.reportsLocks {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "a search returns secrets or reports locks, not both"))
        }
        if let problem = query.problem {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: problem))
        }
        return query
    }

    func decodeQuery(forKey key: String) throws -> ItemQuery {
        try nestedContainer(keyedBy: WireKey.self, forKey: WireKey(key)).itemQuery(others: [], discriminator: "service")
    }

    func decodeRename(forKey key: String) throws -> ItemRename {
        let object = try nestedContainer(keyedBy: WireKey.self, forKey: WireKey(key))
        if let unexpected = object.allKeys.map(\.stringValue).first(where: { $0 != "service" && $0 != "account" }) {
            throw DecodingError.dataCorrupted(.init(codingPath: object.codingPath, debugDescription: "unexpected key \(unexpected)"))
        }
        return ItemRename(service: try object.decodeIfPresent(String.self, forKey: WireKey("service")),
                          account: try object.decodeIfPresent(String.self, forKey: WireKey("account")))
    }
}
