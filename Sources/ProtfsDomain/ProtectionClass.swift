/// The four Data Protection classes. The raw value is the class id written in headers,
/// keybag entries and associated data; it never changes.
public enum ProtectionClass: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case complete = 1
    case completeUnlessOpen = 2
    case completeUntilFirstUserAuthentication = 3
    case none = 4

    /// The canonical spelling, as `getfattr` prints it.
    public var name: String {
        switch self {
        case .complete: "complete"
        case .completeUnlessOpen: "completeUnlessOpen"
        case .completeUntilFirstUserAuthentication: "completeUntilFirstUserAuthentication"
        case .none: "none"
        }
    }

    /// Apple's constant, accepted as an alias.
    public var appleName: String {
        switch self {
        case .complete: "NSFileProtectionComplete"
        case .completeUnlessOpen: "NSFileProtectionCompleteUnlessOpen"
        case .completeUntilFirstUserAuthentication: "NSFileProtectionCompleteUntilFirstUserAuthentication"
        case .none: "NSFileProtectionNone"
        }
    }

    /// The letter of Apple's class names (A-D), accepted as an alias.
    public var letter: String {
        switch self {
        case .complete: "A"
        case .completeUnlessOpen: "B"
        case .completeUntilFirstUserAuthentication: "C"
        case .none: "D"
        }
    }

    public var description: String { name }

    /// Parses any of the three spellings, case-sensitively; nil for anything else.
    public init?(spelling: String) {
        guard let found = Self.allCases.first(where: { $0.name == spelling || $0.appleName == spelling || $0.letter == spelling })
        else { return nil }
        self = found
    }

    /// The class a new vault's root gets unless `init --class` says otherwise (as iOS since 7).
    public static let defaultForNewVaults = ProtectionClass.completeUntilFirstUserAuthentication
}
