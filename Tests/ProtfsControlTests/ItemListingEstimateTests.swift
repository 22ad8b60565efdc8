import ProtfsControlProtocol
import ProtfsCrypto
@testable import ProtfsCore
import ProtfsDomain
import ProtfsFormat
import ProtfsTestSupport
import Testing

/// The item store refuses a listing from its index, before any record is read, by
/// `ItemLimits.listingBytes` of each item's attribute bytes: that estimate must hold for the
/// worst attributes the JSON of a reply can carry (control characters, escaped as `\u00XX`),
/// and a listing of all of one owner's items must fit one reply.
@Suite struct ItemListingEstimateTests {
    /// `count` bytes that JSON escapes as six each, distinct by `tag`.
    static func escaped(_ count: Int, tag: Int = 0) -> String {
        let suffix = String(tag, radix: 16)
        return String(repeating: "\u{1}", count: count - suffix.utf8.count) + suffix
    }

    static let worst: ItemAttributes = {
        var lookup: [String: String] = [:]
        for index in 0 ..< ItemLimits.maximumLookupAttributes {
            lookup[escaped(ItemLimits.maximumLookupNameLength, tag: index)] = escaped(ItemLimits.maximumLookupValueLength)
        }
        let text = escaped(ItemLimits.maximumTextLength)
        return ItemAttributes(service: text, account: text, label: text, description: text, comment: text,
                              generic: [UInt8](repeating: 0xFF, count: ItemLimits.maximumGenericLength),
                              accessibility: .afterFirstUnlockThisDeviceOnly, created: .min, modified: .min,
                              lookupAttributes: lookup, contentType: escaped(ItemLimits.maximumContentTypeLength))
    }()

    static let least = ItemAttributes(service: "", account: "", accessibility: .afterFirstUnlockThisDeviceOnly,
                                      created: .min, modified: .min)

    /// Not test arguments: the worst item's description alone is half a megabyte.
    @Test func theEstimateBoundsTheReply() throws {
        for attributes in [Self.worst, Self.least] { try check(attributes) }
    }

    private func check(_ attributes: ItemAttributes) throws {
        let attributeBytes = ItemMetadata(owner: 0, attributes: attributes).bytes(version: ItemRecord.currentVersion).count
        for count in [1, 3] {
            let reply = try encoded(.items(Array(repeating: attributes, count: count)))
            #expect(reply.count <= count * ItemLimits.listingBytes(attributeBytes: attributeBytes))
        }
        let withSecrets = try encoded(.itemsWithSecrets([attributes], secretLengths: [ItemLimits.maximumSecretLength]),
                                      secret: SecureBuffer(count: 0))
        #expect(withSecrets.count <= ItemLimits.listingBytes(attributeBytes: attributeBytes))
    }

    private func encoded(_ reply: ControlReply, secret: SecureBuffer? = nil) throws -> [UInt8] {
        var sink = MemorySink()
        try ControlWire.write(reply, secret: secret, to: &sink)
        return sink.bytes
    }

    @Test func allOfOneOwnersItemsFitOneReply() {
        let largest = ItemLimits.maximumItemsPerOwner * ItemLimits.listingBytesPerItem
            + ItemLimits.listingBytes(attributeBytes: ItemLimits.maximumAttributeBytesPerOwner) - ItemLimits.listingBytesPerItem
        #expect(largest <= ItemLimits.maximumListingBytes)
        #expect(ItemLimits.maximumListingBytes < ControlLimits.maximumReplyLength)
    }
}
