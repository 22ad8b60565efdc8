import ProtfsDomain
import Testing

/// The matcher the daemon runs for searches, updates and deletes of matches: every field a
/// query gives must equal the item's, every lookup pair be among the item's, every absent
/// name be missing from it.
@Suite struct ItemQueryTests {
    private let item = ItemAttributes(service: "svc", account: "alice", label: "label", description: "desc", comment: "note",
                                      generic: [1, 2], accessibility: .afterFirstUnlock,
                                      lookupAttributes: ["protfs:accessGroup": "TEAM.shared", "xdg:schema": "org.example"])

    @Test func anEmptyQueryMatchesEveryItem() {
        #expect(ItemQuery().matches(item))
        #expect(ItemQuery().matches(ItemAttributes(service: "", account: "")))
    }

    @Test func eachFieldGivenMustBeEqual() {
        let matching = ItemQuery(service: "svc", account: "alice", label: "label", description: "desc", comment: "note",
                                 generic: [1, 2], accessibility: .afterFirstUnlock, lookupAttributes: ["xdg:schema": "org.example"])
        #expect(matching.matches(item))
        let variations: [(inout ItemQuery) -> Void] = [
            { $0.service = "other" }, { $0.account = "bob" }, { $0.label = "" }, { $0.description = "d" }, { $0.comment = "n" },
            { $0.generic = [] }, { $0.generic = [1, 2, 3] }, { $0.accessibility = .whenUnlocked },
            { $0.lookupAttributes["xdg:schema"] = "org.other" }, { $0.lookupAttributes["protfs:accessGroup"] = "TEAM.other" },
            { $0.lookupAttributes["missing"] = "" },
        ]
        for vary in variations {
            var query = matching
            vary(&query)
            #expect(!query.matches(item), "\(query)")
        }
    }

    @Test func anAbsentNameExcludesTheItemsThatHaveIt() {
        var query = ItemQuery()
        query.absentLookupAttributes = ["protfs:class"]
        #expect(query.matches(item))
        query.absentLookupAttributes = ["xdg:schema"]
        #expect(!query.matches(item))
    }

    /// A choice allows one of its values, and an item without the name only when it says so.
    @Test func aChoiceAllowsItsValuesAndMaybeAbsence() {
        var query = ItemQuery()
        query.lookupAttributeChoices = ["protfs:accessGroup": LookupAttributeChoice(values: ["TEAM.other", "TEAM.shared"], orAbsent: false)]
        #expect(query.matches(item))
        query.lookupAttributeChoices["protfs:accessGroup"]?.values = ["TEAM.other"]
        #expect(!query.matches(item))
        query.lookupAttributeChoices = ["protfs:missing": LookupAttributeChoice(values: ["x"], orAbsent: false)]
        #expect(!query.matches(item))
        query.lookupAttributeChoices["protfs:missing"]?.orAbsent = true
        #expect(query.matches(item))
        query.lookupAttributeChoices = ["n": LookupAttributeChoice(values: [String(repeating: "v", count: ItemLimits.maximumLookupValueLength + 1)],
                                                                   orAbsent: true)]
        #expect(query.problem != nil)
    }

    @Test func aQueryIsHeldToTheBoundsOfAnItem() {
        #expect(ItemQuery(service: "svc").problem == nil)
        var query = ItemQuery()
        query.limit = 0
        #expect(query.problem != nil)
        query.limit = 1
        query.label = String(repeating: "x", count: ItemLimits.maximumTextLength + 1)
        #expect(query.problem?.contains("label") == true)
        query.label = nil
        query.absentLookupAttributes = Set((0...ItemLimits.maximumLookupAttributes).map(String.init))
        #expect(query.problem != nil)
        #expect(ItemRename().isEmpty && !ItemRename(account: "bob").isEmpty)
    }
}
