import Foundation
import Testing

/// Progress of long work (docs/OPERATIONS.md): `--json` gives one JSON object a line on
/// standard error whose counts only grow and end, `"done":true`, at the work's total; on a
/// pipe without `--progress` nothing is added. `fsck`, `restore` and `class set -R` on a tree
/// of 10,000 files.
@Suite("progress", .serialized)
struct ProgressTests {
    /// The JSON records among the lines of `stderr`, checked: counts never go down, only the
    /// last is done. Returns the last.
    private static func records(_ stderr: String, command: String) throws -> [String: Any] {
        let records = stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let last = try #require(records.last, "no progress records: \(stderr)")
        var previous: (UInt64, UInt64) = (0, 0)
        for (index, record) in records.enumerated() {
            #expect(record["command"] as? String == command)
            let objects = (record["objects"] as? NSNumber)?.uint64Value ?? 0, bytes = (record["bytes"] as? NSNumber)?.uint64Value ?? 0
            #expect(objects >= previous.0 && bytes >= previous.1, "counts went down at record \(index): \(record)")
            #expect(record["done"] as? Bool == (index == records.count - 1))
            previous = (objects, bytes)
        }
        #expect((last["secondsLeft"] as? NSNumber)?.intValue == 0)
        return last
    }

    private static func count(_ record: [String: Any]) -> Int { (record["objects"] as? NSNumber)?.intValue ?? -1 }

    @Test("class set -R, fsck and restore: --json streams end at the total; a pipe gets nothing without --progress")
    func jsonProgress() throws {
        let vault = try TestVault()
        try vault.mount()
        let made = CommandRunner.script("backup/make-progress-tree.sh", [vault.path("t")], timeout: 600)
        try #require(made.succeeded, "\(made.stderr)")

        let quiet = vault.protfsctl(["class", "set", "-R", "complete", vault.path("t")], timeout: 300)
        #expect(quiet.succeeded && quiet.stderr.isEmpty && quiet.stdout.isEmpty, "\(quiet.stderr)")
        let classes = vault.protfsctl(["class", "set", "-R", "--json", "none", vault.path("t")], timeout: 300)
        #expect(classes.succeeded, "\(classes.stderr)")
        let reclassed = try Self.records(classes.stderr, command: "protfsctl class set")
        #expect(Self.count(reclassed) == 10_101)
        // The totals, as the tally before the work counted them; a re-class reads no data.
        #expect((reclassed["totalObjects"] as? NSNumber)?.intValue == 10_101 && reclassed["totalBytes"] is NSNull, "\(reclassed)")
        let line = vault.protfsctl(["class", "set", "-R", "--progress", "none", vault.path("t")], timeout: 300)
        #expect(line.stderr.hasPrefix("\rprotfsctl class set: ") && line.stderr.hasSuffix("\n"), "\(line.stderr)")
        #expect(line.stderr.contains("objects/s") && !line.stderr.contains("B/s"), "\(line.stderr)")
        try vault.unmount()

        let fsckArguments = ["fsck", vault.backing, "--device-key", vault.deviceKey, "--passcode-file", vault.passcodeFile]
        let plain = CommandRunner.run(TestVault.protfs, fsckArguments, timeout: 300)
        #expect(plain.succeeded && plain.stderr.isEmpty, "\(plain.stderr)")
        let fsck = CommandRunner.run(TestVault.protfs, fsckArguments + ["--json"], timeout: 300)
        #expect(fsck.succeeded, "\(fsck.stdout)\(fsck.stderr)")
        let checkedRecord = try Self.records(fsck.stderr, command: "protfs fsck")
        #expect((checkedRecord["totalObjects"] as? NSNumber).map { $0.intValue > 10_101 } == true
                && (checkedRecord["totalBytes"] as? NSNumber).map { $0.intValue > 0 } == true, "\(checkedRecord)")
        let checked = Self.count(checkedRecord)
        #expect(checked > 10_101 && fsck.stdout.contains("checked \(checked) objects"), "\(checked): \(fsck.stdout)")

        let passphrase = vault.root.path + "/passphrase", archive = vault.root.path + "/archive"
        try "a backup passphrase\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
        let backup = CommandRunner.run(TestVault.protfs, ["backup", vault.backing, archive, "--device-key", vault.deviceKey,
                                                          "--passcode-file", vault.passcodeFile, "--backup-passphrase-file", passphrase],
                                       timeout: 300)
        try #require(backup.succeeded, "\(backup.stderr)")
        #expect(backup.stderr.isEmpty, "\(backup.stderr)")
        let restoreArguments = ["restore", archive, "--device-key", vault.deviceKey, "--passcode-file", vault.passcodeFile,
                                "--backup-passphrase-file", passphrase]
        let plainRestore = CommandRunner.run(TestVault.protfs, [restoreArguments[0], restoreArguments[1], vault.root.path + "/r1"]
                                             + restoreArguments.dropFirst(2), timeout: 300)
        #expect(plainRestore.succeeded && plainRestore.stderr.isEmpty, "\(plainRestore.stderr)")
        let restore = CommandRunner.run(TestVault.protfs, [restoreArguments[0], restoreArguments[1], vault.root.path + "/r2", "--json"]
                                        + restoreArguments.dropFirst(2), timeout: 300)
        #expect(restore.succeeded, "\(restore.stderr)")
        let restored = Self.count(try Self.records(restore.stderr, command: "protfs restore"))
        #expect(restore.stdout.contains("Restored \(restored) objects"), "\(restored): \(restore.stdout)")
    }
}
