/// When a keychain item's secret may be read (docs/CONTROL.md), as `kSecAttrAccessible` says
/// on iOS. The raw value is the accessibility id sealed in item records and bound into their
/// associated data; it never changes.
public enum ItemAccessibility: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case whenUnlocked = 1
    case afterFirstUnlock = 2
    case always = 3
    case whenPasscodeSetThisDeviceOnly = 4
    case whenUnlockedThisDeviceOnly = 5
    case afterFirstUnlockThisDeviceOnly = 6
    case alwaysThisDeviceOnly = 7

    /// The default, as on current iOS.
    public static let `default` = ItemAccessibility.whenUnlocked

    /// The canonical spelling.
    public var name: String {
        switch self {
        case .whenUnlocked: "whenUnlocked"
        case .afterFirstUnlock: "afterFirstUnlock"
        case .always: "always"
        case .whenPasscodeSetThisDeviceOnly: "whenPasscodeSetThisDeviceOnly"
        case .whenUnlockedThisDeviceOnly: "whenUnlockedThisDeviceOnly"
        case .afterFirstUnlockThisDeviceOnly: "afterFirstUnlockThisDeviceOnly"
        case .alwaysThisDeviceOnly: "alwaysThisDeviceOnly"
        }
    }

    /// Apple's constant, accepted as an alias.
    public var appleName: String {
        "kSecAttrAccessible" + name.prefix(1).uppercased() + name.dropFirst()
    }

    public var description: String { name }

    /// The class whose key protects the item's secret, and whose row of the access table
    /// decides when it can be read.
    public var protectionClass: ProtectionClass {
        switch self {
        case .whenUnlocked, .whenPasscodeSetThisDeviceOnly, .whenUnlockedThisDeviceOnly: .complete
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: .completeUntilFirstUserAuthentication
        case .always, .alwaysThisDeviceOnly: .none
        }
    }

    /// Bound to the device key as well: never leaves this device (nor goes into a backup).
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenPasscodeSetThisDeviceOnly, .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly,
             .alwaysThisDeviceOnly: true
        case .whenUnlocked, .afterFirstUnlock, .always: false
        }
    }

    /// Only while the vault has a passcode.
    public var needsPasscode: Bool { self == .whenPasscodeSetThisDeviceOnly }

    /// Deprecated by Apple: accepted, with a warning.
    public var isDeprecated: Bool { protectionClass == .none }

    /// Parses the canonical spelling or Apple's constant, case-sensitively.
    public init?(spelling: String) {
        guard let found = Self.allCases.first(where: { $0.name == spelling || $0.appleName == spelling }) else { return nil }
        self = found
    }
}
