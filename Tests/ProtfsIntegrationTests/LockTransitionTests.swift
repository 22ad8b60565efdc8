import Foundation
import Testing

/// docs/CLASSES.md across the lock: descriptors and mappings opened before it, writes
/// racing the end of the grace, remounts and auto-lock. A Python client holds what a shell
/// cannot (descriptors, mappings, threads) and calls `protfsctl` itself at the right moment.
/// What needs no kernel (a `completeUnlessOpen` handle or new file across the lock) is the
/// harness's (`VaultFileSystemTests`).
@Suite("Handles, mappings and writes across the lock")
struct LockTransitionTests {
    /// Runs a client kept in `Scripts/` (each imports lock_client.py) with protfsctl and the
    /// mount point as its first arguments.
    func runClient(_ vault: TestVault, _ script: String, _ arguments: [String], timeout: TimeInterval = 90) -> CommandResult {
        CommandRunner.script(script, [TestVault.protfsctl, vault.mountpoint] + arguments, timeout: timeout)
    }

    enum LockKind: String, CaseIterable { case now, graceEnds }

    /// How the handle is opened: through the page cache, or O_DIRECT (direct I/O: every read
    /// and write comes to the daemon, nothing of it is cached).
    enum Access: String, CaseIterable { case cached, direct }

    @Test("a complete handle opened before the lock: read and write get EACCES, fsync and close succeed",
          arguments: LockKind.allCases, Access.allCases)
    func completeHandleAcrossTheLock(_ kind: LockKind, _ access: Access) throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked, grace: kind == .now ? 600 : 2) { try vault.makeClassDirectories(holding: ["f": "complete\n"]) }
        let client = runClient(vault, "lock/complete-handle-across-lock.py", [vault.path("d-complete/f"), kind.rawValue, access.rawValue])
        let expected = ["read before ok", "write before ok"] + (kind == .graceEnds ? ["read in the grace ok"] : [])
            + ["state locked", "read after EACCES", "write after EACCES", "fsync after ok", "close ok", "open anew EACCES"]
        #expect(client.stdout.split(separator: "\n").map(String.init) == expected, "\(client.stdout)\(client.stderr)")
        try vault.unlock()
        #expect(vault.shell("cat d-complete/f").stdout == "Complete\n", "the write before the lock is kept, the one after is not")
    }

    @Test("a shared mapping of a complete file: written back at the lock, SIGBUS when touched after it")
    func mappingAcrossTheLock() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked) {
            try vault.makeClassDirectories(holding: ["mapped": String(repeating: ".", count: 8192)])
        }
        // The child maps, dirties and later touches the mapping; the parent locks in between
        // and reports how the child ended.
        let client = runClient(vault, "lock/mapping-across-lock.py", [vault.path("d-complete/mapped")])
        #expect(client.stdout == "touch after the lock SIGBUS\n", "\(client.stdout)\(client.stderr)")
        try vault.unlock()
        let read = vault.shell("head -c 19 d-complete/mapped; stat -c %s d-complete/mapped")
        #expect(read.stdout == "written in the map\n8192\n", "\(read.stdout)\(read.stderr)")
    }

    @Test("writes and dirty mapped pages up to the end of the grace are all on disk after unlock")
    func nothingLostAtTheEndOfTheGrace() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked, grace: 2) {
            try vault.makeClassDirectories(holding: ["records": "", "mapped": String(repeating: ".", count: 4096)])
        }
        let client = runClient(vault, "lock/writes-through-the-grace.py", [vault.path("d-complete/records"), vault.path("d-complete/mapped")])
        #expect(client.stdout == "state locking\nwrites stopped by EACCES\nstate locked\nclose ok ok\n", "\(client.stdout)\(client.stderr)")
        let written = client.stderr.split(separator: "\n").last.flatMap { $0.hasPrefix("written ") ? Int($0.dropFirst(8)) : nil }
        let count = try #require(written, "\(client.stderr)")
        #expect(count > 0)
        try vault.unlock()
        let check = CommandRunner.script("lock/records-intact.py", [vault.path("d-complete/records"), String(count)])
        #expect(check.stdout == "size \(count) records, damaged []\n", "\(check.stdout)\(check.stderr)")
        #expect(vault.shell("head -c 21 d-complete/mapped").stdout == "dirtied in the grace\n")
    }

    @Test("8 threads doing I/O on complete files through the lock see success or EACCES, never corrupt data")
    func threadsThroughTheTransition() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked, grace: 1) {
            let zeros = String(repeating: "\0", count: 16 * 4096)
            try vault.makeClassDirectories(holding: Dictionary(uniqueKeysWithValues: (0..<8).map { ("t\($0)", zeros) }))
        }
        let client = runClient(vault, "lock/threads-through-the-lock.py", [vault.path("d-complete"), vault.passcodeFile])
        #expect(client.stdout == "threads ended by EACCES\nstate locked\nclose ok\nstate unlocked\ndamaged []\n",
                "\(client.stdout)\(client.stderr)")
        #expect(vault.daemon?.isRunning == true && TestVault.isMounted(vault.mountpoint), "the daemon stays up: \(vault.daemonOutput)")
    }

    @Test("unmount ends everything: a mount without the passcode is beforeFirstUnlock, whatever came before")
    func remountStartsBeforeFirstUnlock() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(passcode: true)
        #expect(try vault.state() == .unlocked)
        try vault.lock(now: true)
        try vault.unmount()
        try vault.mount(passcode: false)
        #expect(try vault.state() == .beforeFirstUnlock)
        try vault.unlock()
        try vault.unmount()
        try vault.mount(passcode: false)
        #expect(try vault.state() == .beforeFirstUnlock)
    }

    @Test("autolock=2,grace=0 locks after a few idle seconds")
    func autolock() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(passcode: true)
        try vault.makeClassDirectories(holding: ["f": "idle\n"])
        try vault.unmount()
        try vault.mount(passcode: true, options: ["autolock=2", "grace=0"])
        try vault.waitForState(.locked, within: 20)
        let read = vault.shell("cat d-complete/f")
        #expect(!read.succeeded && read.stderr.contains("Permission denied"), "\(read.stdout)\(read.stderr)")
        #expect(vault.shell("cat d-completeUntilFirstUserAuthentication/f").stdout == "idle\n")
    }
}
