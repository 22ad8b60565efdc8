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
        self.init(service: attributes.service, account: attributes.account, pairs: attributes.lookupAttributes,
                  withoutPairs: attributes.lookupAttributes.isEmpty)
    }

    init(_ query: ItemQuery) {
        self.init(service: query.service, account: query.account, pairs: query.lookupAttributes, withoutPairs: false)
    }

    /// `withoutPairs`: the item has no lookup attributes (its shown attributes are its service
    /// and account), or the query wants such an item.
    private init(service: String?, account: String?, pairs: [String: String], withoutPairs: Bool) {
        var hashes = pairs.map { Self.hash(1, $0.key, $0.value) }
        if let service { hashes.append(Self.hash(2, service)) }
        if let account { hashes.append(Self.hash(3, account)) }
        if withoutPairs { hashes.append(Self.hash(4)) }
        self.hashes = hashes.sorted()
    }

    /// Which index entries may match a query: those holding its keys, and for a query of the
    /// shown attributes (`ItemQuery.matchesShownAttributes`) that names at most `service` and
    /// `username`, also the items without lookup attributes whose service and account those are.
    struct Filter {
        private let wanted: ItemSearchKeys
        private let shownAsNames: ItemSearchKeys?

        init(_ query: ItemQuery) {
            wanted = ItemSearchKeys(query)
            let pairs = query.lookupAttributes
            guard query.matchesShownAttributes, Set(pairs.keys).isSubset(of: ["service", "username"]),
                  query.service == nil || pairs["service"] == nil || query.service == pairs["service"],
                  query.account == nil || pairs["username"] == nil || query.account == pairs["username"] else {
                shownAsNames = nil
                return
            }
            shownAsNames = ItemSearchKeys(service: pairs["service"] ?? query.service, account: pairs["username"] ?? query.account,
                                          pairs: [:], withoutPairs: true)
        }

        func admits(_ keys: ItemSearchKeys) -> Bool {
            keys.contains(wanted) || shownAsNames.map(keys.contains) == true
        }
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
