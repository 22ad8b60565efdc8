import Foundation

// The Security framework's names, so that iOS keychain code compiles unchanged on Linux,
// where Foundation has no CoreFoundation types: `query as CFDictionary` bridges a Swift
// dictionary to `NSDictionary`, `kSecClass as String` is a plain string, and a result comes
// back through `var result: CFTypeRef?` as on iOS.

/// A status code of the Security framework; the values are Apple's.
public typealias OSStatus = Int32
/// A query or attribute dictionary: `[String: Any]` bridges to it with `as CFDictionary`.
public typealias CFDictionary = NSDictionary
/// The keys and constant values of queries (`kSecClass`, `kSecAttrAccessibleWhenUnlocked`).
public typealias CFString = String
/// A result: `Data`, a dictionary of attributes, or an array of either.
public typealias CFTypeRef = AnyObject
/// A query's yes or no (`kSecReturnData as String: kCFBooleanTrue!` or `true`).
public typealias CFBoolean = Bool

/// Apple's `kCFBooleanTrue`, for queries written with it.
public let kCFBooleanTrue: CFBoolean! = true
/// Apple's `kCFBooleanFalse`.
public let kCFBooleanFalse: CFBoolean! = false

/// No error.
public let errSecSuccess: OSStatus = 0
/// A parameter was missing or not valid: an unknown key or class, a missing service.
public let errSecParam: OSStatus = -50
/// No protfs keychain vault: `PROTFS_KEYCHAIN` names none, and there is not exactly one
/// protfs mount, or its daemon does not answer.
public let errSecNotAvailable: OSStatus = -25291
/// An item with this service and account exists.
public let errSecDuplicateItem: OSStatus = -25299
/// No item matches the query.
public let errSecItemNotFound: OSStatus = -25300
/// The lock state forbids it now: the item's class key is not available.
public let errSecInteractionNotAllowed: OSStatus = -25308

/// The item's class; only `kSecClassGenericPassword` exists on protfs.
public let kSecClass: CFString = "class"
/// A generic password: a secret with a service and an account.
public let kSecClassGenericPassword: CFString = "genp"
/// The service (with the account, unique per user); required by protfs when adding.
public let kSecAttrService: CFString = "svce"
/// The account.
public let kSecAttrAccount: CFString = "acct"
/// A label for people.
public let kSecAttrLabel: CFString = "labl"
/// A description for people.
public let kSecAttrDescription: CFString = "desc"
/// A comment.
public let kSecAttrComment: CFString = "icmt"
/// The application's own bytes (`Data`).
public let kSecAttrGeneric: CFString = "gena"
/// When the secret can be read: one of the seven `kSecAttrAccessible...` values.
public let kSecAttrAccessible: CFString = "pdmn"
/// Readable while unlocked (the `complete` class key); the default.
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// Readable from the first unlock until unmount (`completeUntilFirstUserAuthentication`).
public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// Always readable (`none`); deprecated by Apple.
public let kSecAttrAccessibleAlways: CFString = "dk"
/// As `WhenUnlocked`, bound to this device, and only while the vault has a passcode.
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
/// As `WhenUnlocked`, bound to this device's key.
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
/// As `AfterFirstUnlock`, bound to this device's key.
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// As `Always`, bound to this device's key.
public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"
/// When the item was added (`Date`), in returned attributes.
public let kSecAttrCreationDate: CFString = "cdat"
/// When the item last changed (`Date`), in returned attributes.
public let kSecAttrModificationDate: CFString = "mdat"
/// The secret (`Data`): given to `SecItemAdd` and `SecItemUpdate`, returned with
/// `kSecReturnData`.
public let kSecValueData: CFString = "v_Data"
/// Return the secret (`Data`).
public let kSecReturnData: CFString = "r_Data"
/// Return the attributes (a dictionary).
public let kSecReturnAttributes: CFString = "r_Attributes"
/// How many items to return: `kSecMatchLimitOne` (the default) or `kSecMatchLimitAll`
/// (then the result is an array).
public let kSecMatchLimit: CFString = "m_Limit"
/// Return the first match.
public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Return every match, as an array.
public let kSecMatchLimitAll: CFString = "m_LimitAll"
