import ProtfsDomain

/// The sealed attributes of an item record, with its owner (docs/FORMAT.md):
/// `owner (4) || accessibility id (1) || reserved 0 (1) || created (8) || modified (8)`, then
/// service, account, label, description, comment and generic, each as `length (2) || bytes`.
/// Record version 2 appends the content type (`length (2) || bytes`) and the lookup
/// attributes: `count (2)`, then per pair, in ascending byte order of the names,
/// `length (2) || name || length (2) || value`.
package struct ItemMetadata: Sendable, Equatable {
    package static let fixedByteCount = 22
    package static let minimumByteCount = fixedByteCount + 6 * 2
    package static let maximumVersion1ByteCount = minimumByteCount + 5 * ItemLimits.maximumTextLength + ItemLimits.maximumGenericLength
    package static let maximumByteCount = maximumVersion1ByteCount + 2 + ItemLimits.maximumContentTypeLength + 2
        + ItemLimits.maximumLookupAttributes * (4 + ItemLimits.maximumLookupNameLength + ItemLimits.maximumLookupValueLength)

    package let owner: UInt32
    package var attributes: ItemAttributes

    package var identity: ItemIdentity { ItemIdentity(owner: owner, service: attributes.service, account: attributes.account) }

    /// Version 1 cannot hold a content type or lookup attributes.
    package var fitsVersion1: Bool { attributes.lookupAttributes.isEmpty && attributes.contentType.isEmpty }

    package func bytes(version: UInt16) -> [UInt8] {
        var out: [UInt8] = []
        out.appendLittleEndian(owner)
        out += [attributes.accessibility.rawValue, 0]
        out.appendLittleEndian(attributes.created)
        out.appendLittleEndian(attributes.modified)
        var fields = Self.texts(of: attributes).map { Array($0.utf8) } + [attributes.generic]
        if version >= 2 {
            fields.append(Array(attributes.contentType.utf8))
        }
        for field in fields { out.appendField(field) }
        if version >= 2 {
            out.appendLittleEndian(UInt16(attributes.lookupAttributes.count))
            for (name, value) in Self.sorted(attributes.lookupAttributes) {
                out.appendField(name)
                out.appendField(value)
            }
        }
        return out
    }

    package init(owner: UInt32, attributes: ItemAttributes) {
        self.owner = owner
        self.attributes = attributes
    }

    /// nil unless `bytes` is exactly one well-formed record of `version` (known accessibility,
    /// zero reserved byte, UTF-8 texts within their limits, lookup attributes in ascending order
    /// without repeats, nothing left over).
    package init?(parsing bytes: [UInt8], version: UInt16) {
        guard bytes.count >= Self.minimumByteCount,
              bytes.count <= (version == 1 ? Self.maximumVersion1ByteCount : Self.maximumByteCount),
              let accessibility = ItemAccessibility(rawValue: bytes[4]), bytes[5] == 0 else { return nil }
        var reader = FieldReader(bytes: bytes, offset: Self.fixedByteCount)
        var texts: [String] = []
        for _ in 0..<5 {
            guard let text = reader.text(limit: ItemLimits.maximumTextLength) else { return nil }
            texts.append(text)
        }
        guard let generic = reader.field(limit: ItemLimits.maximumGenericLength) else { return nil }
        var contentType = ""
        var lookupAttributes: [String: String] = [:]
        if version >= 2 {
            guard let type = reader.text(limit: ItemLimits.maximumContentTypeLength),
                  let count = reader.count(limit: ItemLimits.maximumLookupAttributes) else { return nil }
            contentType = type
            var previous: [UInt8]?
            for _ in 0..<count {
                guard let name = reader.field(limit: ItemLimits.maximumLookupNameLength), !name.isEmpty,
                      previous.map({ $0.lexicographicallyPrecedes(name) }) ?? true,
                      let nameText = String(validating: name, as: UTF8.self),
                      let value = reader.text(limit: ItemLimits.maximumLookupValueLength) else { return nil }
                previous = name
                lookupAttributes[nameText] = value
            }
        }
        guard reader.offset == bytes.count else { return nil }
        owner = bytes.littleEndian(at: 0)
        attributes = ItemAttributes(service: texts[0], account: texts[1], label: texts[2], description: texts[3],
                                    comment: texts[4], generic: generic, accessibility: accessibility,
                                    created: bytes.littleEndian(at: 6), modified: bytes.littleEndian(at: 14),
                                    lookupAttributes: lookupAttributes, contentType: contentType)
    }

    private static func texts(of attributes: ItemAttributes) -> [String] {
        [attributes.service, attributes.account, attributes.label, attributes.description, attributes.comment]
    }

    /// By the names' UTF-8 bytes, so the encoding is one and only one.
    private static func sorted(_ map: [String: String]) -> [([UInt8], [UInt8])] {
        map.map { (Array($0.key.utf8), Array($0.value.utf8)) }.sorted { $0.0.lexicographicallyPrecedes($1.0) }
    }
}

/// Reads `length (2) || bytes` fields in order; nil past the end or beyond a limit.
private struct FieldReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func count(limit: Int) -> Int? {
        guard offset + 2 <= bytes.count else { return nil }
        let value = Int(bytes.littleEndian(at: offset, as: UInt16.self))
        offset += 2
        return value <= limit ? value : nil
    }

    mutating func field(limit: Int) -> [UInt8]? {
        guard let length = count(limit: limit), offset + length <= bytes.count else { return nil }
        defer { offset += length }
        return Array(bytes[offset..<offset + length])
    }

    mutating func text(limit: Int) -> String? {
        field(limit: limit).flatMap { String(validating: $0, as: UTF8.self) }
    }
}

private extension [UInt8] {
    mutating func appendField(_ field: [UInt8]) {
        appendLittleEndian(UInt16(field.count))
        self += field
    }
}
