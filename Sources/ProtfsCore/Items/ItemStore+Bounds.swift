import ProtfsDomain
import ProtfsFormat

/// The bounds of the item store (docs/THREAT-MODEL.md): what one owner may keep, what the
/// owners other than root and the mounting user keep between them, and how large a listing
/// may be, all judged from the index, before a record is read.
extension ItemStore {
    /// What one owner may keep, what the owners other than the privileged ones (root and the
    /// mounting user) may keep between them, and the most a listing's reply may take.
    public struct Bounds: Sendable {
        public let items: Int
        public let secretBytes: Int
        public let attributeBytes: Int
        public let othersItems: Int
        public let othersSecretBytes: Int
        public let othersAttributeBytes: Int
        public let listingBytes: Int

        public static let standard = Bounds(items: ItemLimits.maximumItemsPerOwner,
                                            secretBytes: ItemLimits.maximumSecretBytesPerOwner,
                                            othersItems: ItemLimits.maximumItemsOfOtherUsers,
                                            othersSecretBytes: ItemLimits.maximumSecretBytesOfOtherUsers)

        public init(items: Int, secretBytes: Int, othersItems: Int, othersSecretBytes: Int,
                    attributeBytes: Int = ItemLimits.maximumAttributeBytesPerOwner,
                    othersAttributeBytes: Int = ItemLimits.maximumAttributeBytesOfOtherUsers,
                    listingBytes: Int = ItemLimits.maximumListingBytes) {
            self.items = items
            self.secretBytes = secretBytes
            self.attributeBytes = attributeBytes
            self.othersItems = othersItems
            self.othersSecretBytes = othersSecretBytes
            self.othersAttributeBytes = othersAttributeBytes
            self.listingBytes = listingBytes
        }
    }

    /// What a set of records costs against the bounds.
    struct Usage: Equatable {
        var items = 0
        var secretBytes = 0
        var attributeBytes = 0

        init(_ entries: some Sequence<Entry>) {
            for entry in entries {
                items += 1
                secretBytes += entry.secretLength
                attributeBytes += entry.attributeLength
            }
        }

        static func - (lhs: Usage, rhs: Usage) -> Usage {
            var difference = lhs
            difference.items -= rhs.items
            difference.secretBytes -= rhs.secretBytes
            difference.attributeBytes -= rhs.attributeBytes
            return difference
        }
    }

    /// Refused unless `owner`'s records, with those named `replaced` replaced by `added`, stay
    /// within the bounds. Only growth is refused: a change that makes nothing larger passes
    /// even where a vault written before a bound existed is beyond it.
    func checkRoom(owner: UInt32, replacing replaced: Set<String>, with added: [Entry],
                   in index: [String: Entry]) throws(ItemError) {
        let kept = index.filter { !replaced.contains($0.key) && $0.value.owner == owner }.values
        let before = Usage(index.filter { $0.value.owner == owner }.values)
        let after = Usage(Array(kept) + added)
        let growth = after - before
        if growth.items > 0 && after.items > bounds.items { throw .tooMany(limit: bounds.items) }
        if growth.secretBytes > 0 && after.secretBytes > bounds.secretBytes {
            throw .tooLarge(total: after.secretBytes, limit: bounds.secretBytes)
        }
        if growth.attributeBytes > 0 && after.attributeBytes > bounds.attributeBytes {
            throw .attributesTooLarge(total: after.attributeBytes, limit: bounds.attributeBytes)
        }
        guard !privilege.isPrivileged(owner) else { return }
        let others = Usage(index.values.filter { entry in entry.owner.map { !privilege.isPrivileged($0) } ?? false })
        if (growth.items > 0 && others.items + growth.items > bounds.othersItems)
            || (growth.secretBytes > 0 && others.secretBytes + growth.secretBytes > bounds.othersSecretBytes)
            || (growth.attributeBytes > 0 && others.attributeBytes + growth.attributeBytes > bounds.othersAttributeBytes) {
            throw .othersRoomFull(items: bounds.othersItems, secretBytes: bounds.othersSecretBytes,
                                  attributeBytes: bounds.othersAttributeBytes)
        }
    }

    /// Refused unless the reply to `query` fits `bounds.listingBytes`, judged from the index
    /// before any record is read: every candidate the index cannot rule out counts at its
    /// largest encoding (`ItemLimits.listingBytes`), the largest ones when the query has a limit.
    func checkListing(owner: UInt32, _ query: ItemQuery, in index: [String: Entry]) throws(ItemError) {
        let filter = ItemSearchKeys.Filter(query)
        var sizes = index.values.filter { $0.owner == owner && filter.admits($0.searchKeys) }
            .map { ItemLimits.listingBytes(attributeBytes: $0.attributeLength) }
        if let limit = query.limit, sizes.count > limit { sizes = Array(sizes.sorted(by: >).prefix(limit)) }
        let total = sizes.reduce(0, +)
        guard total <= bounds.listingBytes else {
            throw .listingTooLarge(items: sizes.count, bytes: total, limit: bounds.listingBytes)
        }
    }
}

extension ItemStore.Entry {
    /// The entry of a record that authenticates.
    init(_ record: ItemRecord, _ metadata: ItemMetadata) {
        self.init(owner: metadata.owner, secretLength: record.secretLength, attributeLength: record.attributeLength,
                  searchKeys: ItemSearchKeys(metadata.attributes))
    }
}
