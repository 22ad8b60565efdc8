import ProtfsDomain

/// Hashes of an item's service, account and lookup attribute pairs, kept in the store's index
/// so a search reads only the records that may match (a desktop keeps thousands of Secret
/// Service items and searches them at every lookup), without keeping attribute texts in the
/// daemon's memory. Hashes may collide: a candidate is always checked against its record.
struct ItemSearchKeys: Sendable {
    /// Ascending.
    private let hashes: [Int]

    init() { hashes = [] }

    init(_ attributes: ItemAttributes) {
        self.init(service: attributes.service, account: attributes.account, pairs: attributes.lookupAttributes)
    }

    init(_ query: ItemQuery) {
        self.init(service: query.service, account: query.account, pairs: query.lookupAttributes)
    }

    private init(service: String?, account: String?, pairs: [String: String]) {
        var hashes = pairs.map { Self.hash(1, $0.key, $0.value) }
        if let service { hashes.append(Self.hash(2, service)) }
        if let account { hashes.append(Self.hash(3, account)) }
        self.hashes = hashes.sorted()
    }

    /// Whether every key of `other` is among these.
    func contains(_ other: ItemSearchKeys) -> Bool {
        other.hashes.allSatisfy { hash in
            var low = 0, high = hashes.count
            while low < high {
                let middle = (low + high) / 2
                if hashes[middle] < hash { low = middle + 1 } else { high = middle }
            }
            return low < hashes.count && hashes[low] == hash
        }
    }

    private static func hash(_ kind: UInt8, _ texts: String...) -> Int {
        var hasher = Hasher()
        hasher.combine(kind)
        for text in texts { hasher.combine(text) }
        return hasher.finalize()
    }
}
