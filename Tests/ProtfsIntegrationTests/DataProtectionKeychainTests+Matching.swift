@testable import DataProtection
import Foundation
import Synchronization
import Testing

/// `SecItemCopyMatching`, `SecItemUpdate` and `SecItemDelete` as one request each, matched by
/// the daemon: counted on the library's side, and checked against changes made meanwhile.
extension DataProtectionKeychainTests {
    static func labelled(_ label: String, _ extra: [String: Any] = [:]) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: label].merging(extra) { $1 }
    }

    static func addItem(_ account: String, label: String, secret: String, group: String? = nil) -> OSStatus {
        var query = Self.query(account, [kSecAttrLabel as String: label, kSecValueData as String: Data(secret.utf8)])
        query[kSecAttrAccessGroup as String] = group
        return SecItemAdd(query as CFDictionary, nil)
    }

    /// The status of `call`, and how many requests it sent the daemon of `mountpoint`.
    static func requests(to mountpoint: String, _ call: () -> OSStatus) -> (status: OSStatus, requests: Int) {
        let before = KeychainVault.requestCount(mountpoint: mountpoint)
        let status = call()
        return (status, KeychainVault.requestCount(mountpoint: mountpoint) - before)
    }

    @Test func eachCallIsOneRequestWhateverItMatches() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            for number in 0..<40 {
                #expect(Self.addItem("user\(number)", label: number % 2 == 0 ? "even" : "odd", secret: "secret \(number)")
                        == errSecSuccess)
            }
            var result: CFTypeRef?
            let all = Self.labelled("even", [kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnData as String: true,
                                             kSecReturnAttributes as String: true])
            #expect(Self.requests(to: vault.mountpoint) { SecItemCopyMatching(all as CFDictionary, &result) } == (errSecSuccess, 1))
            let found = result as? [[String: Any]] ?? []
            #expect(found.count == 20)
            for item in found {
                let account = item[kSecAttrAccount as String] as? String ?? ""
                #expect(item[kSecValueData as String] as? Data == Data("secret \(account.dropFirst(4))".utf8))
            }
            let change: [String: Any] = [kSecValueData as String: Data("reset".utf8), kSecAttrComment as String: "was even"]
            #expect(Self.requests(to: vault.mountpoint) { SecItemUpdate(Self.labelled("even") as CFDictionary, change as CFDictionary) }
                    == (errSecSuccess, 1))
            let comments = Self.labelled("odd", [kSecAttrComment as String: "was even"])
            #expect(SecItemCopyMatching(comments as CFDictionary, nil) == errSecItemNotFound)
            #expect(Self.requests(to: vault.mountpoint) { SecItemDelete(Self.labelled("even") as CFDictionary) } == (errSecSuccess, 1))
            let left = Self.labelled("odd", [kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true])
            #expect(SecItemCopyMatching(left as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [[String: Any]])?.count == 20)
        }
        #expect(vault.item("list", []).stdout.components(separatedBy: "\n").filter { $0.contains("user") }.count == 20)
    }

    /// An item's access group is kept, matched and returned; a query without one reaches only
    /// the program's own group.
    @Test func accessGroupsAreKeptAndMatched() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            #expect(Self.addItem("alice", label: "", secret: "a", group: "TEAM.shared") == errSecSuccess)
            #expect(Self.addItem("bob", label: "", secret: "b") == errSecSuccess)
            var result: CFTypeRef?
            let shared = Self.query("alice", [kSecAttrAccessGroup as String: "TEAM.shared", kSecReturnAttributes as String: true])
            #expect(SecItemCopyMatching(shared as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccessGroup as String] as? String == "TEAM.shared")
            let other = Self.query("alice", [kSecAttrAccessGroup as String: "TEAM.other"])
            #expect(SecItemCopyMatching(other as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemDelete(other as CFDictionary) == errSecItemNotFound)
            let any = [kSecClass as String: kSecClassGenericPassword]
            #expect(SecItemDelete(any as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(any as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemDelete(Self.query("alice", [kSecAttrAccessGroup as String: "TEAM.shared"]) as CFDictionary) == errSecSuccess)
        }
    }

    /// iOS returns a program's matches in the order their items were added, not by name.
    @Test func matchesComeBackInInsertionOrder() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        Self.withKeychain(vault.mountpoint) {
            for account in ["zeta", "alpha", "mike"] {
                #expect(Self.addItem(account, label: "ordered", secret: account) == errSecSuccess)
            }
            var result: CFTypeRef?
            let all = Self.labelled("ordered", [kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                                                kSecReturnData as String: true])
            #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
            let found = (result as? [[String: Any]] ?? []).map { $0[kSecAttrAccount as String] as? String ?? "" }
            #expect(found == ["zeta", "alpha", "mike"])
        }
    }

    /// While another thread moves items between two labels, each with a secret that names its
    /// label, every match returns items that have the label asked for, each with its own
    /// secret: the daemon reads attributes and secrets in one step.
    @Test func aMatchNeverReturnsASecretThatIsNotItsItems() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try Self.withKeychain(vault.mountpoint) {
            let accounts = (0..<12).map { "user\($0)" }
            for account in accounts {
                #expect(Self.addItem(account, label: "blue", secret: "\(account) blue 0") == errSecSuccess)
            }
            let done = StopFlag()
            let finished = DispatchSemaphore(value: 0)
            let changer = Thread {
                defer { finished.signal() }
                var round = 1
                while !done.isSet {
                    for account in accounts {
                        let label = (round + account.count) % 2 == 0 ? "blue" : "red"
                        let change: [String: Any] = [kSecAttrLabel as String: label,
                                                     kSecValueData as String: Data("\(account) \(label) \(round)".utf8)]
                        _ = SecItemUpdate(Self.query(account) as CFDictionary, change as CFDictionary)
                    }
                    round += 1
                }
            }
            changer.start()
            // Joined before the keychain is unset: its calls must not reach another mount.
            defer {
                done.set()
                finished.wait()
            }
            for label in Array(repeating: ["blue", "red"], count: 15).joined() {
                var result: CFTypeRef?
                let query = Self.labelled(label, [kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnData as String: true,
                                                  kSecReturnAttributes as String: true])
                let status = SecItemCopyMatching(query as CFDictionary, &result)
                #expect(status == errSecSuccess || status == errSecItemNotFound)
                for item in result as? [[String: Any]] ?? [] {
                    let account = try #require(item[kSecAttrAccount as String] as? String)
                    let secret = String(decoding: item[kSecValueData as String] as? Data ?? Data(), as: UTF8.self)
                    #expect(item[kSecAttrLabel as String] as? String == label)
                    #expect(secret.hasPrefix("\(account) \(label) "), "\(account) matched \(label) with the secret '\(secret)'")
                }
            }
        }
    }
}

/// Tells a thread to stop.
private final class StopFlag: Sendable {
    private let stopped = Atomic<Bool>(false)
    var isSet: Bool { stopped.load(ordering: .relaxed) }
    func set() { stopped.store(true, ordering: .relaxed) }
}
