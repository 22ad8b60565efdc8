import ProtfsDomain
import Testing
import ProtfsCore
import ProtfsSystem

/// The policy table and the re-class rule, checked case by case against expectations written
/// here from the prose of docs/CLASSES.md, not from the code they test.
@Suite struct AccessPolicyTests {
    /// One cell of docs/CLASSES.md's table: what a class allows in a state, for a new file, an
    /// open of an existing file, a handle opened earlier, and metadata (the "always allowed" list).
    struct Cell: CustomTestStringConvertible {
        let protectionClass: ProtectionClass
        let state: LockState
        let create: AccessDecision
        let openExisting: AccessDecision
        let earlierHandle: AccessDecision
        let metadata: AccessDecision
        var testDescription: String { "\(protectionClass) in \(state)" }

        func decision(for access: ContentAccess) -> AccessDecision {
            switch access {
            case .create: create
            case .openExisting: openExisting
            case .useOpenHandle: earlierHandle
            case .metadata: metadata
            }
        }
    }

    /// docs/CLASSES.md, row by row. `none` allows everything everywhere; "first user
    /// authentication" refuses content only before the first unlock; `completeUnlessOpen`
    /// without its private key creates (the public key wraps) and keeps earlier handles but
    /// opens nothing existing; `complete` refuses all content before the first unlock and once
    /// locked, earlier handles included. Metadata is always allowed.
    static let table: [Cell] = [
        Cell(protectionClass: .none, state: .beforeFirstUnlock, create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .none, state: .unlocked, create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .none, state: .locking, create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .none, state: .locked, create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),

        Cell(protectionClass: .completeUntilFirstUserAuthentication, state: .beforeFirstUnlock,
             create: .deny, openExisting: .deny, earlierHandle: .deny, metadata: .allow),
        Cell(protectionClass: .completeUntilFirstUserAuthentication, state: .unlocked,
             create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .completeUntilFirstUserAuthentication, state: .locking,
             create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .completeUntilFirstUserAuthentication, state: .locked,
             create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),

        Cell(protectionClass: .completeUnlessOpen, state: .beforeFirstUnlock, create: .allow, openExisting: .deny, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .completeUnlessOpen, state: .unlocked, create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .completeUnlessOpen, state: .locking, create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .completeUnlessOpen, state: .locked, create: .allow, openExisting: .deny, earlierHandle: .allow, metadata: .allow),

        Cell(protectionClass: .complete, state: .beforeFirstUnlock, create: .deny, openExisting: .deny, earlierHandle: .deny, metadata: .allow),
        Cell(protectionClass: .complete, state: .unlocked, create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .complete, state: .locking, create: .allow, openExisting: .allow, earlierHandle: .allow, metadata: .allow),
        Cell(protectionClass: .complete, state: .locked, create: .deny, openExisting: .deny, earlierHandle: .deny, metadata: .allow),
    ]

    @Test("the expected table has exactly one row per class and state")
    func tableIsComplete() {
        for protectionClass in ProtectionClass.allCases {
            for state in LockState.allCases {
                #expect(Self.table.filter { $0.protectionClass == protectionClass && $0.state == state }.count == 1,
                        "\(protectionClass) in \(state)")
            }
        }
        #expect(Self.table.count == ProtectionClass.allCases.count * LockState.allCases.count)
    }

    @Test("every class x state x access matches docs/CLASSES.md", arguments: table)
    func decision(_ cell: Cell) {
        for access in ContentAccess.allCases {
            let expected = cell.decision(for: access)
            #expect(AccessPolicy.decision(for: access, of: cell.protectionClass, in: cell.state) == expected,
                    "\(access) of \(cell.protectionClass) in \(cell.state)")
            if expected.isAllowed {
                #expect(throws: Never.self) { try AccessPolicy.check(access, of: cell.protectionClass, in: cell.state) }
            } else {
                #expect(throws: Errno.permissionDenied) { try AccessPolicy.check(access, of: cell.protectionClass, in: cell.state) }
            }
        }
    }

    // MARK: Re-classing (docs/CLASSES.md)

    /// The key material a state holds in memory (docs/CLASSES.md): the `none` key and the
    /// `completeUnlessOpen` public key always; every key once unlocked and through the grace;
    /// after the lock, everything but the `complete` key and the `completeUnlessOpen` private key.
    enum Key: Hashable { case noneKey, untilFirstAuthentication, unlessOpenPublic, unlessOpenPrivate, completeKey }

    static func keysHeld(in state: LockState) -> Set<Key> {
        switch state {
        case .beforeFirstUnlock: [.noneKey, .unlessOpenPublic]
        case .unlocked, .locking: [.noneKey, .untilFirstAuthentication, .unlessOpenPublic, .unlessOpenPrivate, .completeKey]
        case .locked: [.noneKey, .untilFirstAuthentication, .unlessOpenPublic]
        }
    }

    static func unwrappingKey(of protectionClass: ProtectionClass) -> Key {
        switch protectionClass {
        case .none: .noneKey
        case .completeUntilFirstUserAuthentication: .untilFirstAuthentication
        case .completeUnlessOpen: .unlessOpenPrivate
        case .complete: .completeKey
        }
    }

    /// `completeUnlessOpen` wraps with its public key; the others with the class key itself.
    static func wrappingKey(of protectionClass: ProtectionClass) -> Key {
        protectionClass == .completeUnlessOpen ? .unlessOpenPublic : unwrappingKey(of: protectionClass)
    }

    struct Reclass: CustomTestStringConvertible {
        let old: ProtectionClass
        let new: ProtectionClass
        let state: LockState
        var testDescription: String { "\(old) -> \(new) in \(state)" }
    }

    static let everyReclass: [Reclass] = ProtectionClass.allCases.flatMap { old in
        ProtectionClass.allCases.flatMap { new in LockState.allCases.map { Reclass(old: old, new: new, state: $0) } }
    }

    @Test("a re-class needs the old class's unwrapping key and the new class's wrapping key", arguments: everyReclass)
    func reclass(_ reclass: Reclass) {
        let held = Self.keysHeld(in: reclass.state)
        let possible = held.contains(Self.unwrappingKey(of: reclass.old)) && held.contains(Self.wrappingKey(of: reclass.new))
        #expect(AccessPolicy.reclassDecision(from: reclass.old, to: reclass.new, in: reclass.state) == (possible ? .allow : .deny))
    }

    @Test("the contract's own examples: while locked none -> completeUnlessOpen works, none <-> complete does not")
    func reclassExamplesFromTheSpec() {
        #expect(AccessPolicy.reclassDecision(from: .none, to: .completeUnlessOpen, in: .locked) == .allow)
        #expect(AccessPolicy.reclassDecision(from: .none, to: .complete, in: .locked) == .deny)
        #expect(AccessPolicy.reclassDecision(from: .complete, to: .none, in: .locked) == .deny)
        for old in ProtectionClass.allCases {
            for new in ProtectionClass.allCases {
                #expect(AccessPolicy.reclassDecision(from: old, to: new, in: .unlocked) == .allow)
                #expect(AccessPolicy.reclassDecision(from: old, to: new, in: .locking) == .allow)
            }
        }
    }

    // MARK: Spellings (docs/CLASSES.md's table)

    static let spellings: [(String, ProtectionClass)] = [
        ("complete", .complete), ("NSFileProtectionComplete", .complete), ("A", .complete),
        ("completeUnlessOpen", .completeUnlessOpen), ("NSFileProtectionCompleteUnlessOpen", .completeUnlessOpen), ("B", .completeUnlessOpen),
        ("completeUntilFirstUserAuthentication", .completeUntilFirstUserAuthentication),
        ("NSFileProtectionCompleteUntilFirstUserAuthentication", .completeUntilFirstUserAuthentication),
        ("C", .completeUntilFirstUserAuthentication),
        ("none", .none), ("NSFileProtectionNone", .none), ("D", .none),
    ]

    @Test("every canonical name, Apple constant and letter is accepted")
    func acceptedSpellings() {
        for (spelling, expected) in Self.spellings {
            #expect(ProtectionClass(spelling: spelling) == expected, "\(spelling)")
        }
        let canonical: [ProtectionClass: String] = [.complete: "complete", .completeUnlessOpen: "completeUnlessOpen",
                                                    .completeUntilFirstUserAuthentication: "completeUntilFirstUserAuthentication",
                                                    .none: "none"]
        for protectionClass in ProtectionClass.allCases {
            #expect(protectionClass.name == canonical[protectionClass])
        }
    }

    @Test("wrong case, empty, a trailing NUL, whitespace and near misses are refused")
    func refusedSpellings() {
        var refused = ["", "Complete", "COMPLETE", "CompleteUnlessOpen", "completeunlessopen", "NONE", "None",
                       "nsfileprotectioncomplete", "NSFileProtectioncomplete", "NSFILEPROTECTIONNONE", "a", "b", "c", "d",
                       "E", "AB", "NSFileProtection", "NSFileProtectionCompleteUnlessOpenX", "completeUntilFirstUnlock",
                       "protection", "1", "4", "\u{0}", "complete\u{0}x"]
        for (spelling, _) in Self.spellings {
            refused += [spelling + "\u{0}", " " + spelling, spelling + " ", spelling + "\n", "\t" + spelling, spelling + "\r\n"]
        }
        for spelling in refused {
            #expect(ProtectionClass(spelling: spelling) == nil, "\(spelling.debugDescription)")
        }
    }
}
