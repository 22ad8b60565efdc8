import Foundation

// The Security framework's names, so that iOS keychain code compiles unchanged on Linux,
// where Foundation has no CoreFoundation types: `query as CFDictionary` bridges a Swift
// dictionary to `NSDictionary`, `kSecClass as String` is a plain string, and a result comes
// back through `var result: CFTypeRef?` as on iOS. The constants are objects (`NSString`,
// `NSNumber`), as Apple's are, so that `[String: AnyObject]` queries take them unchanged;
// they are immutable, so sharing them between threads is safe (`nonisolated(unsafe)`: Linux
// Foundation does not mark them `Sendable`).

/// A status code of the Security framework; the values are Apple's.
public typealias OSStatus = Int32
/// A query or attribute dictionary: `[String: Any]` bridges to it with `as CFDictionary`.
public typealias CFDictionary = NSDictionary
/// The keys and constant values of queries (`kSecClass`, `kSecAttrAccessibleWhenUnlocked`):
/// `kSecClass as String` is the key of a `[String: Any]` query.
public typealias CFString = NSString
/// A result: `Data`, a dictionary of attributes, or an array of either.
public typealias CFTypeRef = AnyObject
/// A query's yes or no (`kSecReturnData as String: kCFBooleanTrue!` or `true`).
public typealias CFBoolean = NSNumber

/// Apple's `kCFBooleanTrue`, for queries written with it.
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// Apple's `kCFBooleanFalse`.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)

/// A key or constant of a query as the `String` it bridges to: `switch key { case kSecClass: }`.
func ~= (constant: CFString, value: String) -> Bool { constant as String == value }

/// Keys or constants as the `String`s they bridge to.
func strings(_ constants: CFString...) -> Set<String> { Set(constants.map { $0 as String }) }

/// The item's class: generic and internet passwords are kept on protfs; keys, certificates
/// and identities are `errSecUnimplemented`.
nonisolated(unsafe) public let kSecClass: CFString = "class"
/// A generic password: a secret with a service and an account.
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
/// An internet password: unique by account, server, protocol, port, path, authentication
/// type and security domain, as on iOS.
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
/// A cryptographic key: `errSecUnimplemented` on protfs.
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
/// A certificate: `errSecUnimplemented` on protfs.
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
/// A certificate with its private key: `errSecUnimplemented` on protfs.
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"
/// The service (with the account, unique per user); empty when an added item names none.
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
/// The account (a `String`, or its UTF-8 bytes as `Data`).
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
/// A label for people.
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
/// A description for people.
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
/// A comment.
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
/// The application's own bytes (`Data`).
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
/// When the secret can be read: one of the seven `kSecAttrAccessible...` values.
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
/// Readable while unlocked (the `complete` class key); the default.
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// Readable from the first unlock until unmount (`completeUntilFirstUserAuthentication`).
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// Always readable (`none`); deprecated by Apple.
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
/// As `WhenUnlocked`, bound to this device, and only while the vault has a passcode.
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
/// As `WhenUnlocked`, bound to this device's key.
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
/// As `AfterFirstUnlock`, bound to this device's key.
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// As `Always`, bound to this device's key.
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"
/// When the item was added (`Date`), in returned attributes.
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
/// When the item last changed (`Date`), in returned attributes.
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
/// The secret (`Data`): given to `SecItemAdd` and `SecItemUpdate`, returned with
/// `kSecReturnData`.
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
/// Return the secret (`Data`).
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
/// Return the attributes (a dictionary).
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
/// How many items to return: `kSecMatchLimitOne` (the default) or `kSecMatchLimitAll`
/// (then the result is an array).
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
/// Return the first match.
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Return every match, as an array.
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
/// Return a reference that finds the item again as `kSecValuePersistentRef` (`Data`).
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
/// A reference from `kSecReturnPersistentRef`: matches that one item.
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"
/// Whether the item synchronizes through iCloud: nothing synchronizes on protfs, so `false`
/// and `kSecAttrSynchronizableAny` match every item, `true` in a search matches none, and
/// `true` for a new item is `errSecUnimplemented`.
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
/// Synchronizing or not, in a search.
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"
/// The access group: kept with the item. An item added without one is in the program's
/// (`ProtfsKeychain.applicationIdentifier`), and a query without one reaches only that group:
/// an accident guard, not a boundary (every program of a user may name any group).
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
/// A `SecAccessControl` from `SecAccessControlCreateWithFlags`, instead of
/// `kSecAttrAccessible`.
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
/// Whether the Security framework may prompt: protfs never prompts, so every value behaves
/// as `kSecUseAuthenticationUIFail`.
nonisolated(unsafe) public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
/// Prompt when needed.
nonisolated(unsafe) public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
/// Fail where a prompt would be needed.
nonisolated(unsafe) public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
/// Skip items that would need a prompt.
nonisolated(unsafe) public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
/// The text of a prompt: accepted, never shown (protfs never prompts).
nonisolated(unsafe) public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
/// macOS's choice of the data protection keychain; the protfs keychain is one, so accepted.
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// An internet password's server.
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
/// An internet password's protocol (`kSecAttrProtocolHTTPS`, ...).
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
/// An internet password's port (a number).
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
/// An internet password's path.
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"
/// An internet password's authentication type.
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
/// An internet password's security domain.
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
/// The item's creator, a four-character code as a number: kept and matched.
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
/// The item's type, a four-character code as a number: kept and matched.
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
/// Whether the item is hidden from keychain browsers: kept and matched.
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is a placeholder for a password the user declined to save: kept and
/// matched.
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
/// Return an object reference: passwords have none, so only `false` is accepted.
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
/// An object reference to match: passwords have none, so `errSecUnimplemented`.
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
/// An authentication context (`LAContext`): accepted, never used (protfs never prompts).
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
/// Apple's older form of `kSecUseAuthenticationUIFail` (a `Bool`): accepted.
nonisolated(unsafe) public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"
