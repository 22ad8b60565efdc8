import DataProtection
import Foundation
import Testing

/// The Secret Service provider (docs/SECRETS.md) on private session buses (dbus-run-session),
/// driven by the clients programs use: secret-tool (libsecret), Python's keyring and
/// secretstorage, python3-dbus for plain sessions and malformed calls. Every run checks that
/// the bus name's owner is the provider's own process (secret-service-bus.sh).
@Suite("Secret Service", .serialized)
struct SecretServiceTests {
    /// Runs `client` on a private bus beside `protfsctl secret-service MOUNTPOINT options`
    /// (without MOUNTPOINT when `vault` is nil), as `user` when given.
    static func onBus(_ vault: TestVault?, options: [String] = [], user: TestUser? = nil, environment: [String: String] = [:],
                      _ client: [String], timeout: TimeInterval = 120) -> CommandResult {
        let arguments = ["dbus-run-session", "--", "/bin/bash", CommandRunner.scriptPath("secret-service/secret-service-bus.sh"),
                         TestVault.protfsctl, vault?.mountpoint ?? ""] + options + ["--"] + client
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
        let run = Self.onBus(vault, ["/bin/bash", CommandRunner.scriptPath("secret-service/secret-service-secret-tool.sh"), TestVault.protfsctl,
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
                             ["/usr/bin/python3", CommandRunner.scriptPath("secret-service/secret-service-python.py")])
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
                             ["/bin/bash", CommandRunner.scriptPath("secret-service/secret-service-lock.sh"), TestVault.protfsctl, vault.mountpoint,
                              CommandRunner.scriptPath("secret-service/secret-service-unlock-prompt.py")])
        #expect(run.succeeded && run.stdout.hasSuffix("ok\n"), "\(run.status): \(run.stdout) \(run.stderr)")
    }

    @Test("one control request per call, Locked as the daemon says across a lock, and a kept connection across a remount")
    func oneRequestPerCallAndTheDaemonsLocks() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let run = Self.onBus(vault, ["/bin/bash", CommandRunner.scriptPath("secret-service/secret-service-round-trips.sh"), TestVault.protfsctl,
                                     TestVault.protfs, vault.mountpoint, vault.backing, vault.deviceKey, vault.passcodeFile])
        #expect(run.succeeded && run.stdout.hasSuffix("ok\n"), "\(run.status): \(run.stdout) \(run.stderr)")
    }

    @Test("10,000 items: searches by one attribute, by two and by none find exactly the right ones")
    func tenThousandItemsStaySearchable() throws {
        // On tmpfs: each add syncs its record and its directory, and 20,000 syncs on a busy
        // disk are the disk's time, not the search's this test is about.
        let vault = try TestVault(in: "/dev/shm")
        try vault.mount()
        defer { try? vault.unmount() }
        // A generous bound for a busy machine.
        let run = Self.onBus(vault, ["/usr/bin/python3", CommandRunner.scriptPath("secret-service/secret-service-scale.py"), "10000"], timeout: 1500)
        #expect(run.succeeded && run.stdout.hasSuffix("ok\n"), "\(run.status): \(run.stdout) \(run.stderr)")
        #expect(vault.item("list", []).stdout.split(separator: "\n").count == 10_000)
    }

    @Test("two users on two session buses never see each other's items")
    func usersAreSeparate() throws {
        let alice = try TestUser.named("pfss-alice"), bob = try TestUser.named("pfss-bob")
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        let script = CommandRunner.scriptPath("secret-service/secret-service-two-users.sh")
        let stored = Self.onBus(vault, user: alice, ["/bin/bash", script, "store"])
        try #require(stored.succeeded && stored.stdout.hasSuffix("ok\n"), "\(stored.status): \(stored.stdout) \(stored.stderr)")
        let checked = Self.onBus(vault, user: bob, ["/bin/bash", script, "check"])
        #expect(checked.succeeded && checked.stdout.hasSuffix("ok\n"), "\(checked.status): \(checked.stdout) \(checked.stderr)")
        #expect(vault.item("list", [], as: bob.uid).stdout.isEmpty)
        #expect(vault.item("list", [], as: alice.uid).stdout.hasPrefix("private.example.com\talice\t"))
    }

    /// The review's finding: with one protfs mount, alice's, bob's secret-tool stored bob's
    /// secrets there by default. Without a named vault, each user's own is taken, or none.
    @Test("unnamed, the vault is the caller's own: bob's secret-tool is refused alice's vault, alice's uses it")
    func theDefaultVaultIsTheCallersOwn() throws {
        let alice = try TestUser.named("pfss-owner"), bob = try TestUser.named("pfss-guest")
        let vault = try TestVault()
        try vault.mount(options: ["owner=\(alice.name)", "allow_other"])
        defer { try? vault.unmount() }
        let script = CommandRunner.scriptPath("secret-service/secret-service-two-users.sh")
        let refused = Self.onBus(nil, user: bob, ["/bin/bash", script, "unowned"])
        #expect(refused.succeeded && refused.stdout.hasSuffix("ok\n"), "\(refused.status): \(refused.stdout) \(refused.stderr)")
        #expect(vault.item("list", [], as: bob.uid).stdout.isEmpty)
        let stored = Self.onBus(nil, user: alice, ["/bin/bash", script, "store"])
        #expect(stored.succeeded && stored.stdout.hasSuffix("ok\n"), "\(stored.status): \(stored.stdout) \(stored.stderr)")
        #expect(vault.item("list", [], as: alice.uid).stdout.hasPrefix("private.example.com\talice\t"))
    }

    /// The review's finding: 200 runs of one prompt started 201 agent processes.
    @Test("a prompt runs once: 200 runs of it start one agent, and it completes unlocked once")
    func aPromptRunsOnce() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let scratch = vault.root.appendingPathComponent("prompt").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: vault.passcodeFile, toPath: scratch + "/passcode")
        let run = Self.onBus(vault, options: ["--askpass", CommandRunner.scriptPath("secret-service/counting-askpass.sh"), "--prompt-timeout", "60"],
                             environment: ["PROMPT_SCRATCH": scratch],
                             ["/bin/bash", CommandRunner.scriptPath("secret-service/secret-service-repeated-prompt.sh"), TestVault.protfsctl,
                              vault.mountpoint, CommandRunner.scriptPath("secret-service/secret-service-repeated-prompt.py")])
        #expect(run.succeeded && run.stdout.hasSuffix("ok\n"), "\(run.status): \(run.stdout) \(run.stderr)")
    }

    /// The review's finding: any client could stop the provider with a NameLost of its own.
    @Test("a NameLost forged by another client, to the provider or to all, does not stop it")
    func forgedNameLostIsIgnored() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let run = Self.onBus(vault, ["/usr/bin/python3", CommandRunner.scriptPath("secret-service/secret-service-forged-namelost.py")])
        #expect(run.succeeded && run.stdout.hasSuffix("ok\n"), "\(run.status): \(run.stdout) \(run.stderr)")
    }
}
