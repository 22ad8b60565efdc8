import Foundation
import Testing

/// docs/BACKUP.md's backups of an unmounted vault on real mounts: `protfs backup`, `backup
/// --verify` and `protfs restore` under another device key and passcode, compared entry by
/// entry with every attribute; nothing in the archive in the clear; a damaged archive or a
/// wrong passphrase leaves nothing behind.
@Suite("Backups", .serialized)
struct BackupTests {
    static let marker = "plaintext-marker-7f3a9c"
    static let otherPasscode = "another passcode for the restored vault"
    static let accessibilities = ["whenUnlocked", "afterFirstUnlock", "always", "whenPasscodeSetThisDeviceOnly",
                                  "whenUnlockedThisDeviceOnly", "afterFirstUnlockThisDeviceOnly", "alwaysThisDeviceOnly"]

    /// A vault holding the backup tree and an item of every accessibility, unmounted, and its
    /// archive under `passphraseFile`.
    static func backedUpVault() throws -> (TestVault, archive: String, passphraseFile: String) {
        let vault = try TestVault()
        try vault.mount()
        vault.checkScript("backup/make-backup-tree.sh", [marker])
        for accessible in accessibilities {
            let added = vault.item("add", ["--service", "backup", "--account", accessible, "--accessible", accessible],
                                   stdin: "\(marker) secret \(accessible)")
            try #require(added.succeeded, "\(added.stderr)")
        }
        try vault.unmount()
        let passphraseFile = vault.root.path + "/backup-passphrase"
        try "a backup passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        let archive = vault.root.path + "/vault.protfsbackup"
        let backup = CommandRunner.run(TestVault.protfs, ["backup", vault.backing, archive, "--device-key", vault.deviceKey,
                                                          "--passcode-file", vault.passcodeFile,
                                                          "--backup-passphrase-file", passphraseFile])
        try #require(backup.succeeded, "\(backup.stderr)")
        #expect(backup.stdout.contains("4 ThisDeviceOnly items left out"), "\(backup.stdout)")
        #expect(!backup.stderr.contains("objects"), "progress without a terminal: \(backup.stderr)")
        return (vault, archive, passphraseFile)
    }

    static func restore(_ archive: String, into backing: String, deviceKey: String, passcodeFile: String,
                        passphraseFile: String) -> CommandResult {
        CommandRunner.run(TestVault.protfs, ["restore", archive, backing, "--device-key", deviceKey,
                                             "--passcode-file", passcodeFile, "--backup-passphrase-file", passphraseFile])
    }

    /// A new vault restored from `archive` under another device key and passcode, mounted.
    static func restoredElsewhere(_ archive: String, passphraseFile: String) throws -> TestVault {
        let restored = try TestVault(initialize: false)
        try (otherPasscode + "\n").write(toFile: restored.passcodeFile, atomically: true, encoding: .utf8)
        let result = restore(archive, into: restored.backing, deviceKey: restored.deviceKey,
                             passcodeFile: restored.passcodeFile, passphraseFile: passphraseFile)
        try #require(result.succeeded, "\(result.stderr)")
        try restored.mount()
        return restored
    }

    /// The migratable items came back with their secrets; the `...ThisDeviceOnly` ones did not.
    static func expectMigratableItemsOnly(in restored: TestVault) {
        for accessible in accessibilities {
            let got = restored.item("get", ["--service", "backup", "--account", accessible])
            if accessible.hasSuffix("ThisDeviceOnly") {
                #expect(got.status == 6, "\(accessible): \(got.stderr)")
            } else {
                #expect(got.stdout == "\(marker) secret \(accessible)", "\(accessible): \(got.stderr)")
            }
        }
    }

    @Test("a restore under another device key and passcode is identical, with the migratable items only; no plaintext in the archive")
    func roundTripUnderAnotherDevice() throws {
        let (vault, archive, passphraseFile) = try Self.backedUpVault()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        for secret in [Self.marker, TestVault.passcode, "a backup passphrase", "start "] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in the archive")
        }
        let verified = CommandRunner.run(TestVault.protfs, ["backup", "--verify", archive, "--device-key", vault.deviceKey,
                                                            "--backup-passphrase-file", passphraseFile])
        #expect(verified.succeeded && verified.stdout.contains("intact"), "\(verified.stderr)")
        // On a terminal (script(1) gives it one) the backup shows its progress.
        let onTerminal = CommandRunner.run("/usr/bin/script", ["-qec", [TestVault.protfs, "backup", vault.backing, archive + ".2",
                                                                        "--device-key", vault.deviceKey, "--passcode-file",
                                                                        vault.passcodeFile, "--backup-passphrase-file",
                                                                        passphraseFile].joined(separator: " "), "/dev/null"])
        #expect(onTerminal.succeeded && onTerminal.stdout.contains("objects, "), "\(onTerminal.stdout)\(onTerminal.stderr)")
        // docs/BACKUP.md alone is enough to read the archive: an independent reader agrees.
        let independent = CommandRunner.script("backup/read-archive.py", [archive, passphraseFile])
        #expect(independent.succeeded, "\(independent.stderr)")
        let count = independent.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(count.hasSuffix(" entries") && verified.stdout.contains("(\(count.dropLast(8)) objects)"),
                "\(count) / \(verified.stdout)")
        #expect(independent.stdout.contains("f protfs.items/") && !independent.stdout.contains("protfs.keybag"))

        let restored = try Self.restoredElsewhere(archive, passphraseFile: passphraseFile)
        defer { try? restored.unmount() }
        try vault.mount()
        defer { try? vault.unmount() }
        let compared = CommandRunner.script("backup/compare-trees.py", [vault.mountpoint, restored.mountpoint])
        #expect(compared.succeeded, "\(compared.stdout)\(compared.stderr)")
        #expect(restored.protectionClass(of: "c-complete/file") == "complete")
        // A 64 MiB file with two chunks of data stays sparse.
        let sparse = try FileManager.default.attributesOfItem(atPath: restored.path("sparse"))
        #expect((sparse[.size] as? Int) == 64 << 20 + 4)
        #expect(CommandRunner.shell("test $(stat -c %b '\(restored.path("sparse"))') -lt 1024").succeeded)

        Self.expectMigratableItemsOnly(in: restored)
        // The restored vault locks, and opens with its own passcode only.
        try restored.lock(now: true)
        #expect(restored.protfsctl(["unlock", restored.mountpoint], stdin: TestVault.passcode + "\n").status == 3)
        try restored.unlock()
        #expect(try String(contentsOfFile: restored.path("c-complete/file"), encoding: .utf8).contains(Self.marker))
    }

    @Test("wrong backup passphrases are delayed like wrong passcodes, per archive, beside the device key")
    func wrongPassphrasesAreRateLimited() throws {
        let (vault, archive, passphraseFile) = try Self.backedUpVault()
        let wrong = vault.root.path + "/wrong-passphrase"
        try "not it\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        func verify(_ passphrase: String) -> CommandResult {
            CommandRunner.run(TestVault.protfs, ["backup", "--verify", archive, "--device-key", vault.deviceKey,
                                                 "--backup-passphrase-file", passphrase],
                              environment: ["PROTFS_TEST_DELAY_SCALE": "0.02"])
        }
        for attempt in 1...5 { #expect(verify(wrong).status == 3, "attempt \(attempt)") }
        // The fifth failure starts a delay (60 s, scaled to 1.2 s): right or wrong, refused.
        let refused = verify(passphraseFile)
        #expect(refused.status == 4 && refused.stderr.contains("retry in"), "\(refused.stderr)")
        let restore = Self.restore(archive, into: vault.root.path + "/restored", deviceKey: vault.deviceKey,
                                   passcodeFile: vault.passcodeFile, passphraseFile: passphraseFile)
        #expect(restore.status == 4 && !FileManager.default.fileExists(atPath: vault.root.path + "/restored"))
        usleep(1_500_000)
        #expect(verify(passphraseFile).succeeded)
    }

    @Test("a flipped byte anywhere, a cut archive or a wrong passphrase: refused with the documented code, nothing left behind")
    func damageLeavesNothing() throws {
        let (vault, archive, passphraseFile) = try Self.backedUpVault()
        let original = try Data(contentsOf: URL(fileURLWithPath: archive))
        let chunk = 65536 + 40, header = 92
        try #require(original.count > header + 2 * chunk, "the archive has \(original.count) bytes")
        var damaged: [(String, Data, Set<Int32>)] = []
        for offset in [3, 20, 50, 70, header + 5, header + chunk + 100, original.count / 2, original.count - 1] {
            var copy = original
            copy[offset] ^= 0x40
            // The header's fields or its passphrase check changed: a wrong passphrase to the reader.
            damaged.append(("byte \(offset) flipped", copy, offset < header ? [3, 8] : [8]))
        }
        damaged.append(("cut by 7 bytes", original.prefix(original.count - 7), [8]))
        damaged.append(("cut after a chunk", original.prefix(header + chunk), [8]))
        damaged.append(("chunks swapped", original.prefix(header) + original[(header + chunk)..<(header + 2 * chunk)]
                            + original[header..<(header + chunk)] + original[(header + 2 * chunk)...], [8]))
        damaged.append(("intact, wrong passphrase", original, [3]))
        let wrongPassphrase = vault.root.path + "/wrong-passphrase"
        try "not the backup passphrase\n".write(toFile: wrongPassphrase, atomically: true, encoding: .utf8)
        for (index, (what, data, codes)) in damaged.enumerated() {
            let path = vault.root.path + "/damaged-\(index)"
            try data.write(to: URL(fileURLWithPath: path))
            let backing = vault.root.path + "/restored-\(index)", deviceKey = vault.root.path + "/keys-\(index)/device.key"
            let passphrase = what.contains("wrong passphrase") ? wrongPassphrase : passphraseFile
            let result = Self.restore(path, into: backing, deviceKey: deviceKey, passcodeFile: vault.passcodeFile,
                                      passphraseFile: passphrase)
            #expect(codes.contains(result.status), "\(what): exit \(result.status): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: backing), "\(what): \(backing) left behind")
            #expect(!FileManager.default.fileExists(atPath: deviceKey), "\(what): a device key left behind")
            let verify = CommandRunner.run(TestVault.protfs, ["backup", "--verify", path, "--device-key", deviceKey,
                                                              "--backup-passphrase-file", passphrase])
            #expect(codes.contains(verify.status), "\(what): verify exit \(verify.status): \(verify.stderr)")
        }
        // A crafted archive (with its passphrase) whose hard link names its first file through
        // a symlink to /etc: refused, nothing linked in, nothing left.
        let crafted = vault.root.path + "/crafted"
        let made = CommandRunner.script("backup/craft-archive.py", [crafted, passphraseFile])
        try #require(made.succeeded, "\(made.stderr)")
        let outside = vault.root.path + "/restored-crafted"
        let refused = Self.restore(crafted, into: outside, deviceKey: vault.deviceKey, passcodeFile: vault.passcodeFile,
                                   passphraseFile: passphraseFile)
        #expect(!refused.succeeded, "\(refused.stdout)")
        #expect(!FileManager.default.fileExists(atPath: outside), "\(outside) left behind")

        // Into an existing empty directory: emptied again, the directory kept.
        let empty = vault.root.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        var cut = original
        cut.removeLast(7)
        try cut.write(to: URL(fileURLWithPath: vault.root.path + "/cut"))
        let result = Self.restore(vault.root.path + "/cut", into: empty, deviceKey: vault.deviceKey,
                                  passcodeFile: vault.passcodeFile, passphraseFile: passphraseFile)
        #expect(result.status == 8, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        #expect(CommandRunner.run("/usr/bin/getfattr", ["-d", empty]).stdout.isEmpty)
    }
}
