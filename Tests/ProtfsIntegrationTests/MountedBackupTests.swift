import Foundation
import Glibc
import Testing

/// docs/BACKUP.md's backup of a mounted vault, through its daemon, on real mounts: a
/// consistent snapshot while files are rewritten, in the locked state too; refused to other
/// users; a client that goes away stops the walk and leaves nothing.
@Suite("Backups of mounted vaults", .serialized)
struct MountedBackupTests {
    /// Slow enough that writes land in the middle of copies, and that a test can act while a
    /// backup runs.
    static let pieceDelay = "0.05"

    /// A mounted vault with the backup tree, an item of every accessibility and the files
    /// `rewrite-versions.py` rewrites, its daemon pausing after each piece a backup copies.
    static func mountedVault(pieceDelay: String = pieceDelay) throws -> (TestVault, passphraseFile: String) {
        let vault = try TestVault()
        vault.daemonEnvironment = ["PROTFS_TEST_BACKUP_PIECE_DELAY": pieceDelay]
        try vault.mount()
        vault.checkScript("backup/make-backup-tree.sh", [BackupTests.marker])
        for accessible in BackupTests.accessibilities {
            let added = vault.item("add", ["--service", "backup", "--account", accessible, "--accessible", accessible],
                                   stdin: "\(BackupTests.marker) secret \(accessible)")
            try #require(added.succeeded, "\(added.stderr)")
        }
        let made = CommandRunner.script("backup/rewrite-versions.py", ["make", vault.path("versions")])
        try #require(made.succeeded, "\(made.stderr)")
        let passphraseFile = vault.root.path + "/backup-passphrase"
        try "a backup passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        return (vault, passphraseFile)
    }

    static func backupArguments(_ vault: TestVault, to archive: String, passphraseFile: String,
                                passcodeFile: String? = nil) -> [String] {
        ["backup", vault.backing, archive, "--passcode-file", passcodeFile ?? vault.passcodeFile,
         "--backup-passphrase-file", passphraseFile]
    }

    @Test("a vault backed up while mounted and rewritten restores identical, each rewritten file one whole version")
    func snapshotWhileWritten() throws {
        let (vault, passphraseFile) = try Self.mountedVault()
        defer { try? vault.unmount() }
        let stop = vault.root.path + "/stop-writing"
        let writers = try ["in-place", "replaced", "moved"].map { kind in
            try Background("python3", [CommandRunner.scriptPath("backup/rewrite-versions.py"), "run", vault.path("versions"), stop, kind])
        }
        defer { writers.forEach { $0.stop() } }
        usleep(300_000)
        let archive = vault.root.path + "/vault.protfsbackup"
        let backup = try Background(TestVault.protfs, Self.backupArguments(vault, to: archive, passphraseFile: passphraseFile))
        defer { backup.stop() }
        // Other control requests are served while it runs.
        usleep(500_000)
        let status = vault.protfsctl(["status", vault.mountpoint, "--json"], timeout: 5)
        #expect(status.succeeded && status.stdout.contains("\"unlocked\""), "\(status.stderr)")
        let backedUp = backup.wait(timeout: 120)
        try #require(backedUp.status == 0, "\(backedUp.output)\n\(vault.daemonOutput)")
        #expect(backedUp.output.contains("4 ThisDeviceOnly items left out"), "\(backedUp.output)")
        try "".write(toFile: stop, atomically: true, encoding: .utf8)
        for writer in writers {
            let written = writer.wait(timeout: 60)
            #expect(written.status == 0 && (Int(written.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 1,
                    "the writer wrote during the backup: \(written.output)")
        }

        let restored = try BackupTests.restoredElsewhere(archive, passphraseFile: passphraseFile)
        defer { try? restored.unmount() }
        let compared = CommandRunner.script("backup/compare-trees.py", [vault.mountpoint, restored.mountpoint, "versions"])
        #expect(compared.succeeded, "\(compared.stdout)\(compared.stderr)")
        let whole = CommandRunner.script("backup/rewrite-versions.py", ["check", restored.path("versions")])
        #expect(whole.succeeded, "\(whole.stdout)\(whole.stderr)")
        for protectionClass in ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen", "complete"] {
            #expect(restored.protectionClass(of: "versions/\(protectionClass)/in-place") == protectionClass)
        }
        BackupTests.expectMigratableItemsOnly(in: restored)
    }

    @Test("a locked mounted vault is backed up with its passcode; a lock and directory changes during a backup go through")
    func lockedAndLockingVault() throws {
        let (vault, passphraseFile) = try Self.mountedVault(pieceDelay: "0.2")
        defer { try? vault.unmount() }
        try vault.lock(now: true)
        let wrong = vault.root.path + "/wrong-passcode"
        try "not the passcode\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        let refused = CommandRunner.run(TestVault.protfs, Self.backupArguments(vault, to: vault.root.path + "/refused",
                                                                               passphraseFile: passphraseFile, passcodeFile: wrong))
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: vault.root.path + "/refused"))
        let locked = vault.root.path + "/locked.protfsbackup"
        let backup = CommandRunner.run(TestVault.protfs, Self.backupArguments(vault, to: locked, passphraseFile: passphraseFile))
        #expect(backup.succeeded, "\(backup.stderr)")
        #expect(Self.verify(locked, vault, passphraseFile), "the backup of the locked vault")

        // Unlocked again, a backup runs while a directory is made and the vault locks: the
        // mkdir waits for the walk, the lock goes through at once (its write-out and cache
        // drop pass the waiting mkdir), the archive is whole.
        try vault.unlock()
        let started = "started; changes to the namespace wait"
        let backupsBefore = vault.daemonOutput.components(separatedBy: started).count
        let during = vault.root.path + "/during-lock.protfsbackup"
        let running = try Background(TestVault.protfs, Self.backupArguments(vault, to: during, passphraseFile: passphraseFile))
        defer { running.stop() }
        // The walk starts after the client's passphrase stretch, which a loaded machine slows:
        // the daemon's log says when it has.
        let deadline = Date().addingTimeInterval(60)
        while vault.daemonOutput.components(separatedBy: started).count == backupsBefore, Date() < deadline { usleep(50_000) }
        let mkdir = try Background("/bin/mkdir", [vault.path("made-during-backup")])
        defer { mkdir.stop() }
        usleep(300_000)
        #expect(mkdir.process.isRunning, "a directory change waits while the backup walks")
        let lockStarted = Date()
        let lock = vault.protfsctl(["lock", "--now", vault.mountpoint], timeout: 10)
        #expect(lock.succeeded && Date().timeIntervalSince(lockStarted) < 5, "\(lock.stderr)")
        let made = mkdir.wait(timeout: 60)
        #expect(made.status == 0, "\(made.output)")
        let finished = running.wait(timeout: 120)
        #expect(finished.status == 0, "\(finished.output)\n\(vault.daemonOutput)")
        #expect(Self.verify(during, vault, passphraseFile), "the backup during the lock")
    }

    @Test("a mounted vault without a passcode is backed up without one, locked or not")
    func withoutPasscode() throws {
        let vault = try NoPasscodeTests.vaultWithoutPasscode()
        try vault.mount(passcode: false)
        defer { try? vault.unmount() }
        try NoPasscodeTests.contents.write(toFile: vault.path("file"), atomically: false, encoding: .utf8)
        try vault.lock(now: true)
        let passphraseFile = vault.root.path + "/backup-passphrase"
        try "a backup passphrase\n".write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        let archive = vault.root.path + "/vault.protfsbackup"
        let backup = CommandRunner.run(TestVault.protfs, ["backup", vault.backing, archive, "--backup-passphrase-file", passphraseFile],
                                       stdin: "")
        #expect(backup.succeeded, "\(backup.stderr)")
        #expect(Self.verify(archive, vault, passphraseFile))
    }

    @Test("another uid may not ask the daemon for a backup; a killed client stops the walk and leaves nothing")
    func refusedAndCancelled() throws {
        let (vault, passphraseFile) = try Self.mountedVault(pieceDelay: "0.5")
        defer { try? vault.unmount() }
        let user = try TestUser.named("protfs-backup")
        let outside = vault.root.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o777])
        for file in [vault.passcodeFile, passphraseFile] { chmod(file, 0o644) }
        let asOther = CommandRunner.shell("\(user.runs) \(TestVault.protfs) "
                                          + Self.backupArguments(vault, to: outside + "/theirs", passphraseFile: passphraseFile)
                                            .joined(separator: " "))
        #expect(asOther.status == 1 && asOther.stderr.contains("not allowed"), "\(asOther.status): \(asOther.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)

        // Killed in the middle of its walk (half a second per piece): the daemon stops it and
        // lets go, so a directory change goes through long before the walk could have ended.
        let killed = try Background(TestVault.protfs, Self.backupArguments(vault, to: outside + "/killed",
                                                                           passphraseFile: passphraseFile))
        usleep(1_500_000)
        kill(killed.process.processIdentifier, SIGKILL)
        _ = killed.wait(timeout: 10)
        let started = Date()
        let mkdir = CommandRunner.run("/bin/mkdir", [vault.path("after-the-kill")], timeout: 60)
        #expect(mkdir.succeeded && Date().timeIntervalSince(started) < 5,
                "mkdir took \(Date().timeIntervalSince(started)) s: \(mkdir.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        let deadline = Date().addingTimeInterval(10)
        while !vault.daemonOutput.contains("cancelled") && Date() < deadline { usleep(50_000) }
        #expect(vault.daemonOutput.contains("backup was cancelled"), "\(vault.daemonOutput)")
    }

    static func verify(_ archive: String, _ vault: TestVault, _ passphraseFile: String) -> Bool {
        CommandRunner.run(TestVault.protfs, ["backup", "--verify", archive, "--device-key", vault.deviceKey,
                                             "--backup-passphrase-file", passphraseFile]).succeeded
    }
}

/// A command running beside the test, its output (stdout and stderr) in a file.
final class Background {
    let process = Process()
    private let output: URL

    init(_ executable: String, _ arguments: [String]) throws {
        output = FileManager.default.temporaryDirectory.appendingPathComponent("protfs-bg-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits for the exit (killing it at the timeout): its status and output.
    func wait(timeout: TimeInterval) -> (status: Int32, output: String) {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        stop()
        process.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: output)
        return (process.terminationReason == .uncaughtSignal ? -1 : process.terminationStatus, text)
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
