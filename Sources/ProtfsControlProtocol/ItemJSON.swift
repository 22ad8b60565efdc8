import FoundationEssentials
import Glibc
import ProtfsDomain

// The JSON of item requests and replies (ControlProtocol.swift): as strict as the rest, so
// every object must hold exactly its keys (an update's changes: any of them). An item's
// "attributes" (its lookup attributes, a JSON object of strings) and "contentType" appear only
// when not empty, so clients built before they existed still read every other item.

extension KeyedEncodingContainer where Key == WireKey {
    mutating func encodeItem(_ attributes: ItemAttributes, forKey key: String, withTimes: Bool) throws {
        var item = nestedContainer(keyedBy: WireKey.self, forKey: WireKey(key))
        try item.encodeAttributes(attributes, withTimes: withTimes)
    }

    mutating func encodeItems(_ list: [ItemAttributes], forKey key: String) throws {
        var array = nestedUnkeyedContainer(forKey: WireKey(key))
        for attributes in list {
            var item = array.nestedContainer(keyedBy: WireKey.self)
            try item.encodeAttributes(attributes, withTimes: true)
        }
    }

    private mutating func encodeAttributes(_ attributes: ItemAttributes, withTimes: Bool) throws {
        try encode(attributes.service, forKey: WireKey("service"))
        try encode(attributes.account, forKey: WireKey("account"))
        try encode(attributes.label, forKey: WireKey("label"))
        try encode(attributes.description, forKey: WireKey("description"))
        try encode(attributes.comment, forKey: WireKey("comment"))
        try encode(Data(attributes.generic).base64EncodedString(), forKey: WireKey("generic"))
        try encode(attributes.accessibility.name, forKey: WireKey("accessible"))
        if !attributes.lookupAttributes.isEmpty { try encode(attributes.lookupAttributes, forKey: WireKey("attributes")) }
        if !attributes.contentType.isEmpty { try encode(attributes.contentType, forKey: WireKey("contentType")) }
        if withTimes {
            try encode(attributes.created, forKey: WireKey("created"))
            try encode(attributes.modified, forKey: WireKey("modified"))
        }
    }

    mutating func encodeChanges(_ changes: ItemChanges, forKey key: String) throws {
        var item = nestedContainer(keyedBy: WireKey.self, forKey: WireKey(key))
        try item.encodeIfPresent(changes.label, forKey: WireKey("label"))
        try item.encodeIfPresent(changes.description, forKey: WireKey("description"))
        try item.encodeIfPresent(changes.comment, forKey: WireKey("comment"))
        try item.encodeIfPresent(changes.generic.map { Data($0).base64EncodedString() }, forKey: WireKey("generic"))
        try item.encodeIfPresent(changes.accessibility?.name, forKey: WireKey("accessible"))
        try item.encodeIfPresent(changes.lookupAttributes, forKey: WireKey("attributes"))
        try item.encodeIfPresent(changes.contentType, forKey: WireKey("contentType"))
    }
}

private let attributeKeys: Set<String> = ["service", "account", "label", "description", "comment", "generic", "accessible"]
private let optionalAttributeKeys: Set<String> = ["attributes", "contentType"]
private let changeKeys: Set<String> = ["label", "description", "comment", "generic", "accessible", "attributes", "contentType"]

extension KeyedDecodingContainer where Key == WireKey {
    func decodeItem(forKey key: String, withTimes: Bool) throws -> ItemAttributes {
        try nestedContainer(keyedBy: WireKey.self, forKey: WireKey(key)).itemAttributes(withTimes: withTimes)
    }

    /// This container as an item's attributes, with exactly their keys.
    func itemAttributes(withTimes: Bool) throws -> ItemAttributes {
        let present = optionalAttributeKeys.filter { contains(WireKey($0)) }
        try requireKeys((withTimes ? attributeKeys.union(["created", "modified"]) : attributeKeys).union(present),
                        discriminator: "service")
        var attributes = ItemAttributes(service: try decode(String.self, forKey: WireKey("service")),
                                        account: try decode(String.self, forKey: WireKey("account")),
                                        label: try decode(String.self, forKey: WireKey("label")),
                                        description: try decode(String.self, forKey: WireKey("description")),
                                        comment: try decode(String.self, forKey: WireKey("comment")),
                                        generic: try decodeBase64(forKey: "generic"),
                                        accessibility: try decodeAccessibility(forKey: "accessible"))
        attributes.lookupAttributes = try decodeIfPresent([String: String].self, forKey: WireKey("attributes")) ?? [:]
        attributes.contentType = try decodeIfPresent(String.self, forKey: WireKey("contentType")) ?? ""
        if withTimes {
            attributes.created = try decode(Int64.self, forKey: WireKey("created"))
            attributes.modified = try decode(Int64.self, forKey: WireKey("modified"))
        }
        return attributes
    }

    func decodeChanges(forKey key: String) throws -> ItemChanges {
        let item = try nestedContainer(keyedBy: WireKey.self, forKey: WireKey(key))
        if let unexpected = item.allKeys.map(\.stringValue).first(where: { !changeKeys.contains($0) }) {
            throw DecodingError.dataCorrupted(.init(codingPath: item.codingPath, debugDescription: "unexpected key \(unexpected)"))
        }
        let generic: [UInt8]? = item.contains(WireKey("generic")) ? try item.decodeBase64(forKey: "generic") : nil
        let accessibility = item.contains(WireKey("accessible")) ? try item.decodeAccessibility(forKey: "accessible") : nil
        return ItemChanges(label: try item.decodeIfPresent(String.self, forKey: WireKey("label")),
                           description: try item.decodeIfPresent(String.self, forKey: WireKey("description")),
                           comment: try item.decodeIfPresent(String.self, forKey: WireKey("comment")),
                           generic: generic, accessibility: accessibility,
                           lookupAttributes: try item.decodeIfPresent([String: String].self, forKey: WireKey("attributes")),
                           contentType: try item.decodeIfPresent(String.self, forKey: WireKey("contentType")))
    }

    func decodeItems(forKey key: String) throws -> [ItemAttributes] {
        var list = try nestedUnkeyedContainer(forKey: WireKey(key))
        var items: [ItemAttributes] = []
        while !list.isAtEnd {
            items.append(try list.nestedContainer(keyedBy: WireKey.self).itemAttributes(withTimes: true))
        }
        return items
    }

    func decodeBase64(forKey key: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: try decode(String.self, forKey: WireKey(key))) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [WireKey(key)], debugDescription: "not base64"))
        }
        return Array(data)
    }

    func decodeAccessibility(forKey key: String) throws -> ItemAccessibility {
        let name = try decode(String.self, forKey: WireKey(key))
        guard let accessibility = ItemAccessibility(spelling: name) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [WireKey(key)],
                                                    debugDescription: "unknown accessibility '\(name)'"))
        }
        return accessibility
    }
}
