@testable import DataProtection
import Foundation
import ProtfsDomain
import Synchronization
import Testing

/// The names the five most used keychain wrappers use, with Apple's values; the keys Apple
/// accepts, accepted; every `errSecParam` explained.
@Suite("DataProtection: the wrappers' vocabulary")
struct WrapperVocabularyTests {
    private var named: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com", kSecAttrAccount as String: "alice"]
    }

    @Test func constantsHaveApplesValues() {
        #expect([kSecAttrProtocolFTP, kSecAttrProtocolHTTPS, kSecAttrProtocolSSH, kSecAttrProtocolIMAPS, kSecAttrProtocolSMB]
                == ["ftp ", "htps", "ssh ", "imps", "smb "])
        #expect([kSecAttrAuthenticationTypeNTLM, kSecAttrAuthenticationTypeHTTPBasic, kSecAttrAuthenticationTypeHTMLForm,
                  kSecAttrAuthenticationTypeDefault] == ["ntlm", "http", "form", "dflt"])
        #expect([kSecAttrCreator, kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative, kSecReturnRef, kSecValueRef,
                  kSecUseAuthenticationContext, kSecUseNoAuthenticationUI]
                == ["crtr", "type", "invi", "nega", "r_Ref", "v_Ref", "u_AuthCtx", "u_NoAuthUI"])
        #expect(errSecDecode == -26275)
        #expect(SecCopyErrorMessageString(errSecDecode, nil) == "Unable to decode the provided data.")
        // Locksmith's errors and default service.
        #expect(errSecAllocate == -108)
        #expect(SecCopyErrorMessageString(errSecAllocate, nil) == "Failed to allocate memory.")
        #expect(kCFBundleIdentifierKey == "CFBundleIdentifier")
        // Every key has its constant's name for the reasons of errSecParam.
        for key in KeychainQuery.Use.search.keys.union(KeychainQuery.Use.add.keys) {
            #expect(KeyNames.name(of: key).hasPrefix("kSec"), "\(key)")
        }
    }

    /// SwiftKeychainWrapper's `allKeys()` reads a result cast to `[[AnyHashable: Any]]` with
    /// the constant itself as the key.
    @Test func constantsAreTheirStringsAsHashableKeys() {
        let attributes: [AnyHashable: Any] = ["acct": Data("k".utf8), "svce": "s"]
        #expect(attributes[kSecAttrAccount] as? Data == Data("k".utf8))
        #expect(attributes[kSecAttrService] as? String == "s")
        #expect(AnyHashable(kSecAttrAccount) == AnyHashable("acct"))
        #expect(Set<AnyHashable>([kSecAttrAccount, "acct"]).count == 1)
    }

    /// Locksmith's update passes its whole query as the attributes too: what repeats the
    /// query changes nothing, whatever its key, but the new secret is a change.
    @Test func attributesThatRepeatTheQueryAreNoChange() {
        let query: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                                    kSecAttrPort as String: 8080, kSecAttrProtocol as String: kSecAttrProtocolFTP,
                                    kSecAttrSecurityDomain as String: "domain", kSecAttrAccount as String: "alice",
                                    kSecValueData as String: Data("new".utf8)]
        var attributes = query
        attributes[kSecClass as String] = nil
        attributes[kSecAttrLabel as String] = "renewed"
        attributes[kSecAttrPort as String] = 8081
        let changes = UnchangedAttributes.removed(from: attributes as CFDictionary, sameAs: query as CFDictionary)
        #expect(Set(changes.allKeys.compactMap { $0 as? String })
                == [kSecValueData as String, kSecAttrLabel as String, kSecAttrPort as String])
    }

    @Test func randomBytesAreRandom() {
        var first = [UInt8](repeating: 0, count: 64), second = [UInt8](repeating: 0, count: 64)
        #expect(SecRandomCopyBytes(kSecRandomDefault, first.count, &first) == errSecSuccess)
        #expect(SecRandomCopyBytes(nil, second.count, &second) == errSecSuccess)
        #expect(first != second && first != [UInt8](repeating: 0, count: 64))
        #expect(SecRandomCopyBytes(nil, -1, &first) == errSecParam)
    }

    @Test func accessControlsAreHashableAndErrorsReadable() {
        let one = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil)!
        let same = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil)!
        let other = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, [], nil)!
        #expect(Set([one, same, other]).count == 2)
        var error: Unmanaged<CFError>?
        #expect(SecAccessControlCreateWithFlags(nil, "nonsense", [], &error) == nil)
        let failure = error!.takeRetainedValue()
        #expect(CFErrorGetCode(failure) == CFIndex(errSecParam) && CFErrorGetDomain(failure) == "NSOSStatusErrorDomain")
        #expect(!(CFErrorCopyDescription(failure) as String).isEmpty)
    }

    /// Keys Apple accepts that protfs refused with -50.
    @Test func validKeysAreAccepted() throws {
        var update = named
        update[kSecValueData as String] = Data("old".utf8)
        #expect(try KeychainQuery(update as CFDictionary, for: .match).matches(
            ItemAttributes(service: "api.example.com", account: "alice",
                           lookupAttributes: [KeychainQuery.accessGroupAttribute: ProtfsKeychain.applicationIdentifier])))
        var add = named
        add[kSecAttrCreator as String] = 0x6C6B_7376
        add[kSecAttrIsInvisible as String] = true
        add[kSecReturnRef as String] = false
        add[kSecUseNoAuthenticationUI as String] = true
        add[kSecUseAuthenticationContext as String] = NSObject()
        let item = try KeychainQuery(add as CFDictionary, for: .add).newItem()
        let returned = Keychain.attributeDictionary(item)
        #expect(returned[kSecAttrCreator as String] as? Int == 0x6C6B_7376 && returned[kSecAttrIsInvisible as String] as? Bool == true)
        var search = named
        search[kSecAttrCreator as String] = 0x6C6B_7376
        #expect(try KeychainQuery(search as CFDictionary, for: .search).matches(item))
        search[kSecAttrCreator as String] = 1
        #expect(try !KeychainQuery(search as CFDictionary, for: .search).matches(item))
        // A false boolean matches an item that never gave it, as Apple's default.
        var visible = named
        visible[kSecAttrIsNegative as String] = false
        #expect(try KeychainQuery(visible as CFDictionary, for: .search).matches(item))
        visible[kSecAttrIsInvisible as String] = false
        #expect(try !KeychainQuery(visible as CFDictionary, for: .search).matches(item))
        add[kSecReturnRef as String] = true
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecUnimplemented)
    }

    /// Each errSecParam says which key and why, through SecCopyErrorMessageString on the
    /// thread that got it, never with the value.
    @Test func everyErrSecParamIsExplained() {
        let cases: [([String: Any], String)] = [
            ([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: 7], "kSecAttrService must be a String"),
            ([kSecClass as String: kSecClassGenericPassword, "nonsense": true], "\"nonsense\" is not a key SecItemAdd takes"),
            ([kSecAttrService as String: "s"], "kSecClass is missing"),
            ([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: Bundle.main.bundleIdentifier as Any],
             "kSecAttrService is nil"),
            ([kSecClass as String: kSecClassGenericPassword, kSecValueData as String: Data(count: 65 * 1024)],
             "kSecValueData has 66560 bytes"),
        ]
        for (query, reason) in cases {
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecParam)
            let message = SecCopyErrorMessageString(errSecParam, nil) ?? ""
            #expect(message.hasPrefix("One or more parameters passed to a function were not valid. (") && message.contains(reason),
                    "\(message)")
        }
        let secret = "hunter2-do-not-show"
        _ = SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: Data(secret.utf8)] as CFDictionary, nil)
        let message = SecCopyErrorMessageString(errSecParam, nil) ?? ""
        #expect(message.contains("kSecAttrLabel must be a String, not") && !message.contains(secret))
        // Another thread's last failure is its own: a new thread has none.
        let elsewhere = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            elsewhere.withLock { $0 = SecCopyErrorMessageString(errSecParam, nil) as String? }
            done.signal()
        }.start()
        done.wait()
        #expect(elsewhere.withLock { $0 } == "One or more parameters passed to a function were not valid.")
    }
}
