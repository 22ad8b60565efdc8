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
