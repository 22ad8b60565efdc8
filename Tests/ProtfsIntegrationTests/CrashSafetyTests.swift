import Foundation
import Testing

/// Issue 5, crash safety: `kill -9` of the daemon in the middle of heavy writes, re-classes
/// and `passwd`, then a remount. Files nobody was writing read back exactly; a file being
/// written holds, chunk by chunk, its contents before or after the write in flight, or EIO
/// for a torn chunk, never other data; the keybag is never lost.
@Suite("Crash safety: kill -9 of the daemon", .serialized)
struct CrashSafetyTests {
    @Test("kill -9 in the middle of heavy writes and re-classes, three times: nothing acknowledged is lost, nothing torn reads back")
    func killDuringHeavyWrites() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        try vault.makeClassDirectories()
        let work = vault.root.path + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        for round in 1...3 {
            let writer = CommandRunner.script("concurrency/write-and-kill.py", [vault.mountpoint, String(vault.daemonPID), work, String(round)], timeout: 120)
            #expect(writer.succeeded && !writer.stdout.contains("PROBLEM"), "round \(round): \(writer.stdout)\(writer.stderr)")
            try vault.reapKilledDaemon()
            try vault.mount()
            let check = CommandRunner.script("concurrency/verify-after-crash.py", [vault.mountpoint, work, String(round)], timeout: 120)
            #expect(check.succeeded && check.stdout.hasPrefix("checked;"),
                    "round \(round): \(writer.stdout)\(check.stdout)\(check.stderr)\ndaemon: \(vault.daemonOutput)")
        }
    }

    @Test("kill -9 while passwd rewrites the keybag: the old or the new passcode opens the vault, and the data is there")
    func killDuringPasswd() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        try vault.makeClassDirectories(holding: ["f": "still here\n"])
        // One passwd run to its end says how long one takes on this machine now (two Argon2id
        // runs and the keybag's write: 0.3 s when idle, seconds on a loaded one), so that the
        // kills below land from before passwd has read its input to after it has finished,
        // across the window where the new keybag and the generation are written. The kills
        // reach 2.5 times the calibrated run: a later run on a machine that got busier (the
        // suite runs in parallel) took over 1.2 times as long, and then no round saw a
        // finished passwd.
        let started = Date()
        let calibration = vault.protfsctl(["passwd", vault.mountpoint], stdin: "\(TestVault.passcode)\ncalibrated\n", timeout: 60)
        #expect(calibration.succeeded, "\(calibration.stderr)")
        let step = Date().timeIntervalSince(started) * 2.5 / 11
        var current = "calibrated"
        var changed = 0
        for round in 0..<12 {
            let next = "passcode of round \(round)"
            try vault.protfsctlPasswdThenKill(old: current, new: next, after: step * Double(round))
            try vault.reapKilledDaemon()
            var opened: String?
            for candidate in [current, next] {
                try (candidate + "\n").write(toFile: vault.passcodeFile, atomically: true, encoding: .utf8)
                do {
                    try vault.mount()
                    opened = candidate
                    break
                } catch {
                    #expect("\(error)".contains("exited with 3"), "round \(round): only a wrong passcode may fail: \(error)")
                }
            }
            guard let opened else {
                Issue.record("round \(round): neither the old nor the new passcode opens the vault: \(vault.daemonOutput)")
                return
            }
            if opened == next { changed += 1 }
            current = opened
            for protectionClass in TestVault.classNames {
                #expect(vault.shell("cat \(TestVault.classDirectory(protectionClass))/f").stdout == "still here\n",
                        "round \(round), class \(protectionClass)")
            }
        }
        #expect(changed > 0, "no passwd completed before its kill: the rounds do not cover the window")
    }

    /// Issue 38: the mount used `auto_unmount`, so after an OOM kill the mount point was a
    /// plain directory again, and its user's next write landed in plaintext on the disk
    /// underneath. A dead daemon's mount now stays and answers ENOTCONN until the next mount.
    @Test("kill -9 leaves no writable plain directory at the mount point: writes fail, nothing lands underneath")
    func aKilledDaemonLeavesNoPlainDirectory() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        #expect(vault.shell("echo kept > f").succeeded)
        try vault.killDaemon()
        // Tries for two seconds, the time the auto-unmount helper took to clear the dead mount.
        for attempt in 0 ..< 20 {
            let write = vault.shell("echo plaintext > written-after-the-death-\(attempt)")
            #expect(!write.succeeded, "attempt \(attempt): a write after the daemon died succeeded")
            #expect(TestVault.isMounted(vault.mountpoint), "attempt \(attempt): the dead mount went away")
            usleep(100_000)
        }
        #expect(CommandRunner.run("fusermount3", ["-u", vault.mountpoint]).succeeded)
        let underneath = try FileManager.default.contentsOfDirectory(atPath: vault.mountpoint)
        #expect(underneath.isEmpty, "written to the directory under the mount: \(underneath)")
        try vault.mount()
        #expect(vault.shell("cat f").stdout == "kept\n", "\(vault.daemonOutput)")
    }

    @Test("a mount right after a crash clears the dead mount and comes up")
    func mountRightAfterACrash() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        #expect(vault.shell("echo kept > f && ls > /dev/null").succeeded)
        try vault.killDaemon()
        try vault.mount()
        #expect(vault.shell("cat f").stdout == "kept\n", "\(vault.daemonOutput)")
        #expect(TestVault.isMounted(vault.mountpoint))
    }
}

extension TestVault {
    /// Starts `protfsctl passwd` (old, then new passcode on its standard input) and kills
    /// the daemon `seconds` later, as a crash would.
    func protfsctlPasswdThenKill(old: String, new: String, after seconds: Double) throws {
        let passwd = Process()
        passwd.executableURL = URL(fileURLWithPath: Self.protfsctl)
        passwd.arguments = ["passwd", mountpoint]
        let input = Pipe()
        passwd.standardInput = input
        passwd.standardOutput = FileHandle.nullDevice
        passwd.standardError = FileHandle.nullDevice
        try passwd.run()
        input.fileHandleForWriting.write(Data("\(old)\n\(new)\n".utf8))
        try input.fileHandleForWriting.close()
        usleep(useconds_t(seconds * 1_000_000))
        try killDaemon()
        let deadline = Date().addingTimeInterval(30)
        while passwd.isRunning && Date() < deadline { usleep(10_000) }
        if passwd.isRunning { passwd.terminate() }
        passwd.waitUntilExit()
    }
}
