import Foundation
import Testing

/// The device key's backup is one directory (README, docs/FORMAT.md): the key and the
/// `vaults/` records beside it, copied with `cp -a`, open the vault from wherever they are
/// put; the key alone is refused with a message that says what to do.
@Suite("the device key's backup")
struct KeyBackupTests {
    @Test("cp -a of the key's directory opens the vault elsewhere; the key without its records is refused, saying why")
    func oneDirectory() throws {
        let vault = try TestVault()
        let keys = URL(fileURLWithPath: vault.deviceKey).deletingLastPathComponent().path
        let copy = vault.root.path + "/restored-keys", bare = vault.root.path + "/bare-key"
        let copied = CommandRunner.run("cp", ["-a", keys, copy])
        try #require(copied.succeeded, "\(copied.stderr)")
        try FileManager.default.createDirectory(atPath: bare, withIntermediateDirectories: false)
        try #require(CommandRunner.run("cp", ["-a", vault.deviceKey, bare + "/device.key"]).succeeded)

        let mounted = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "--device-key", copy + "/device.key",
                                                           "--passcode-file", vault.passcodeFile])
        defer { try? vault.unmount() }
        #expect(mounted.succeeded, "\(mounted.stderr)")
        #expect(vault.protfsctl(["status", "--json", vault.mountpoint]).stdout.contains("\"state\":\"unlocked\""))
        try vault.unmount()

        let refused = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "--device-key", bare + "/device.key",
                                                           "--passcode-file", vault.passcodeFile])
        #expect(!refused.succeeded && refused.stderr.contains("moved without it") && refused.stderr.contains("fsck --repair"),
                "\(refused.stderr)")
    }
}
