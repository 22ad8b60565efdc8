import Foundation
import Glibc
import Testing

/// docs/GUARANTEES.md, "Secrets in memory", checked from outside the daemon: its memory is read
/// through /proc/PID/mem (root may, undumpable or not) for the plaintext of a `complete`
/// file and for the keys the lock must wipe; its dumpability, core limit, argv, environment,
/// log and error messages; and how its locked key slabs grow with open files.
@Suite("Secrets in the daemon's memory", .serialized)
struct SecretHygieneTests {
    enum LockEnd: String, CaseIterable { case now, graceEnds }

    /// The names of `needles` found in the memory of `pid`.
    func scan(_ pid: pid_t, for needles: [(name: String, bytes: [UInt8])]) throws -> Set<String> {
        let hex = needles.map { $0.bytes.map { String(format: "%02x", $0) }.joined() }
        let result = CommandRunner.script("memory/scan-memory.py", [String(pid)] + hex, timeout: 120)
        guard result.succeeded else { throw TestFailure("cannot scan the daemon's memory: \(result.stderr)") }
        return Set(result.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            .map { needles[$0].name })
    }

    @Test("after the lock, neither the plaintext of a complete file nor its key nor the wiped class keys are in memory",
          arguments: LockEnd.allCases)
    func nothingLeftAfterTheLock(_ end: LockEnd) throws {
        let vault = try TestVault()
        try vault.mount(options: ["grace=1"])
        defer { try? vault.unmount() }
        let pid = try #require(vault.daemon?.processIdentifier)
        let marker = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let markerHex = marker.map { String(format: "%02x", $0) }.joined()
        // Written whole, at odd offsets across chunk boundaries, appended and through a
        // shared mapping; read back buffered, with O_DIRECT and through the mapping.
        let client = CommandRunner.script("memory/write-and-read-secret.py", [vault.mountpoint, markerHex])
        try #require(client.succeeded, "\(client.stdout)\(client.stderr)")
        // A reader keeps the file open across the lock, so its key is in use when the lock comes.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let ready = vault.root.path + "/holding"
        holder.arguments = ["-c", "import os, sys, time; os.open(sys.argv[1], os.O_RDONLY); open(sys.argv[2], 'w').close(); time.sleep(300)",
                            vault.path("c/secret"), ready]
        try holder.run()
        defer { kill(holder.processIdentifier, SIGKILL) }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: ready) && Date() < deadline { usleep(20_000) }
        try #require(FileManager.default.fileExists(atPath: ready), "the reader did not open the file")

        let keys = try VaultKeys(of: vault)
        let backingPath = vault.protfsctl(["backing-path", vault.path("c/secret")])
        try #require(backingPath.succeeded, "\(backingPath.stderr)")
        let unlock = vault.protfsctl(["unlock", vault.mountpoint, "--passcode-file", vault.passcodeFile])
        try #require(unlock.succeeded, "\(unlock.stderr)")
        // Never kept: the passcode (read at mount and sent by protfsctl straight into locked
        // memory, wiped after use) and the plaintext (write payloads and read replies are
        // wiped). Kept until the lock: the file's key and the class keys.
        let neverKept = [("the passcode", Array(TestVault.passcode.utf8)), ("the plaintext marker", marker)]
        let keptUntilTheLock = [("the file's key", try keys.fileKey(ofBacking: backingPath.stdout.trimmingCharacters(in: .newlines)))]
            + keys.keysWipedByTheLock
        let needles = neverKept + keptUntilTheLock
        let whileUnlocked = try scan(pid, for: needles)
        // The scan sees keys where they are: the class keys are installed and the file is open.
        #expect(whileUnlocked == Set(keptUntilTheLock.map(\.0)), "found while unlocked: \(whileUnlocked)")

        switch end {
        case .now: try vault.lock(now: true)
        case .graceEnds:
            try vault.lock()
            try vault.waitForState(.locked)
        }
        let afterTheLock = try scan(pid, for: needles)
        #expect(afterTheLock.isEmpty, "found after the lock: \(afterTheLock)")
    }

    /// Issue 15, item 7: an fsync takes no key with it. The daemon is told to take 8 s over
    /// each fsync (`PROTFS_TEST_FSYNC_DELAY`); the lock comes while one is in flight.
    @Test("an fsync in flight at the lock keeps no key: the file's key is gone at once, and the fsync still returns 0")
    func fsyncInFlightKeepsNoKey() throws {
        let vault = try TestVault()
        vault.daemonEnvironment = ["PROTFS_TEST_FSYNC_DELAY": "8"]
        try vault.mount()
        defer { try? vault.unmount() }
        let pid = try #require(vault.daemon?.processIdentifier)
        vault.checkScript("memory/make-complete-secret.sh")
        let backingPath = vault.protfsctl(["backing-path", vault.path("c/secret")])
        try #require(backingPath.succeeded, "\(backingPath.stderr)")
        let fileKey = try VaultKeys(of: vault).fileKey(ofBacking: backingPath.stdout.trimmingCharacters(in: .newlines))
        let ready = vault.root.path + "/ready", synced = vault.root.path + "/synced"
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = [CommandRunner.scriptPath("memory/fsync_and_hold.py"), vault.path("c/secret"), ready, synced]
        try holder.run()
        defer { kill(holder.processIdentifier, SIGKILL) }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: ready) && Date() < deadline { usleep(20_000) }
        try #require(FileManager.default.fileExists(atPath: ready), "the writer did not start")
        usleep(500_000)  // the fsync reaches the daemon and waits there

        try vault.lock(now: true)
        let found = try scan(pid, for: [("the file's key", fileKey)])
        try #require(!FileManager.default.fileExists(atPath: synced), "the fsync ended before the scan: the test proves nothing")
        #expect(found.isEmpty, "found after the lock, with an fsync in flight: \(found)")
        let syncDeadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: synced) && Date() < syncDeadline { usleep(50_000) }
        #expect(FileManager.default.fileExists(atPath: synced), "the fsync of a handle opened before the lock returns 0")
    }

    /// Issue 15, item 7: request and reply buffers hold plaintext, so they are locked in
    /// memory (none may go to swap, where it would outlive the lock).
    @Test("request and reply buffers are locked: VmLck holds a request buffer at mount and grows by a reply buffer with reads")
    func plaintextBuffersAreLocked() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let pid = try #require(vault.daemon?.processIdentifier)
        let afterMount = try lockedKilobytes(pid)
        // Direct reads of a megabyte: every one a READ request answered from a reply buffer.
        vault.check("""
            head -c 4M /dev/urandom > f
            dd if=f of=/dev/null bs=1M iflag=direct status=none
            """)
        let afterReads = try lockedKilobytes(pid)
        let megabyte = 1024
        #expect(afterMount >= megabyte + 4, "a worker's request buffer (1 MiB and a page) is locked at mount: VmLck \(afterMount) kB")
        #expect(afterReads - afterMount >= megabyte, "a reply buffer (1 MiB) is locked once used: VmLck \(afterMount) -> \(afterReads) kB")
    }

    @Test("past RLIMIT_MEMLOCK the daemon serves from unlocked buffers and warns once")
    func overTheMemoryLockLimitItWarnsOnce() throws {
        let vault = try TestVault()
        // Without CAP_IPC_LOCK the limit applies (root is not bound by it): 512 KiB holds the
        // key slabs, not a request buffer.
        try vault.mount(launcher: ["/usr/bin/prlimit", "--memlock=524288:524288",
                                   "/usr/bin/setpriv", "--bounding-set", "-ipc_lock", "--inh-caps", "-ipc_lock"])
        defer { try? vault.unmount() }
        vault.checkScript("memory/read-three-megabytes.sh")
        let warnings = vault.daemonOutput.components(separatedBy: "cannot lock plaintext buffers in memory").count - 1
        #expect(warnings == 1, "daemon output: \(vault.daemonOutput)")
    }

    @Test("xattr names and values and symlink targets pass through the daemon without staying in its memory")
    func repliesAndPayloadsAreWiped() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let pid = try #require(vault.daemon?.processIdentifier)
        func marker(_ kind: String) -> String { kind + (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() }
        let value = marker("value-"), xattrName = marker("xname-"), target = marker("target-")
        // Each goes in (setxattr, symlink) and comes back out in a reply (getxattr, listxattr,
        // readlink) several times; the kernel caches none of these replies.
        let used = CommandRunner.script("memory/xattr-and-symlink-replies.sh", [vault.mountpoint, xattrName, value, target])
        try #require(used.succeeded, "\(used.stdout)\(used.stderr)")
        let needles = [("the xattr value", Array(value.utf8)), ("the xattr name", Array(xattrName.utf8)),
                       ("the symlink target", Array(target.utf8))]
        let found = try scan(pid, for: needles)
        #expect(found.isEmpty, "found in the daemon's memory: \(found)")
    }

    @Test("the daemon is not dumpable, writes no core, and no passcode is in its argv, environment, log or messages")
    func noCoreNoDumpNoPasscodeAnywhere() throws {
        let vault = try TestVault()
        let wrong = "wrong-passcode-\(UUID().uuidString)"
        let wrongFile = vault.root.path + "/wrong"
        try (wrong + "\n").write(toFile: wrongFile, atomically: true, encoding: .utf8)
        let wrongMount = Self.runClosingDescriptors([TestVault.protfs, "mount", vault.backing, vault.mountpoint, "-o",
                                                     "device_key=\(vault.deviceKey),passcode_file=\(wrongFile)"])
        #expect(wrongMount.status == 3)
        // Without CAP_SYS_PTRACE (in the daemon and in the reader alike) only dumpability
        // decides whether /proc/PID/mem opens: a root reader with it would get in anyway.
        let withoutPtrace = ["/usr/bin/setpriv", "--bounding-set", "-sys_ptrace", "--inh-caps", "-sys_ptrace"]
        try vault.mount(launcher: withoutPtrace)
        defer { try? vault.unmount() }
        let pid = try #require(vault.daemon?.processIdentifier)

        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(core.map { Array($0[4...5]) } == ["0", "0"], "core limit: \(String(describing: core))")

        let dumpability = CommandRunner.run(withoutPtrace[0], Array(withoutPtrace.dropFirst())
                                            + ["python3", CommandRunner.scriptPath("memory/proc-mem-readability.py"), String(pid)])
        #expect(dumpability.stdout == "readable refused\n", "a dumpable process, then the daemon: \(dumpability.stdout)\(dumpability.stderr)")

        let unlock = vault.protfsctl(["unlock", vault.mountpoint, "--passcode-file", wrongFile])
        #expect(unlock.status == 3)
        let passwd = CommandRunner.run(TestVault.protfsctl, ["passwd", vault.mountpoint], stdin: wrong + "\nnew-\(wrong)\n")
        #expect(passwd.status == 3)

        let cmdline = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
        let environment = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        let places = [("argv", String(decoding: cmdline, as: UTF8.self)), ("environment", String(decoding: environment, as: UTF8.self)),
                      ("the daemon's log", vault.daemonOutput), ("unlock's messages", unlock.stdout + unlock.stderr),
                      ("passwd's messages", passwd.stdout + passwd.stderr), ("mount's messages", wrongMount.stdout + wrongMount.stderr)]
        for (place, text) in places {
            #expect(!text.contains(TestVault.passcode) && !text.contains(wrong), "a passcode in \(place): \(text)")
        }
    }

    @Test("keys live in locked slabs of 2048: 20,000 files opened and closed in turn, then 5,000 held open at once")
    func keySlabs() throws {
        let vault = try TestVault()
        // In the background, as `protfs mount` normally runs: the daemon it starts must keep
        // its keys in locked memory too.
        let mount = Self.runClosingDescriptors([TestVault.protfs, "mount", vault.backing, vault.mountpoint, "-o",
                                                "device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile)"])
        try #require(mount.succeeded, "\(mount.stderr)")
        let status = vault.protfsctl(["status", vault.mountpoint, "--json"])
        let pid = try #require((try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["pid"] as? Int32)
        defer {
            try? vault.unmount()
            // Still this daemon (not a process that reused its pid): its argv names the mount.
            let ours = { (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?.contains(vault.mountpoint) == true }
            let deadline = Date().addingTimeInterval(15)
            while ours() && Date() < deadline { usleep(50_000) }
            if ours() { kill(pid, SIGKILL) }
        }
        // A slab: 2048 keys of 32 bytes, and the page sodium_malloc adds for its canary.
        let slab = (2048 * 32 + 4096) / 1024
        let initial = try keyKilobytes(pid)
        #expect(initial >= slab, "the keys of a daemon in the background are not locked in memory: \(initial) kB locked")

        let churn = CommandRunner.script("memory/open-and-close-many.py", [vault.mountpoint], timeout: 600)
        try #require(churn.succeeded, "\(churn.stderr)")
        let afterChurn = try keyKilobytes(pid)
        #expect(afterChurn <= initial + slab, "20,000 closed files grew the locked keys from \(initial) to \(afterChurn) kB")

        let held = CommandRunner.script("memory/hold-many-open.py", [vault.mountpoint, String(pid)], timeout: 600)
        try #require(held.succeeded, "\(held.stderr)")
        let whileHeld = try #require(Int(held.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let grown = whileHeld - afterChurn
        // 5,000 keys need at least two more slabs of 2048 (one holds the keys already there),
        // each one locked allocation.
        let slabs = grown / slab
        #expect(grown % slab == 0 && (2...4).contains(slabs), "5,000 open files: locked \(afterChurn) -> \(whileHeld) kB")
        usleep(500_000)
        #expect(try keyKilobytes(pid) <= whileHeld, "closing the files grew the locked memory")
    }

    /// Runs a command that may leave a daemon behind (`protfs mount` without `-f`) with
    /// every inherited descriptor but the standard three closed: Foundation's Process learns
    /// that a child ended from a socket the child inherits, so a daemon holding it would make
    /// the command look as if it never returned.
    static func runClosingDescriptors(_ command: [String]) -> CommandResult {
        CommandRunner.python("import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:], close_fds=True))", command)
    }

    /// The memory locked for keys (and passcodes): locked whole, unlike the plaintext
    /// buffers, which are locked as they are touched and grow with traffic.
    func keyKilobytes(_ pid: Int32) throws -> Int {
        let result = CommandRunner.run("python3", [CommandRunner.scriptPath("memory/locked_whole_kilobytes.py"), String(pid)])
        guard result.succeeded, let kilobytes = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("cannot read /proc/\(pid)/smaps: \(result.stderr)")
        }
        return kilobytes
    }

    func lockedKilobytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmLck:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else {
            throw TestFailure("no VmLck in /proc/\(pid)/status")
        }
        return kilobytes
    }
}
