import Foundation
import Testing

/// Interrupted jobs (docs/BACKUP.md, "An interrupted restore"): what a restore stopped
/// halfway (Ctrl-C, a crash) leaves is marked `protfs.restoring`; it is no vault, and the
/// rerun of the same archive clears it and finishes. A backup stopped halfway leaves no file.
@Suite("interrupted jobs", .serialized)
struct InterruptedJobTests {
    @Test("Ctrl-C during a backup leaves no file behind, and the rerun makes the archive")
    func interruptedBackup() throws {
        let vault = try TestVault()
        try vault.mount()
        let large = vault.path("large")
        let made = CommandRunner.shell("head -c 200000000 /dev/zero > '\(large)'", timeout: 120)
        try #require(made.succeeded, "\(made.stderr)")
        try vault.unmount()
        let passphrase = vault.root.path + "/passphrase", archives = vault.root.path + "/archives"
        try "a backup passphrase\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: archives, withIntermediateDirectories: true)
        let arguments = ["backup", vault.backing, archives + "/vault.backup", "--device-key", vault.deviceKey,
                         "--passcode-file", vault.passcodeFile, "--backup-passphrase-file", passphrase]
        // Stopped as soon as it reports its first progress: it is writing the archive.
        let stopped = CommandRunner.script("backup/interrupt-at-progress.sh", [TestVault.protfs] + arguments + ["--json"], timeout: 120)
        #expect(stopped.stdout.contains("interrupted"), "\(stopped.stdout)\(stopped.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: archives) == [], "debris left")
        let rerun = CommandRunner.run(TestVault.protfs, arguments, timeout: 120)
        #expect(rerun.succeeded, "\(rerun.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: archives) == ["vault.backup"])
    }

    @Test("Ctrl-C during class set -R: the rerun finishes, every object in the class")
    func interruptedReclass() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        // 20 directories of 50 files: 1,020 objects, the tree itself included.
        let tree = vault.path("t")
        let made = CommandRunner.shell("mkdir '\(tree)' && cd '\(tree)' && for d in $(seq 20); do mkdir d$d; "
                                       + "for f in $(seq 50); do : > d$d/f$f; done; done", timeout: 300)
        try #require(made.succeeded, "\(made.stderr)")
        let arguments = ["class", "set", "-R", "complete", tree]
        let stopped = CommandRunner.script("backup/interrupt-at-progress.sh", [TestVault.protfsctl] + arguments + ["--json"], timeout: 300)
        #expect(stopped.succeeded, "\(stopped.stderr)")
        let rerun = vault.protfsctl(arguments, timeout: 300)
        #expect(rerun.succeeded && rerun.stderr.isEmpty, "\(rerun.stderr)")
        let classes = CommandRunner.shell("cd '\(tree)' && find . -mindepth 1 | sed 's|^|\(tree)/|' "
                                          + "| xargs -d '\\n' '\(TestVault.protfsctl)' class get | cut -f1 | sort | uniq -c",
                                          timeout: 300)
        #expect(classes.succeeded && classes.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1020 complete",
                "\(classes.stdout)\(classes.stderr)")
    }

    @Test("Ctrl-C during fsck --repair: the rerun repairs what is left, then the vault is clean")
    func interruptedRepair() throws {
        let vault = try TestVault()
        let fsck = FsckTests()
        try fsck.populate(vault)
        let tamper = CommandRunner.script("fsck/flip-byte-of-sized-file.sh", [vault.backing, String(FsckTests.damagedBackingSize)])
        try #require(tamper.succeeded, "\(tamper.stdout)\(tamper.stderr)")
        let arguments = ["fsck", vault.backing, "--device-key", vault.deviceKey, "--passcode-file", vault.passcodeFile, "--repair"]
        let stopped = CommandRunner.script("backup/interrupt-at-progress.sh", [TestVault.protfs] + arguments + ["--json"], timeout: 120)
        #expect(stopped.succeeded, "\(stopped.stderr)")
        let rerun = CommandRunner.run(TestVault.protfs, arguments, timeout: 120)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        fsck.expectFsck(vault, status: 0, saying: "0 damaged")
        try vault.mount()
        defer { try? vault.unmount() }
        let check = CommandRunner.script("fsck/fsck-repaired-tree.sh", [vault.mountpoint])
        #expect(check.succeeded, "\(check.stdout)\(check.stderr)")
    }

    @Test("a restore that did not end: refused as a vault, cleared and finished by the rerun; another archive is refused")
    func interruptedRestore() throws {
        let (vault, archive, passphraseFile) = try BackupTests.backedUpVault()
        let keys = URL(fileURLWithPath: vault.deviceKey).deletingLastPathComponent().path
        let state = try #require(try FileManager.default.contentsOfDirectory(atPath: keys + "/vaults").first { $0.hasSuffix(".state") })
        let vaultID = stride(from: 0, to: 32, by: 2).map { UInt8(state.dropFirst($0).prefix(2), radix: 16)! }

        // What an interrupted restore of this archive left: its mark and some of the tree.
        let target = try TestVault(initialize: false)
        try (BackupTests.otherPasscode + "\n").write(toFile: target.passcodeFile, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: target.backing + "/half-made", withIntermediateDirectories: true)
        try Data("partial".utf8).write(to: URL(fileURLWithPath: target.backing + "/half-made/file"))
        try Data(vaultID).write(to: URL(fileURLWithPath: target.backing + "/protfs.restoring"))

        #expect(throws: TestFailure.self) { try target.mount() }
        #expect(target.daemonOutput.contains("holds a restore that did not end"), "\(target.daemonOutput)")
        try? target.unmount()

        let rerun = BackupTests.restore(archive, into: target.backing, deviceKey: target.deviceKey, passcodeFile: target.passcodeFile,
                                        passphraseFile: passphraseFile)
        #expect(rerun.succeeded, "\(rerun.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target.backing + "/protfs.restoring"))
        #expect(!FileManager.default.fileExists(atPath: target.backing + "/half-made"))
        try target.mount()
        defer { try? target.unmount() }
        let listing = try FileManager.default.contentsOfDirectory(atPath: target.mountpoint)
        #expect(!listing.isEmpty && !listing.contains("half-made"), "\(listing)")
        BackupTests.expectMigratableItemsOnly(in: target)

        // A mark of another archive's restore: this archive does not clear it.
        let other = try TestVault(initialize: false)
        try FileManager.default.createDirectory(atPath: other.backing, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 16).write(to: URL(fileURLWithPath: other.backing + "/protfs.restoring"))
        let refused = BackupTests.restore(archive, into: other.backing, deviceKey: other.deviceKey, passcodeFile: target.passcodeFile,
                                          passphraseFile: passphraseFile)
        #expect(!refused.succeeded && refused.stderr.contains("interrupted restore of another archive"), "\(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: other.backing + "/protfs.restoring"))
    }
}
