import Foundation

// Core Foundation's names that keychain code uses, over Foundation's classes on Linux, where
// there is no Core Foundation to import: `CFData` is `NSData` as `CFDictionary` is
// `NSDictionary`, and a `CFError` is an `NSError` (its functions read the same fields).

/// Bytes, as `Data` bridges to them with `as CFData`.
public typealias CFData = NSData
/// A number, as `Int` and `Bool` bridge to it with `as CFNumber`.
public typealias CFNumber = NSNumber
/// A count or an index.
public typealias CFIndex = Int
/// Flags of Core Foundation calls.
public typealias CFOptionFlags = UInt
/// The domain of a `CFError`.
public typealias CFErrorDomain = CFString

/// The Info.plist key of a bundle's identifier, as Locksmith reads
/// `Bundle.main.infoDictionary![String(kCFBundleIdentifierKey)]`.
nonisolated(unsafe) public let kCFBundleIdentifierKey: CFString = "CFBundleIdentifier"

/// The error's code (`errSecParam` for `SecAccessControlCreateWithFlags`'s).
public func CFErrorGetCode(_ error: CFError) -> CFIndex { error.code }

/// The error's domain.
public func CFErrorGetDomain(_ error: CFError) -> CFErrorDomain! { error.domain as CFString }

/// A description of the error for people.
public func CFErrorCopyDescription(_ error: CFError) -> CFString! { error.localizedDescription as CFString }

/// Why the error happened, when the error says.
public func CFErrorCopyFailureReason(_ error: CFError) -> CFString? { error.localizedFailureReason as CFString? }

/// What to do about it, when the error says.
public func CFErrorCopyRecoverySuggestion(_ error: CFError) -> CFString? { error.localizedRecoverySuggestion as CFString? }

/// The error's user info.
public func CFErrorCopyUserInfo(_ error: CFError) -> CFDictionary! { NSDictionary(dictionary: error.userInfo) }

/// A `CFString` as a key of `[AnyHashable: Any]` is the `String` it bridges to, as on Apple's
/// platforms: `attributes[kSecAttrAccount]` finds the account of a result cast to
/// `[[AnyHashable: Any]]` (SwiftKeychainWrapper's `allKeys()`). Linux Foundation's `NSString`
/// hashes as an object otherwise, so such a lookup finds nothing.
extension NSString: @retroactive _HasCustomAnyHashableRepresentation {
    public func _toCustomAnyHashable() -> AnyHashable? { AnyHashable(self as String) }
}
