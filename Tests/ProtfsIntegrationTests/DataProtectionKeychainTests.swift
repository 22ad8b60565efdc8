import DataProtection
import Foundation
import Testing

/// README.md's keychain: `SecItem*` as iOS code calls them, against a real mount's
/// item store, in every lock state, each answer one of Apple's `OSStatus` values.
@Suite("DataProtection: SecItem on a mount", .serialized)
struct DataProtectionKeychainTests {
    /// Points the library at `path` for the body: in code, since `setenv` races with the
    /// other suites' threads (the example's test uses `PROTFS_KEYCHAIN`). The mount point is
    /// one for the process, and suites run in parallel: one body at a time, whatever suite.
    static func withKeychain<T>(_ path: String, _ body: () throws -> T) rethrows -> T {
        keychainUser.lock()
        defer { keychainUser.unlock() }
        ProtfsKeychain.mountpoint = path
        defer { ProtfsKeychain.mountpoint = nil }
        return try body()
    }

    private static let keychainUser = NSRecursiveLock()

    static func query(_ account: String, _ extra: [String: Any] = [:]) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com",
         kSecAttrAccount as String: account].merging(extra) { $1 }
    }

    static func add(_ account: String, _ secret: String, _ accessible: CFString) -> OSStatus {
        SecItemAdd(query(account, [kSecValueData as String: Data(secret.utf8), kSecAttrAccessible as String: accessible])
                   as CFDictionary, nil)
    }

    static func secret(_ account: String) -> (OSStatus, Data?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query(account, [kSecReturnData as String: true]) as CFDictionary, &result)
        return (status, result as? Data)
    }

    @Test func roundTripWhileUnlocked() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            #expect(Self.add("alice", "token-1", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
            #expect(Self.add("alice", "token-2", kSecAttrAccessibleWhenUnlocked) == errSecDuplicateItem)
            #expect(Self.add("bob", "token-b", kSecAttrAccessibleAfterFirstUnlock) == errSecSuccess)
            #expect(Self.secret("alice") == (errSecSuccess, Data("token-1".utf8)))
            #expect(Self.secret("carol").0 == errSecItemNotFound)

            var result: CFTypeRef?
            let both = Self.query("alice", [kSecReturnData as String: kCFBooleanTrue!, kSecReturnAttributes as String: true])
            #expect(SecItemCopyMatching(both as CFDictionary, &result) == errSecSuccess)
            let attributes = result as? [String: Any]
            #expect(attributes?[kSecAttrAccount as String] as? String == "alice")
            #expect(attributes?[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked as String)
            #expect(attributes?[kSecValueData as String] as? Data == Data("token-1".utf8))

            let all: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                                      kSecReturnAttributes as String: true]
            #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
            #expect(Set((result as? [[String: Any]] ?? []).compactMap { $0[kSecAttrAccount as String] as? String }) == ["alice", "bob"])

            let secrets: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                                          kSecReturnData as String: true]
            #expect(SecItemCopyMatching(secrets as CFDictionary, &result) == errSecSuccess)
            #expect(Set(result as? [Data] ?? []) == [Data("token-1".utf8), Data("token-b".utf8)])
            var added: CFTypeRef?
            let withReturn = Self.query("dave", [kSecValueData as String: Data("d".utf8), kSecReturnAttributes as String: true])
            #expect(SecItemAdd(withReturn as CFDictionary, &added) == errSecSuccess)
            #expect((added as? [String: Any])?[kSecAttrAccount as String] as? String == "dave")
            #expect((added as? [String: Any])?[kSecValueData as String] == nil)
            #expect(SecItemDelete(Self.query("dave") as CFDictionary) == errSecSuccess)

            let change: [String: Any] = [kSecValueData as String: Data("token-3".utf8), kSecAttrLabel as String: "renewed"]
            #expect(SecItemUpdate(Self.query("alice") as CFDictionary, change as CFDictionary) == errSecSuccess)
            #expect(Self.secret("alice") == (errSecSuccess, Data("token-3".utf8)))
            #expect(SecItemUpdate(Self.query("carol") as CFDictionary, change as CFDictionary) == errSecItemNotFound)
            #expect(SecItemAdd([kSecAttrService as String: "no class"] as CFDictionary, nil) == errSecParam)

            #expect(SecItemDelete(Self.query("alice") as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete(Self.query("alice") as CFDictionary) == errSecItemNotFound)
            #expect(Self.secret("bob") == (errSecSuccess, Data("token-b".utf8)))
        }
        #expect(vault.item("list", []).stdout.contains("bob"))
    }

    @Test func theLockDecidesAsForFilesOfTheClass() throws {
        let vault = try TestVault()
        try vault.mount(in: .locked) {
            Self.withKeychain(vault.mountpoint) {
                #expect(Self.add("when", "w", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
                #expect(Self.add("after", "a", kSecAttrAccessibleAfterFirstUnlock) == errSecSuccess)
                #expect(Self.add("always", "x", kSecAttrAccessibleAlwaysThisDeviceOnly) == errSecSuccess)
            }
        }
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            // Locked: `complete` secrets refused, the rest readable; attributes always.
            #expect(Self.secret("when").0 == errSecInteractionNotAllowed)
            #expect(Self.secret("after") == (errSecSuccess, Data("a".utf8)))
            #expect(Self.add("new", "n", kSecAttrAccessibleWhenUnlocked) == errSecInteractionNotAllowed)
            #expect(Self.add("new", "n", kSecAttrAccessibleAfterFirstUnlock) == errSecSuccess)
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(Self.query("when", [kSecReturnAttributes as String: true]) as CFDictionary, &result)
                    == errSecSuccess)
            #expect(SecItemUpdate(Self.query("when") as CFDictionary, [kSecValueData as String: Data("w2".utf8)] as CFDictionary)
                    == errSecInteractionNotAllowed)
            #expect(SecItemUpdate(Self.query("when") as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete(Self.query("new") as CFDictionary) == errSecSuccess)
        }
        // Before the first unlock only `always` secrets can be read.
        try vault.unmount()
        try vault.mount(passcode: false)
        try Self.withKeychain(vault.mountpoint) {
            #expect(Self.secret("after").0 == errSecInteractionNotAllowed)
            #expect(Self.secret("always") == (errSecSuccess, Data("x".utf8)))
            try vault.unlock()
            #expect(Self.secret("when") == (errSecSuccess, Data("w".utf8)))
        }
    }

    /// During the grace period everything still works, as for `complete` files.
    @Test func theGracePeriodAllowsEverything() throws {
        let vault = try TestVault()
        try vault.mount(in: .locking) {
            Self.withKeychain(vault.mountpoint) {
                #expect(Self.add("when", "w", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
            }
        }
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            #expect(Self.secret("when") == (errSecSuccess, Data("w".utf8)))
            #expect(Self.add("more", "m", kSecAttrAccessibleWhenUnlockedThisDeviceOnly) == errSecSuccess)
            #expect(SecItemUpdate(Self.query("more") as CFDictionary, [kSecValueData as String: Data("m2".utf8)] as CFDictionary)
                    == errSecSuccess)
            #expect(SecItemDelete(Self.query("more") as CFDictionary) == errSecSuccess)
        }
    }

    /// Queries shaped as iOS accepts them, and what used to trap or say "not available".
    @Test func iOSShapedQueriesOnAMount() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try FileManager.default.createDirectory(atPath: vault.path("app/data"), withIntermediateDirectories: true)
        // A path inside the mount names it, as its mount point does.
        Self.withKeychain(vault.path("app/data")) {
            let bare: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: Data("me".utf8)]
            #expect(SecItemAdd(bare.merging([kSecValueData as String: Data("t".utf8)]) { $1 } as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            let found = bare.merging([kSecReturnAttributes as String: true, kSecReturnPersistentRef as String: true,
                                      kSecMatchLimit as String: 1]) { $1 }
            #expect(SecItemCopyMatching(found as CFDictionary, &result) == errSecSuccess)
            let attributes = result as? [String: Any]
            #expect(attributes?[kSecAttrService as String] as? String == "")
            #expect(attributes?[kSecAttrAccount as String] as? Data == Data("me".utf8), "returned as it was given")
            let reference = try? #require(attributes?[kSecValuePersistentRef as String] as? Data)

            // A rename keeps the secret; a rename onto another item is a duplicate.
            #expect(Self.add("bob", "b", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
            #expect(SecItemUpdate(bare as CFDictionary, [kSecAttrAccount as String: "you"] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(bare as CFDictionary, nil) == errSecItemNotFound)
            var secret: CFTypeRef?
            let renamed: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "you",
                                          kSecReturnData as String: true]
            #expect(SecItemCopyMatching(renamed as CFDictionary, &secret) == errSecSuccess)
            #expect(secret as? Data == Data("t".utf8))
            #expect(SecItemUpdate(Self.query("bob") as CFDictionary,
                                  [kSecAttrService as String: "", kSecAttrAccount as String: "you"] as CFDictionary)
                    == errSecDuplicateItem)
            #expect(Self.secret("bob") == (errSecSuccess, Data("b".utf8)))
            // The old persistent reference named the old account.
            if let reference {
                #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword,
                                             kSecValuePersistentRef as String: reference] as CFDictionary, nil) == errSecItemNotFound)
            }

            // Too big is errSecParam, and the program lives on.
            let huge = Self.query("big", [kSecValueData as String: Data(count: 65_537)])
            #expect(SecItemAdd(huge as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd(Self.query(String(repeating: "a", count: 70_000)) as CFDictionary, nil) == errSecParam)
        }
        #expect(try ProtectedData.isProtectedDataAvailable(mountpoint: vault.path("app/data")))
    }

    @Test func withoutAKeychainVaultEveryCallIsNotAvailable() throws {
        Self.withKeychain(NSTemporaryDirectory()) {
            #expect(Self.add("a", "s", kSecAttrAccessibleWhenUnlocked) == errSecNotAvailable)
            #expect(Self.secret("a").0 == errSecNotAvailable)
            #expect(SecItemUpdate(Self.query("a") as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary) == errSecNotAvailable)
            #expect(SecItemDelete(Self.query("a") as CFDictionary) == errSecNotAvailable)
        }
    }
}
