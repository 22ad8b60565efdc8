import DataProtection
import Foundation

/// Every Security and Core Foundation name the five most used keychain wrappers use
/// (KeychainSwift, SwiftKeychainWrapper, SimpleKeychain, Locksmith, Valet), each as their
/// sources write it: building this target is the test that they compile.
/// `WrapperVocabularyTests` checks their values.
enum WrapperVocabulary {
    static let protocols: [CFString] = [
        kSecAttrProtocolFTP, kSecAttrProtocolFTPAccount, kSecAttrProtocolHTTP, kSecAttrProtocolIRC, kSecAttrProtocolNNTP,
        kSecAttrProtocolPOP3, kSecAttrProtocolSMTP, kSecAttrProtocolSOCKS, kSecAttrProtocolIMAP, kSecAttrProtocolLDAP,
        kSecAttrProtocolAppleTalk, kSecAttrProtocolAFP, kSecAttrProtocolTelnet, kSecAttrProtocolSSH, kSecAttrProtocolFTPS,
        kSecAttrProtocolHTTPS, kSecAttrProtocolHTTPProxy, kSecAttrProtocolHTTPSProxy, kSecAttrProtocolFTPProxy,
        kSecAttrProtocolSMB, kSecAttrProtocolRTSP, kSecAttrProtocolRTSPProxy, kSecAttrProtocolDAAP, kSecAttrProtocolEPPC,
        kSecAttrProtocolIPP, kSecAttrProtocolNNTPS, kSecAttrProtocolLDAPS, kSecAttrProtocolTelnetS, kSecAttrProtocolIMAPS,
        kSecAttrProtocolIRCS, kSecAttrProtocolPOP3S,
    ]

    static let authenticationTypes: [CFString] = [
        kSecAttrAuthenticationTypeNTLM, kSecAttrAuthenticationTypeMSN, kSecAttrAuthenticationTypeDPA,
        kSecAttrAuthenticationTypeRPA, kSecAttrAuthenticationTypeHTTPBasic, kSecAttrAuthenticationTypeHTTPDigest,
        kSecAttrAuthenticationTypeHTMLForm, kSecAttrAuthenticationTypeDefault,
    ]

    static let keys: [CFString] = [
        kSecAttrCreator, kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative, kSecReturnRef, kSecValueRef,
        kSecUseAuthenticationContext, kSecUseNoAuthenticationUI,
    ]

    static let statuses: [OSStatus] = [errSecDecode, errSecAllocate, errSecInteractionNotAllowed, errSecItemNotFound, errSecNotAvailable]

    static let accessibilities: [CFString] = [
        kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAlways,
        kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
        kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleAlwaysThisDeviceOnly,
    ]

    static let descriptions: [CFString] = [kSecAttrLabel, kSecAttrDescription, kSecAttrComment]

    /// SimpleKeychain's and Valet's access control flags, as a stored property's type.
    static let flags: SecAccessControlCreateFlags = [.userPresence]

    static let yes: CFBoolean = kCFBooleanTrue

    /// Locksmith's default service, as written.
    static let defaultService = Bundle.main.infoDictionary![String(kCFBundleIdentifierKey)] as? String ?? "com.locksmith.defaultService"

    /// SwiftKeychainWrapper's `allKeys()`: a result's account read with the constant as the key.
    static func account(of attributes: [AnyHashable: Any]) -> Data? {
        attributes[kSecAttrAccount] as? Data
    }

    /// SimpleKeychain's and Valet's random bytes, Locksmith's error handling, as written.
    static func randomBytes(_ count: Int) -> Data? {
        var bytes = [UInt8](repeating: 0, count: count)
        let status = SecRandomCopyBytes(kSecRandomDefault, bytes.count, &bytes)
        return status == errSecSuccess ? Data(bytes) : nil
    }

    static func describe(_ error: Unmanaged<CFError>?) -> (code: CFIndex, domain: String, description: String)? {
        guard let error = error?.takeRetainedValue() else { return nil }
        return (CFErrorGetCode(error), CFErrorGetDomain(error) as String, CFErrorCopyDescription(error) as String)
    }

    static func explain(_ error: CFError) -> (reason: CFString?, suggestion: CFString?, userInfo: CFDictionary) {
        (CFErrorCopyFailureReason(error), CFErrorCopyRecoverySuggestion(error), CFErrorCopyUserInfo(error))
    }

    static func coreFoundation(_ data: Data, _ number: Int) -> (CFData, CFNumber, CFOptionFlags) {
        (data as CFData, number as CFNumber, CFOptionFlags(0))
    }

    static func accessControls() -> Set<SecAccessControl> {
        let control = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, [], nil)!
        return [control]
    }

    /// `FileManager()` as iOS code writes it: a protecting manager here.
    static func fileManager() -> ProtectedFileManager { FileManager() }
}
