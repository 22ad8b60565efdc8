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
            let writer = CommandRunner.script("write-and-kill.py", [vault.mountpoint, String(vault.daemonPID), work, String(round)], timeout: 120)
            #expect(writer.succeeded && !writer.stdout.contains("PROBLEM"), "round \(round): \(writer.stdout)\(writer.stderr)")
            try vault.reapKilledDaemon()
            try vault.mount()
            let check = CommandRunner.script("verify-after-crash.py", [vault.mountpoint, work, String(round)], timeout: 120)
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

    @Test("a mount right after a crash waits for the dead daemon's auto-unmount helper, not refused by cached attributes")
    func mountRightAfterACrash() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        #expect(vault.shell("echo kept > f && ls > /dev/null").succeeded)
        // The helper is held until a second after the crash: meanwhile the dead mount stays,
        // and the kernel still answers a stat of its root from its attribute cache.
        let helper = try autoUnmountHelper(of: vault)
        kill(helper, SIGSTOP)
        defer { kill(helper, SIGCONT) }
        try vault.killDaemon()
        let release = Thread {
            usleep(1_000_000)
            kill(helper, SIGCONT)
        }
        release.start()
        try vault.mount()
        #expect(vault.shell("cat f").stdout == "kept\n", "\(vault.daemonOutput)")
    }

    func autoUnmountHelper(of vault: TestVault) throws -> pid_t {
        let found = CommandRunner.run("pgrep", ["-P", String(vault.daemonPID), "fusermount3"]).stdout
        guard let pid = pid_t(found.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("no auto-unmount helper beside the daemon: '\(found)'")
        }
        return pid
    }

    @Test("a mount right after a crash keeps its mount when the dead daemon's auto-unmount helper is slow")
    func slowAutoUnmountHelper() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        #expect(vault.shell("echo kept > f").succeeded)
        // The crashed daemon's fusermount3 helper is held for a second inside its unmount,
        // after it has found the dead mount: the window a mount must not fall into.
        let helper = try autoUnmountHelper(of: vault)
        let tracer = Process()
        tracer.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        tracer.arguments = ["-p", String(helper), "-e", "trace=umount2", "-e", "inject=umount2:delay_enter=1000000", "-o", "/dev/null"]
        try tracer.run()
        defer { if tracer.isRunning { tracer.terminate() } }
        usleep(500_000)
        try vault.killDaemon()
        try vault.mount()
        usleep(2_000_000)
        #expect(TestVault.isMounted(vault.mountpoint), "the new mount was taken away: \(vault.daemonOutput)")
        #expect(vault.shell("cat f").stdout == "kept\n")
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
