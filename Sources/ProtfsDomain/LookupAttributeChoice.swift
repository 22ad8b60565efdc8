/// The values one lookup attribute of an item may have for a query to match it, and whether
/// an item without that attribute matches too. The DataProtection library matches access
/// groups with it (docs/DATAPROTECTION.md): a query without a group reaches the program's
/// own groups, and items of no group only when it names them.
public struct LookupAttributeChoice: Sendable, Equatable, Codable {
    public var values: Set<String>
    public var orAbsent: Bool

    public init(values: Set<String>, orAbsent: Bool) {
        self.values = values
        self.orAbsent = orAbsent
    }

    public func allows(_ value: String?) -> Bool {
        value.map(values.contains) ?? orAbsent
    }

    /// What is wrong with a query's choices, or nil: each bounded as a lookup attribute is.
    static func problem(_ choices: [String: LookupAttributeChoice]) -> String? {
        guard choices.count <= ItemLimits.maximumLookupAttributes else {
            return "a query names \(choices.count) lookup attribute choices; at most \(ItemLimits.maximumLookupAttributes) are allowed"
        }
        for (name, choice) in choices {
            guard choice.values.count <= ItemLimits.maximumLookupAttributes else {
                return "a choice of \(name) has \(choice.values.count) values; at most \(ItemLimits.maximumLookupAttributes) are allowed"
            }
            for value in choice.values {
                if let problem = ItemLimits.problem(lookupAttributes: [name: value], contentType: nil) { return problem }
            }
        }
        return nil
    }
}
