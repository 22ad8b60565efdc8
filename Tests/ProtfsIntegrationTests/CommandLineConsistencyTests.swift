import Foundation
import Testing

/// One command line (docs/OPERATIONS.md): `mount` takes the option names every other command
/// takes, a path inside a vault names its vault, and `protfs passwd` changes the passcode
/// of an unmounted vault.
@Suite("one command line")
struct CommandLineConsistencyTests {
    @Test("protfs mount --device-key --passcode-file mounts unlocked; with the same -o option too it is refused")
    func mountTakesTheOtherCommandsNames() throws {
        let vault = try TestVault()
        let mount = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint,
                                                         "--device-key", vault.deviceKey, "--passcode-file", vault.passcodeFile])
        defer { try? vault.unmount() }
        #expect(mount.succeeded, "\(mount.stderr)")
        #expect(vault.protfsctl(["status", "--json", vault.mountpoint]).stdout.contains("\"state\":\"unlocked\""))
        try vault.unmount()
        let twice = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "--device-key", vault.deviceKey,
                                                         "-o", "device_key=\(vault.deviceKey)"])
        #expect(twice.status == 2 && twice.stderr.contains("--device-key and -o device_key= exclude each other"), "\(twice.stderr)")
    }

    @Test("protfsctl status, lock and unlock of a path inside a vault act on that vault")
    func pathInsideNamesItsVault() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try FileManager.default.createDirectory(atPath: vault.path("a/b"), withIntermediateDirectories: true)
        let status = vault.protfsctl(["status", "--json", vault.path("a/b")])
        #expect(status.succeeded && status.stdout.contains("\"mountpoint\":\"\(vault.mountpoint)\""), "\(status.stdout)\(status.stderr)")
        #expect(vault.protfsctl(["lock", "--now", vault.path("a")]).succeeded)
        #expect(vault.protfsctl(["status", "--json", vault.mountpoint]).stdout.contains("\"state\":\"locked\""))
        let unlock = vault.protfsctl(["unlock", vault.path("a"), "--passcode-file", vault.passcodeFile])
        #expect(unlock.succeeded, "\(unlock.stderr)")
        let outside = vault.protfsctl(["status", vault.root.path])
        #expect(outside.status == 6, "\(outside.status): \(outside.stderr)")
    }

    @Test("protfs passwd changes an unmounted vault's passcode; a mounted vault is refused")
    func passwdUnmounted() throws {
        let vault = try TestVault()
        let arguments = ["passwd", vault.backing, "--device-key", vault.deviceKey]
        let changed = CommandRunner.run(TestVault.protfs, arguments, stdin: TestVault.passcode + "\nthe new passcode\n")
        #expect(changed.succeeded && changed.stderr.contains("was changed"), "\(changed.stderr)")
        // The old passcode no longer opens it; the new one does.
        let wrong = CommandRunner.run(TestVault.protfs, arguments, stdin: TestVault.passcode + "\nanother\n")
        #expect(wrong.status == 3, "\(wrong.status): \(wrong.stderr)")
        try "the new passcode\n".write(toFile: vault.passcodeFile, atomically: true, encoding: .utf8)
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.protfsctl(["status", "--json", vault.mountpoint]).stdout.contains("\"state\":\"unlocked\""))
        let mounted = CommandRunner.run(TestVault.protfs, arguments, stdin: "the new passcode\nyet another\n")
        #expect(!mounted.succeeded && mounted.stderr.contains("in use by another protfs process"), "\(mounted.stderr)")
    }
}
