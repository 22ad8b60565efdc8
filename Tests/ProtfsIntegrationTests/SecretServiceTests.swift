import DataProtection
import Foundation
import Testing

/// The Secret Service provider (docs/SECRETS.md) on private session buses (dbus-run-session),
/// driven by the clients programs use: secret-tool (libsecret), Python's keyring and
/// secretstorage, python3-dbus for plain sessions and malformed calls. Every run checks that
/// the bus name's owner is the provider's own process (secret-service-bus.sh).
@Suite("Secret Service", .serialized)
struct SecretServiceTests {
    /// Runs `client` on a private bus beside `protfsctl secret-service MOUNTPOINT options`,
    /// as `user` when given.
    static func onBus(_ vault: TestVault, options: [String] = [], user: TestUser? = nil, environment: [String: String] = [:],
                      _ client: [String], timeout: TimeInterval = 120) -> CommandResult {
        let arguments = ["dbus-run-session", "--", "/bin/bash", CommandRunner.scriptPath("secret-service-bus.sh"),
                         TestVault.protfsctl, vault.mountpoint] + options + ["--"] + client
        let launcher = user.map { ["/usr/bin/setpriv", "--reuid=\($0.uid)", "--regid=\($0.gid)", "--init-groups", "/usr/bin/env"] }
            ?? ["/usr/bin/env"]
        return CommandRunner.run(launcher[0], Array(launcher.dropFirst()) + arguments,
                                 environment: environment, timeout: timeout)
    }

    @Test("secret-tool store, lookup, search and clear; protfsctl item and SecItemCopyMatching see the same items")
    func secretToolAndTheOtherViews() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let run = Self.onBus(vault, ["/bin/bash", CommandRunner.scriptPath("secret-service-secret-tool.sh"), TestVault.protfsctl,
                                     vault.mountpoint])
        #expect(run.succeeded && run.stdout.hasSuffix("ok\n"), "\(run.status): \(run.stdout) \(run.stderr)")
        var result: CFTypeRef?
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "kept.example.com",
                                    kSecAttrAccount as String: "dave", kSecReturnData as String: true]
        let status = DataProtectionKeychainTests.withKeychain(vault.mountpoint) { SecItemCopyMatching(query as CFDictionary, &result) }
        #expect(status == errSecSuccess)
        #expect(result as? Data == Data("kept".utf8))
    }

    @Test("keyring and secretstorage, both session algorithms, and malformed calls that get errors")
    func pythonClients() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let run = Self.onBus(vault, environment: ["PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring"],
                             ["/usr/bin/python3", CommandRunner.scriptPath("secret-service-python.py")])
        #expect(run.succeeded && run.stdout.hasSuffix("ok\n"), "\(run.status): \(run.stdout) \(run.stderr)")
    }

    @Test("locked: whenUnlocked secrets are refused, afterFirstUnlock ones read; Unlock without an agent completes dismissed")
    func theClassesDecideWhatIsLocked() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        // No askpass program is configured and no agent of systemd-ask-password runs here: the
        // prompt must give up after its 2 s bound (the script waits 30 s at most).
        let run = Self.onBus(vault, options: ["--prompt-timeout", "2"],
                             ["/bin/bash", CommandRunner.scriptPath("secret-service-lock.sh"), TestVault.protfsctl, vault.mountpoint,
                              CommandRunner.scriptPath("secret-service-unlock-prompt.py")])
        #expect(run.succeeded && run.stdout.hasSuffix("ok\n"), "\(run.status): \(run.stdout) \(run.stderr)")
    }

    @Test("two users on two session buses never see each other's items")
    func usersAreSeparate() throws {
        let alice = try TestUser.named("pfss-alice"), bob = try TestUser.named("pfss-bob")
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        let script = CommandRunner.scriptPath("secret-service-two-users.sh")
        let stored = Self.onBus(vault, user: alice, ["/bin/bash", script, "store"])
        try #require(stored.succeeded && stored.stdout.hasSuffix("ok\n"), "\(stored.status): \(stored.stdout) \(stored.stderr)")
        let checked = Self.onBus(vault, user: bob, ["/bin/bash", script, "check"])
        #expect(checked.succeeded && checked.stdout.hasSuffix("ok\n"), "\(checked.status): \(checked.stdout) \(checked.stderr)")
        #expect(vault.item("list", [], as: bob.uid).stdout.isEmpty)
        #expect(vault.item("list", [], as: alice.uid).stdout.hasPrefix("private.example.com\talice\t"))
    }
}
