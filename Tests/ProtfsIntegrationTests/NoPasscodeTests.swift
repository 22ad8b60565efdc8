import Foundation
import Testing

/// docs/BACKUP.md's vaults without a passcode on real mounts: `init --no-passcode`, a mount
/// that starts `unlocked`, lock and unlock without a passcode, and `passwd` setting and
/// removing a passcode with the `whenPasscodeSetThisDeviceOnly` items it governs.
@Suite("Vaults without a passcode", .serialized)
struct NoPasscodeTests {
    static let contents = "the same bytes in every class"
    static let newPasscode = "a passcode set later"

    /// A vault made with `init --no-passcode`, not mounted.
    static func vaultWithoutPasscode() throws -> TestVault {
        let vault = try TestVault(initialize: false)
        let result = CommandRunner.run(TestVault.protfs, ["init", vault.backing, "--device-key", vault.deviceKey,
                                                          "--no-passcode", "--kdf", "interactive"])
        guard result.succeeded else { throw TestFailure("init --no-passcode failed (\(result.status)): \(result.stderr)") }
        #expect(result.stderr.contains("no passcode"), "\(result.stderr)")
        return vault
    }

    static func passcodeSet(_ vault: TestVault) throws -> Bool? {
        let result = vault.protfsctl(["status", vault.mountpoint, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return object?["passcodeSet"] as? Bool
    }

    /// Every class's file reads back whole.
    static func expectEveryClassReadable(_ vault: TestVault, sourceLocation: SourceLocation = #_sourceLocation) {
        for protectionClass in TestVault.classNames {
            let file = vault.path("\(TestVault.classDirectory(protectionClass))/f")
            #expect((try? String(contentsOfFile: file, encoding: .utf8)) == contents, "\(protectionClass)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("init --no-passcode mounts unlocked; lock wipes the keys; unlock needs no passcode; status says passcodeSet false")
    func mountsUnlockedAndUnlocksWithoutPasscode() throws {
        let vault = try Self.vaultWithoutPasscode()
        try vault.mount(passcode: false, options: ["grace=0"])
        defer { try? vault.unmount() }
        #expect(try vault.state() == .unlocked)
        #expect(try Self.passcodeSet(vault) == false)
        try vault.makeClassDirectories(holding: ["f": Self.contents])
        Self.expectEveryClassReadable(vault)

        try vault.lock(now: true)
        #expect(try vault.state() == .locked)
        #expect(vault.shell("cat \(TestVault.classDirectory("complete"))/f").status != 0, "complete readable while locked")
        let unlock = vault.protfsctl(["unlock", vault.mountpoint])
        #expect(unlock.succeeded, "\(unlock.stderr)")
        #expect(try vault.state() == .unlocked)
        Self.expectEveryClassReadable(vault)
        // The daemon refuses a passcode request on a vault that has none (usage, no counting).
        let passcodeRemoval = vault.protfsctl(["passwd", "--remove", "--yes", vault.mountpoint], stdin: "anything\n")
        #expect(passcodeRemoval.status == 2, "\(passcodeRemoval.stderr)")

        // A remount starts unlocked again, without being given anything.
        try vault.unmount()
        try vault.mount(passcode: false)
        #expect(try vault.state() == .unlocked)
        Self.expectEveryClassReadable(vault)
    }

    @Test("passwd sets a passcode, passwd --remove removes it (confirmed) and deletes the whenPasscodeSetThisDeviceOnly items only")
    func passcodeSetAndRemovedRoundTrip() throws {
        let vault = try Self.vaultWithoutPasscode()
        try vault.mount(passcode: false, options: ["grace=0"])
        defer { try? vault.unmount() }
        try vault.makeClassDirectories(holding: ["f": Self.contents])
        let bound = ["--service", "s", "--account", "bound", "--accessible", "whenPasscodeSetThisDeviceOnly"]
        let refused = vault.item("add", bound, stdin: "needs a passcode")
        #expect(refused.status == 5 && refused.stderr.contains("passcode"), "\(refused.stderr)")
        try #require(vault.item("add", ["--service", "s", "--account", "kept"], stdin: "kept secret").succeeded)

        // Set: only the new passcode is read.
        let set = vault.protfsctl(["passwd", vault.mountpoint], stdin: Self.newPasscode + "\n")
        #expect(set.succeeded, "\(set.stderr)")
        #expect(try Self.passcodeSet(vault) == true)
        Self.expectEveryClassReadable(vault)
        try #require(vault.item("add", bound, stdin: "bound secret").succeeded)
        try #require(vault.item("add", ["--service", "s", "--account", "device", "--accessible", "whenUnlockedThisDeviceOnly"],
                                stdin: "device secret").succeeded)

        // Lock and unlock with it; a wrong one counts as before (exit 3).
        try vault.lock(now: true)
        #expect(vault.protfsctl(["unlock", vault.mountpoint], stdin: "wrong\n").status == 3)
        #expect(vault.protfsctl(["unlock", vault.mountpoint], stdin: Self.newPasscode + "\n").succeeded)
        Self.expectEveryClassReadable(vault)
        // And after a remount, which now starts before the first unlock.
        try vault.unmount()
        try vault.mount(passcode: false, options: ["grace=0"])
        #expect(try vault.state() == .beforeFirstUnlock)
        #expect(vault.protfsctl(["unlock", vault.mountpoint], stdin: Self.newPasscode + "\n").succeeded)
        Self.expectEveryClassReadable(vault)
        #expect(vault.item("get", ["--service", "s", "--account", "bound"]).stdout == "bound secret")

        // Remove: refused without a terminal and without --yes, and with a wrong passcode.
        let unconfirmed = vault.protfsctl(["passwd", "--remove", vault.mountpoint], stdin: Self.newPasscode + "\n")
        #expect(unconfirmed.status == 2 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed.stderr)")
        #expect(vault.protfsctl(["passwd", "--remove", "--yes", vault.mountpoint], stdin: "wrong\n").status == 3)
        #expect(try Self.passcodeSet(vault) == true)
        #expect(vault.item("get", ["--service", "s", "--account", "bound"]).succeeded)
        let removed = vault.protfsctl(["passwd", "--remove", "--yes", vault.mountpoint], stdin: Self.newPasscode + "\n")
        #expect(removed.succeeded, "\(removed.stderr)")
        #expect(try Self.passcodeSet(vault) == false)
        Self.expectEveryClassReadable(vault)
        #expect(vault.item("get", ["--service", "s", "--account", "bound"]).status == 6)
        #expect(vault.item("get", ["--service", "s", "--account", "kept"]).stdout == "kept secret")
        #expect(vault.item("get", ["--service", "s", "--account", "device"]).stdout == "device secret")
        #expect(vault.item("add", bound, stdin: "again").status == 5)

        try vault.unmount()
        try vault.mount(passcode: false)
        #expect(try vault.state() == .unlocked)
        Self.expectEveryClassReadable(vault)
        #expect(vault.item("list", []).stdout.contains("kept") && !vault.item("list", []).stdout.contains("bound"))
    }
}
