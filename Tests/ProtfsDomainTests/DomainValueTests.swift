import ProtfsDomain
import Testing

/// The domain's values as the documentation states them (docs/CLASSES.md for classes,
/// docs/CONTROL.md for accessibilities and the wrong-passcode delays), written from the
/// prose, not from the code.
@Suite("domain values")
struct DomainValueTests {
    @Test("each class has its canonical name, Apple's constant and its letter, and nothing else parses")
    func classSpellings() {
        let table: [(ProtectionClass, String, String, String)] = [
            (.complete, "complete", "NSFileProtectionComplete", "A"),
            (.completeUnlessOpen, "completeUnlessOpen", "NSFileProtectionCompleteUnlessOpen", "B"),
            (.completeUntilFirstUserAuthentication, "completeUntilFirstUserAuthentication",
             "NSFileProtectionCompleteUntilFirstUserAuthentication", "C"),
            (.none, "none", "NSFileProtectionNone", "D"),
        ]
        #expect(table.count == ProtectionClass.allCases.count)
        for (protectionClass, name, apple, letter) in table {
            #expect(protectionClass.name == name && protectionClass.appleName == apple && protectionClass.letter == letter)
            for spelling in [name, apple, letter] { #expect(ProtectionClass(spelling: spelling) == protectionClass) }
            for wrong in [name.uppercased(), letter.lowercased(), " \(name)", "\(name)\n"] where wrong != name {
                #expect(ProtectionClass(spelling: wrong) == nil, "\(wrong.debugDescription)")
            }
        }
        #expect(ProtectionClass.defaultForNewVaults == .completeUntilFirstUserAuthentication)
    }

    @Test("each accessibility picks its class key; ThisDeviceOnly never travels; the passcode one needs a passcode")
    func accessibilities() {
        let table: [(ItemAccessibility, String, ProtectionClass, Bool)] = [
            (.whenUnlocked, "kSecAttrAccessibleWhenUnlocked", .complete, false),
            (.afterFirstUnlock, "kSecAttrAccessibleAfterFirstUnlock", .completeUntilFirstUserAuthentication, false),
            (.always, "kSecAttrAccessibleAlways", .none, false),
            (.whenPasscodeSetThisDeviceOnly, "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly", .complete, true),
            (.whenUnlockedThisDeviceOnly, "kSecAttrAccessibleWhenUnlockedThisDeviceOnly", .complete, true),
            (.afterFirstUnlockThisDeviceOnly, "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly",
             .completeUntilFirstUserAuthentication, true),
            (.alwaysThisDeviceOnly, "kSecAttrAccessibleAlwaysThisDeviceOnly", .none, true),
        ]
        #expect(table.count == ItemAccessibility.allCases.count)
        for (accessibility, apple, protectionClass, thisDeviceOnly) in table {
            #expect(accessibility.appleName == apple)
            #expect(ItemAccessibility(spelling: apple) == accessibility && ItemAccessibility(spelling: accessibility.name) == accessibility)
            #expect(accessibility.protectionClass == protectionClass)
            #expect(accessibility.isThisDeviceOnly == thisDeviceOnly)
            #expect(accessibility.needsPasscode == (accessibility == .whenPasscodeSetThisDeviceOnly))
            #expect(accessibility.isDeprecated == (protectionClass == .none))
        }
        #expect(ItemAccessibility.default == .whenUnlocked)
        #expect(ItemAccessibility(spelling: "kSecAttrAccessibleWhenUnlockedX") == nil)
    }

    @Test("wrong passcodes 1-4 cost nothing, then 1 min, 5 min, 15 min twice, then an hour each")
    func wrongPasscodeDelays() {
        let expected = [0, 0, 0, 0, 0, 60, 300, 900, 900, 3600, 3600, 3600]
        for (failures, seconds) in expected.enumerated() {
            #expect(WrongPasscodeDelays.nominalDelay(afterFailures: failures) == .seconds(seconds), "after \(failures)")
        }
        #expect(WrongPasscodeDelays.nominalDelay(afterFailures: 1000) == .seconds(3600))
    }
}
