@testable import DataProtection
import Foundation
@testable import ProtfsControlProtocol
import Synchronization
import Testing

/// The connection `SecItem*` keep to the keychain daemon (docs/CONTROL.md, "Kept
/// connections"): one for every call and every thread, found again when the daemon goes.
extension DataProtectionKeychainTests {
    @Test func oneConnectionServesEveryCallOfEveryThread() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            #expect(Self.add("alice", "token", kSecAttrAccessibleWhenUnlocked) == errSecSuccess)
            let connection = KeychainVault.find().connection
            let before = connection.connectionsMade
            let threads = 8, calls = 25
            let statuses = Mutex<[OSStatus]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                for _ in 0..<calls {
                    let (status, secret) = Self.secret("alice")
                    statuses.withLock { $0.append(secret == Data("token".utf8) ? status : errSecDecode) }
                }
            }
            #expect(statuses.withLock { $0 } == Array(repeating: errSecSuccess, count: threads * calls))
            #expect(connection.connectionsMade == before, "every call went on the connection the first one made")
        }
    }

    @Test func theKeptConnectionFindsTheVaultAgainAfterARemount() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try Self.withKeychain(vault.mountpoint) {
            #expect(Self.add("alice", "token", kSecAttrAccessibleAfterFirstUnlock) == errSecSuccess)
            try vault.unmount()
            #expect(Self.secret("alice").0 == errSecNotAvailable)
            try vault.mount()
            #expect(Self.secret("alice") == (errSecSuccess, Data("token".utf8)))
        }
    }
}
