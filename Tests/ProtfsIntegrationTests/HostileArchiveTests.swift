import Foundation
import Glibc
import Testing

/// An archive's passphrase is its author's, so its author chose every entry (docs/BACKUP.md,
/// "What a restore trusts"). An archive made with protfs' own `backup` from a backing
/// directory its owner (a real account) planted: a restore run as root makes no set-id file,
/// no device node, nothing but well-formed records in the daemon's folders, all of those and
/// the backing root its own; `backup --verify` reports each of these.
@Suite("Hostile archives", .serialized)
struct HostileArchiveTests {
    static let secret = "kept secret"

    @Test("a restore as root of a planted archive: set-id bits cleared, no device, only records kept, root's own")
    func plantedArchiveIsDisarmed() throws {
        let owner = try TestUser.named("pfrst-owner")
        let (vault, archive, passphraseFile, record) = try Self.plantedArchive(owner: owner)

        let verified = CommandRunner.run(TestVault.protfs, ["backup", "--verify", archive, "--device-key", vault.deviceKey,
                                                            "--backup-passphrase-file", passphraseFile])
        #expect(verified.succeeded, "\(verified.stderr)")
        let findings = verified.stdout.split(separator: "\n").filter { $0.hasPrefix("finding: ") }
        #expect(findings.filter { $0.contains("set-user-ID or set-group-ID bits (mode 4755)") }.count == 1, "\(findings)")
        #expect(findings.filter { $0.contains("set-user-ID or set-group-ID bits (mode 2775)") }.count == 1, "\(findings)")
        for expected in ["finding: mem: a character device node (1:1): a restore leaves it out",
                         "finding: protfs.items/bash: not a record of the daemon's own",
                         "finding: protfs.items/\(record): named as a record but not a well-formed one",
                         "finding: the backing root: owned by uid \(owner.uid) in the archive"] {
            #expect(findings.contains { $0.hasPrefix(expected) }, "\(expected) in \(verified.stdout)")
        }
        #expect(findings.contains { $0.hasPrefix("finding: protfs.links/") && $0.contains("not a record") }, "\(findings)")
        #expect(verified.stdout.contains("\(findings.count) findings"), "\(verified.stdout)")

        let restored = try TestVault(initialize: false)
        let result = BackupTests.restore(archive, into: restored.backing, deviceKey: restored.deviceKey,
                                         passcodeFile: restored.passcodeFile, passphraseFile: passphraseFile)
        try #require(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.contains("(4 left out, as the warnings say)"), "\(result.stdout)")
        #expect(result.stderr.contains("cleared the set-user-ID and set-group-ID bits the archive gave 2 objects"),
                "\(result.stderr)")
        for expected in ["warning: mem: a character device node", "warning: protfs.items/bash: not a record",
                         "warning: protfs.items/\(record): named as a record"] {
            #expect(result.stderr.contains(expected), "\(expected) in \(result.stderr)")
        }
        try Self.expectDisarmed(restored.backing)

        // The vault itself came back: the tool without its set-uid bit, the items readable.
        try restored.mount()
        defer { try? restored.unmount() }
        var st = stat()
        #expect(lstat(restored.path("tool"), &st) == 0 && st.st_mode & 0o7777 == 0o755, "tool mode \(String(st.st_mode, radix: 8))")
        #expect(FileManager.default.contentsEqual(atPath: restored.path("tool"), andPath: "/bin/bash"))
        #expect(lstat(restored.path("shared"), &st) == 0 && st.st_mode & 0o7777 == 0o775, "shared mode \(String(st.st_mode, radix: 8))")
        #expect(lstat(restored.path("pipe"), &st) == 0 && st.st_mode & S_IFMT == S_IFIFO)
        #expect(restored.item("get", ["--service", "restore", "--account", "kept"]).stdout == Self.secret)
    }

    @Test("a file size or an extent offset that overflows is damage: refused, not a crash, nothing left", arguments: [
        "huge-size", "huge-offset",
    ])
    func overflowingSizesAreDamage(craft: String) throws {
        let scratch = try TestVault(initialize: false)
        let passphraseFile = scratch.root.path + "/backup-passphrase"
        try "a backup passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        let archive = scratch.root.path + "/crafted"
        let made = CommandRunner.script("backup/craft-archive.py", [archive, passphraseFile, craft])
        try #require(made.succeeded, "\(made.stderr)")
        let result = BackupTests.restore(archive, into: scratch.backing, deviceKey: scratch.deviceKey,
                                         passcodeFile: scratch.passcodeFile, passphraseFile: passphraseFile)
        #expect(result.status == 8, "exit \(result.status): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.backing), "\(scratch.backing) left behind")
        let verified = CommandRunner.run(TestVault.protfs, ["backup", "--verify", archive, "--device-key", scratch.deviceKey,
                                                            "--backup-passphrase-file", passphraseFile])
        #expect(verified.status == 8, "exit \(verified.status): \(verified.stderr)")
    }

    /// A vault with a set-uid tool, a set-gid directory, a FIFO and an item, planted as its
    /// owner could (`plant-restore-hazards.sh`), backed up by protfs itself. Returns the name
    /// of the planted malformed record too.
    static func plantedArchive(owner: TestUser) throws -> (TestVault, archive: String, passphraseFile: String, record: String) {
        let vault = try TestVault()
        try vault.mount()
        vault.checkScript("backup/make-set-id-tree.sh")
        let added = vault.item("add", ["--service", "restore", "--account", "kept", "--accessible", "afterFirstUnlock"],
                               stdin: secret)
        try #require(added.succeeded, "\(added.stderr)")
        try vault.unmount()
        let planted = CommandRunner.script("backup/plant-restore-hazards.sh", [vault.backing, owner.name])
        try #require(planted.succeeded, "\(planted.stderr)")
        let passphraseFile = vault.root.path + "/backup-passphrase"
        try "a backup passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        let archive = vault.root.path + "/planted.protfsbackup"
        let backup = CommandRunner.run(TestVault.protfs, ["backup", vault.backing, archive, "--device-key", vault.deviceKey,
                                                          "--passcode-file", vault.passcodeFile,
                                                          "--backup-passphrase-file", passphraseFile])
        try #require(backup.succeeded, "\(backup.stderr)")
        return (vault, archive, passphraseFile, planted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Nothing set-id and no device anywhere; the root and the daemon's records root's own
    /// (the restore ran as root), as the daemon makes them; the item folder holds the one
    /// real record, the link folder no symlink.
    static func expectDisarmed(_ backing: String) throws {
        var st = stat()
        try #require(lstat(backing, &st) == 0)
        #expect(st.st_uid == getuid() && st.st_mode & 0o7077 == 0, "root \(st.st_uid) \(String(st.st_mode, radix: 8))")
        let entries = try #require(FileManager.default.subpaths(atPath: backing))
        for entry in entries {
            try #require(lstat(backing + "/" + entry, &st) == 0)
            #expect(st.st_mode & mode_t(S_ISUID | S_ISGID) == 0, "\(entry): mode \(String(st.st_mode, radix: 8))")
            #expect(st.st_mode & S_IFMT != S_IFCHR && st.st_mode & S_IFMT != S_IFBLK, "\(entry) is a device")
            let top = entry.split(separator: "/").first.map(String.init)
            if top == "protfs.items" || top == "protfs.links" || entry.hasSuffix("protfs.dir") {
                let expected: mode_t = st.st_mode & S_IFMT == S_IFDIR ? S_IFDIR | 0o700 : S_IFREG | 0o600
                #expect(st.st_uid == getuid() && st.st_mode == expected, "\(entry): \(st.st_uid) \(String(st.st_mode, radix: 8))")
            }
        }
        let items = try FileManager.default.contentsOfDirectory(atPath: backing + "/protfs.items")
        #expect(items.count == 1 && items[0] != "bash", "\(items)")
        let links = (try? FileManager.default.contentsOfDirectory(atPath: backing + "/protfs.links")) ?? []
        #expect(links.isEmpty, "\(links)")
    }
}
