import DataProtection
import Foundation
import Testing

/// Each program its own keychain (docs/DATAPROTECTION.md): KeychainSwift's `clear()` is
/// `SecItemDelete([kSecClass: kSecClassGenericPassword])`, which on iOS deletes the calling
/// app's items only.
extension DataProtectionKeychainTests {
    /// `body` as the program whose application identifier is `identifier`.
    static func asProgram<T>(_ identifier: String, _ body: () throws -> T) rethrows -> T {
        ProtfsKeychain.givenApplicationIdentifier = identifier
        defer { ProtfsKeychain.givenApplicationIdentifier = nil }
        return try body()
    }

    @Test("a wipe by class leaves the Secret Service's, protfsctl's and another program's items")
    func aWipeByClassTakesOnlyTheProgramsItems() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let stored = SecretServiceTests.onBus(vault, ["/bin/bash", "-c",
                                                      "printf kept | secret-tool store --label=Git service git.example.com username dave"])
        #expect(stored.succeeded, "\(stored.stdout) \(stored.stderr)")
        #expect(vault.item("add", ["--service", "cli.example.com", "--account", "erin"], stdin: "cli").succeeded)
        Self.withKeychain(vault.mountpoint) {
            Self.asProgram("com.example.other") {
                #expect(Self.add("frank", "theirs", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
            }
            Self.asProgram("com.example.mine") {
                #expect(Self.add("alice", "mine", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
                #expect(Self.add("bob", "mine too", kSecAttrAccessibleAfterFirstUnlock) == errSecSuccess)
                let all: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                                          kSecReturnAttributes as String: true]
                var result: CFTypeRef?
                #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
                #expect(Set((result as? [[String: Any]] ?? []).compactMap { $0[kSecAttrAccount as String] as? String }) == ["alice", "bob"])
                #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary) == errSecSuccess)
                #expect(SecItemCopyMatching(all as CFDictionary, nil) == errSecItemNotFound)
                // Items of no group stay reachable by name, as earlier builds' items must.
                var secret: CFTypeRef?
                let named: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "cli.example.com",
                                            kSecAttrAccount as String: "erin", kSecReturnData as String: true]
                #expect(SecItemCopyMatching(named as CFDictionary, &secret) == errSecSuccess)
                #expect(secret as? Data == Data("cli".utf8))
                #expect(Self.secret("frank").0 == errSecItemNotFound)
            }
            Self.asProgram("com.example.other") {
                #expect(Self.secret("frank") == (errSecSuccess, Data("theirs".utf8)))
            }
        }
        let listed = vault.item("list", []).stdout
        #expect(listed.contains("git.example.com\tdave"), "\(listed)")
        #expect(listed.contains("cli.example.com\terin"), "\(listed)")
        let lookup = SecretServiceTests.onBus(vault, ["secret-tool", "lookup", "service", "git.example.com", "username", "dave"])
        #expect(lookup.stdout == "kept", "\(lookup.stdout) \(lookup.stderr)")
    }
}
