import Foundation
import Glibc
import Testing

/// Issue 38: a vault's owner read other users' items through a backup. Root mounts alice's
/// vault (`-o owner=`), bob keeps an item in it; alice may back the vault up, and did get
/// bob's item into her archive; restored under a passcode of hers, where she is root (a user
/// namespace), `item get --uid` served it. Her backup now carries only her items.
@Suite("Backups by a vault's owner", .serialized, .enabled(if: geteuid() == 0, "accounts and mounts for others need root"))
struct BackupOwnerTests {
    @Test("a backup by the vault's owner leaves other users' items out: restored under a new passcode, bob's item is not there")
    func theOwnersBackupCarriesOnlyTheirItems() throws {
        let alice = try TestUser.named("protfs-alice"), bob = try TestUser.named("protfs-bob")
        let vault = try TestVault()
        try vault.mount(options: ["owner=\(alice.name)", "grace=600"])
        defer { try? vault.unmount() }
        try #require(vault.item("add", ["--service", "mail", "--account", "alice"], as: alice.uid, stdin: "alice's secret").succeeded)
        try #require(vault.item("add", ["--service", "bank", "--account", "bob"], as: bob.uid, stdin: "bob's secret").succeeded)

        // alice's own files: the passcode (hers, as the owner), the passphrase, the archive.
        let place = vault.root.path + "/alice"
        try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: false)
        let passphraseFile = place + "/passphrase", passcodeFile = place + "/passcode", archive = place + "/vault.protfsbackup"
        try "alice's backup passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        try (TestVault.passcode + "\n").write(toFile: passcodeFile, atomically: true, encoding: .utf8)
        for path in [place, passphraseFile, passcodeFile] { #expect(chown(path, alice.uid, alice.gid) == 0) }
        let backup = CommandRunner.run("/usr/bin/setpriv", ["--reuid=\(alice.uid)", "--regid=\(alice.gid)", "--clear-groups",
                                                            TestVault.protfs, "backup", vault.backing, archive,
                                                            "--passcode-file", passcodeFile, "--backup-passphrase-file",
                                                            passphraseFile], timeout: 120)
        try #require(backup.succeeded, "\(backup.stderr)\n\(vault.daemonOutput)")
        #expect(backup.stdout.contains("(1 item of another user left out)"), "\(backup.stdout)")

        let restored = try BackupTests.restoredElsewhere(archive, passphraseFile: passphraseFile)
        defer { try? restored.unmount() }
        let stolen = restored.item("get", ["--service", "bank", "--account", "bob", "--uid", String(bob.uid)])
        #expect(stolen.status == 6 && !stolen.stdout.contains("bob's secret"), "\(stolen.stdout)\(stolen.stderr)")
        #expect(restored.item("list", ["--uid", String(bob.uid)]).stdout.isEmpty)
        #expect(restored.item("get", ["--service", "mail", "--account", "alice", "--uid", String(alice.uid)]).stdout
                == "alice's secret")
    }

    @Test("root's backup of the same vault carries every user's items")
    func rootsBackupCarriesEveryone() throws {
        let bob = try TestUser.named("protfs-bob")
        let vault = try TestVault()
        try vault.mount(options: ["grace=600"])
        defer { try? vault.unmount() }
        try #require(vault.item("add", ["--service", "bank", "--account", "bob"], as: bob.uid, stdin: "bob's secret").succeeded)
        let passphraseFile = vault.root.path + "/passphrase", archive = vault.root.path + "/vault.protfsbackup"
        try "a backup passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        let backup = CommandRunner.run(TestVault.protfs, ["backup", vault.backing, archive, "--passcode-file", vault.passcodeFile,
                                                          "--backup-passphrase-file", passphraseFile], timeout: 120)
        try #require(backup.succeeded, "\(backup.stderr)")
        #expect(!backup.stdout.contains("left out"), "\(backup.stdout)")
        let restored = try BackupTests.restoredElsewhere(archive, passphraseFile: passphraseFile)
        defer { try? restored.unmount() }
        #expect(restored.item("get", ["--service", "bank", "--account", "bob", "--uid", String(bob.uid)]).stdout == "bob's secret")
    }
}
