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

/// The item's class: generic and internet passwords are kept on protfs; keys, certificates
/// and identities are `errSecUnimplemented`.
public let kSecClass: CFString = "class"
/// A generic password: a secret with a service and an account.
public let kSecClassGenericPassword: CFString = "genp"
/// An internet password: unique by account, server, protocol, port, path, authentication
/// type and security domain, as on iOS.
public let kSecClassInternetPassword: CFString = "inet"
/// A cryptographic key: `errSecUnimplemented` on protfs.
public let kSecClassKey: CFString = "keys"
/// A certificate: `errSecUnimplemented` on protfs.
public let kSecClassCertificate: CFString = "cert"
/// A certificate with its private key: `errSecUnimplemented` on protfs.
public let kSecClassIdentity: CFString = "idnt"
/// The service (with the account, unique per user); empty when an added item names none.
public let kSecAttrService: CFString = "svce"
/// The account (a `String`, or its UTF-8 bytes as `Data`).
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
/// Return a reference that finds the item again as `kSecValuePersistentRef` (`Data`).
public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
/// A reference from `kSecReturnPersistentRef`: matches that one item.
public let kSecValuePersistentRef: CFString = "v_PersistentRef"
/// Whether the item synchronizes through iCloud: nothing synchronizes on protfs, so `false`
/// and `kSecAttrSynchronizableAny` match every item, `true` in a search matches none, and
/// `true` for a new item is `errSecUnimplemented`.
public let kSecAttrSynchronizable: CFString = "sync"
/// Synchronizing or not, in a search.
public let kSecAttrSynchronizableAny: CFString = "syna"
/// The access group: kept with the item. An item added without one is in the program's
/// (`ProtfsKeychain.applicationIdentifier`), and a query without one reaches only that group:
/// an accident guard, not a boundary (every program of a user may name any group).
public let kSecAttrAccessGroup: CFString = "agrp"
/// A `SecAccessControl` from `SecAccessControlCreateWithFlags`, instead of
/// `kSecAttrAccessible`.
public let kSecAttrAccessControl: CFString = "accc"
/// Whether the Security framework may prompt: protfs never prompts, so every value behaves
/// as `kSecUseAuthenticationUIFail`.
public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
/// Prompt when needed.
public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
/// Fail where a prompt would be needed.
public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
/// Skip items that would need a prompt.
public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
/// The text of a prompt: accepted, never shown (protfs never prompts).
public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
/// macOS's choice of the data protection keychain; the protfs keychain is one, so accepted.
public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// An internet password's server.
public let kSecAttrServer: CFString = "srvr"
/// An internet password's protocol (`kSecAttrProtocolHTTPS`, ...).
public let kSecAttrProtocol: CFString = "ptcl"
/// An internet password's port (a number).
public let kSecAttrPort: CFString = "port"
/// An internet password's path.
public let kSecAttrPath: CFString = "path"
/// An internet password's authentication type.
public let kSecAttrAuthenticationType: CFString = "atyp"
/// An internet password's security domain.
public let kSecAttrSecurityDomain: CFString = "sdmn"
/// The item's creator, a four-character code as a number: kept and matched.
public let kSecAttrCreator: CFString = "crtr"
/// The item's type, a four-character code as a number: kept and matched.
public let kSecAttrType: CFString = "type"
/// Whether the item is hidden from keychain browsers: kept and matched.
public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is a placeholder for a password the user declined to save: kept and
/// matched.
public let kSecAttrIsNegative: CFString = "nega"
/// Return an object reference: passwords have none, so only `false` is accepted.
public let kSecReturnRef: CFString = "r_Ref"
/// An object reference to match: passwords have none, so `errSecUnimplemented`.
public let kSecValueRef: CFString = "v_Ref"
/// An authentication context (`LAContext`): accepted, never used (protfs never prompts).
public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
/// Apple's older form of `kSecUseAuthenticationUIFail` (a `Bool`): accepted.
public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"
