import Foundation
import ProtfsDomain

/// Apple's error object of Core Foundation calls (`Unmanaged<CFError>`).
public typealias CFError = NSError

/// Apple's allocator argument; protfs has one allocator, so only `nil` or `kCFAllocatorDefault`.
public final class CFAllocator: Sendable {
    private init() {}
}

/// The default allocator.
public let kCFAllocatorDefault: CFAllocator? = nil

/// What `SecAccessControlCreateWithFlags` may require besides an accessibility; Apple's values.
public struct SecAccessControlCreateFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt

    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let touchIDAny = biometryAny
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let touchIDCurrentSet = biometryCurrentSet
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    /// The flags that need a person at the device: biometry, a passcode prompt, a watch, an
    /// application password, or a key in the Secure Enclave.
    static let needingPrompt: SecAccessControlCreateFlags = [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode,
                                                             .watch, .privateKeyUsage, .applicationPassword]
}

/// An item's access control: its accessibility, and the flags that would need a prompt.
/// Equal to another with the same accessibility and flags, as Apple's objects compare.
public final class SecAccessControl: Sendable, Hashable {
    let accessibility: ItemAccessibility
    let flags: SecAccessControlCreateFlags

    init(accessibility: ItemAccessibility, flags: SecAccessControlCreateFlags) {
        self.accessibility = accessibility
        self.flags = flags
    }

    public static func == (left: SecAccessControl, right: SecAccessControl) -> Bool {
        left.accessibility == right.accessibility && left.flags == right.flags
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(accessibility)
        hasher.combine(flags)
    }

    /// The accessibility an item with this access control gets. protfs never prompts, so a
    /// flag that needs biometry or a prompt is refused with the status Apple gives when the
    /// device cannot authenticate its user that way.
    func usableAccessibility() throws(KeychainStatus) -> ItemAccessibility {
        guard flags.isDisjoint(with: .needingPrompt) else { throw .authFailed }
        return accessibility
    }
}

/// An access control with the given accessibility (one of the `kSecAttrAccessible...`
/// values), as on iOS; nil, with `error` set, for another value. Flags that need biometry or
/// a prompt are accepted here and refused by `SecItemAdd` (`errSecAuthFailed`).
public func SecAccessControlCreateWithFlags(_ allocator: CFAllocator?, _ protection: CFString, _ flags: SecAccessControlCreateFlags,
                                            _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecAccessControl? {
    guard let accessibility = ItemAccessibility(constant: protection as String) else {
        error?.pointee = Unmanaged.passRetained(NSError(domain: "NSOSStatusErrorDomain", code: Int(errSecParam)))
        return nil
    }
    return SecAccessControl(accessibility: accessibility, flags: flags)
}
