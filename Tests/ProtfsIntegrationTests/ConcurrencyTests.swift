import Foundation
import Testing

/// Issue 5, concurrency: processes and threads hammering one file (disjoint ranges that
/// share chunks, appends, readers) and many files at once, shared mappings beside writes,
/// and lock cycles under load. Nothing torn, no write ext4 would keep is lost (checked
/// again after a remount, so the page cache cannot hide a loss), no deadlock (every client
/// has a deadline), and the daemon stays up. Run with `PROTFS_TEST_PROTFS` pointing at a
/// ThreadSanitizer build of the daemon, the tests also fail on any report it makes.
@Suite("Concurrency: many writers, one daemon", .serialized)
struct ConcurrencyTests {
    /// Runs a client kept in `Scripts/` (each imports concurrent_clients.py) with the mount
    /// point as its first argument.
    func run(_ vault: TestVault, _ script: String, _ arguments: [String] = [], timeout: TimeInterval = 120) -> CommandResult {
        CommandRunner.script(script, [vault.mountpoint] + arguments, timeout: timeout)
    }

    /// The daemon is still serving and ThreadSanitizer (when built in) has nothing to say.
    func expectHealthyDaemon(_ vault: TestVault, _ context: String) {
        #expect(vault.daemon?.isRunning == true, "\(context): the daemon is gone: \(vault.daemonOutput)")
        #expect(!vault.daemonOutput.contains("WARNING: ThreadSanitizer"), "\(context): \(vault.daemonOutput)")
    }

    // MARK: one file, many writers

    @Test("one file written by many threads and processes at once, with appenders and readers: nothing lost, nothing torn")
    func oneFileManyWriters() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        let writers = run(vault, "concurrency/one-file-many-writers.py")
        #expect(writers.stdout == "writers [0, 0, 0, 0, 0, 0, 0] bad reads []\n", "\(writers.stdout)\(writers.stderr)")
        let expected = "shared ok\nlog ok\n"
        #expect(run(vault, "concurrency/one-file-many-writers-check.py").stdout == expected)
        expectHealthyDaemon(vault, "one file")
        try vault.unmount()
        try vault.mount()
        let afterRemount = run(vault, "concurrency/one-file-many-writers-check.py")
        #expect(afterRemount.stdout == expected, "after a remount: \(afterRemount.stdout)\(afterRemount.stderr)")
    }

    // MARK: many files

    @Test("twelve workers in three processes create, write, truncate, rename and unlink their own files at once")
    func manyFilesAtOnce() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        let expected = vault.root.path + "/expected"
        let workers = run(vault, "concurrency/many-files-at-once.py", [expected])
        #expect(workers.stdout == "workers [0, 0, 0]\n", "\(workers.stdout)\(workers.stderr)")
        expectHealthyDaemon(vault, "many files")
        try vault.unmount()
        try vault.mount()
        let check = run(vault, "concurrency/many-files-at-once-check.py", [expected])
        #expect(check.stdout == "checked ok\n", "\(check.stdout)\(check.stderr)")
    }

    // MARK: mappings beside writes

    @Test("a shared writable mapping and pwrite on the same file at once: both halves whole after a remount")
    func mappingBesideWrites() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        let clients = run(vault, "concurrency/mapping-beside-writes.py")
        #expect(clients.stdout == "processes [0, 0]\n", "\(clients.stdout)\(clients.stderr)")
        expectHealthyDaemon(vault, "mapping")
        try vault.unmount()
        try vault.mount()
        let check = run(vault, "concurrency/mapping-beside-writes-check.py")
        #expect(check.stdout == "ok 262144\n", "\(check.stdout)\(check.stderr)")
    }

    // MARK: the lock under load

    @Test("five lock and unlock cycles while eight threads write files of every class")
    func lockCyclesUnderLoad() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked)
        let client = run(vault, "concurrency/lock-cycles-under-load.py", [TestVault.protfsctl, vault.passcodeFile])
        let expected = """
            none wrote []
            completeUntilFirstUserAuthentication wrote []
            completeUnlessOpen wrote []
            complete wrote ['EACCES']

            """
        #expect(client.stdout == expected, "\(client.stdout)\(client.stderr)")
        expectHealthyDaemon(vault, "lock cycles")
    }
}
