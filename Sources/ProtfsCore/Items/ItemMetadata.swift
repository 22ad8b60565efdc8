import ProtfsDomain
import ProtfsFormat

/// The sealed attributes of an item record, with its owner (docs/FORMAT.md):
/// `owner (4) || accessibility id (1) || reserved 0 (1) || created (8) || modified (8)`, then
/// service, account, label, description, comment and generic, each as `length (2) || bytes`.
struct ItemMetadata: Sendable, Equatable {
    static let fixedByteCount = 22
    static let minimumByteCount = fixedByteCount + 6 * 2
    static let maximumByteCount = minimumByteCount + 5 * ItemLimits.maximumTextLength + ItemLimits.maximumGenericLength

    let owner: UInt32
    var attributes: ItemAttributes

    var identity: ItemIdentity { ItemIdentity(owner: owner, service: attributes.service, account: attributes.account) }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.appendLittleEndian(owner)
        out += [attributes.accessibility.rawValue, 0]
        out.appendLittleEndian(attributes.created)
        out.appendLittleEndian(attributes.modified)
        for field in Self.texts(of: attributes).map({ Array($0.utf8) }) + [attributes.generic] {
            out.appendLittleEndian(UInt16(field.count))
            out += field
        }
        return out
    }

    init(owner: UInt32, attributes: ItemAttributes) {
        self.owner = owner
        self.attributes = attributes
    }

    /// nil unless `bytes` is exactly one well-formed record (known accessibility, zero
    /// reserved byte, UTF-8 texts within their limits, nothing left over).
    init?(parsing bytes: [UInt8]) {
        guard bytes.count >= Self.minimumByteCount, bytes.count <= Self.maximumByteCount,
              let accessibility = ItemAccessibility(rawValue: bytes[4]), bytes[5] == 0 else { return nil }
        var offset = Self.fixedByteCount
        var fields: [[UInt8]] = []
        for index in 0..<6 {
            guard offset + 2 <= bytes.count else { return nil }
            let length = Int(bytes.littleEndian(at: offset, as: UInt16.self))
            offset += 2
            let limit = index == 5 ? ItemLimits.maximumGenericLength : ItemLimits.maximumTextLength
            guard length <= limit, offset + length <= bytes.count else { return nil }
            fields.append(Array(bytes[offset..<offset + length]))
            offset += length
        }
        guard offset == bytes.count else { return nil }
        var texts: [String] = []
        for field in fields.prefix(5) {
            guard let text = String(validating: field, as: UTF8.self) else { return nil }
            texts.append(text)
        }
        owner = bytes.littleEndian(at: 0)
        attributes = ItemAttributes(service: texts[0], account: texts[1], label: texts[2], description: texts[3],
                                    comment: texts[4], generic: fields[5], accessibility: accessibility,
                                    created: bytes.littleEndian(at: 6), modified: bytes.littleEndian(at: 14))
    }

    private static func texts(of attributes: ItemAttributes) -> [String] {
        [attributes.service, attributes.account, attributes.label, attributes.description, attributes.comment]
    }
}
