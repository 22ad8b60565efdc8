import Foundation
import Glibc
import Testing
import Synchronization

/// `protfsctl` against real daemons (docs/CONTROL.md): status, watch, the peer tiers, wrong
/// passcodes and their delays, passwd and keybag rollback, classes and backing paths.
@Suite("protfsctl", .serialized)
struct ProtfsctlTests {
    static let nobody = "65534"

    /// `protfsctl` as uid and gid 65534 with no supplementary groups.
    private func protfsctlAsNobody(_ arguments: [String], stdin: String? = nil) -> CommandResult {
        CommandRunner.run("/usr/bin/setpriv", ["--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups",
                                               TestVault.protfsctl] + arguments, stdin: stdin)
    }

    private func unlock(_ vault: TestVault, passcode: String) -> CommandResult {
        vault.protfsctl(["unlock", vault.mountpoint], stdin: passcode + "\n")
    }

    private func statusObject(_ vault: TestVault) throws -> [String: Any] {
        let result = vault.protfsctl(["status", vault.mountpoint, "--json"])
        guard result.succeeded, result.stdout.hasSuffix("}\n"), result.stdout.split(separator: "\n").count == 1,
              let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("status --json (exit \(result.status)): \(result.stdout)\(result.stderr)")
        }
        return object
    }

    private static func canonical(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }

    @Test("status --json has the documented fields; status for people says the same")
    func statusSchema() throws {
        let vault = try TestVault()
        try vault.mount(options: ["grace=30", "autolock=0"])
        defer { try? vault.unmount() }
        var object = try statusObject(vault)
        #expect(Set(object.keys) == ["state", "graceSecondsLeft", "pid", "mountpoint", "backing", "passcodeSet", "grace",
                                     "autolock", "failedAttempts", "retryAfterSeconds", "items", "owner", "callerMayLock",
                                     "cipher", "passcodeCountedByTPM", "tpmLockoutRetryAfterSeconds", "requestsServed"])
        #expect(object["passcodeCountedByTPM"] as? Bool == false && object["tpmLockoutRetryAfterSeconds"] is NSNull)
        #expect((object["owner"] as? NSNumber)?.uint32Value == getuid(), "the user who mounted")
        #expect(object["callerMayLock"] as? Bool == true)
        #expect(object["state"] as? String == "unlocked")
        #expect((object["items"] as? NSNumber)?.intValue == 0)  // the caller's keychain items (docs/CONTROL.md)
        #expect(object["graceSecondsLeft"] is NSNull)
        #expect((object["pid"] as? NSNumber)?.int32Value == vault.daemon?.processIdentifier)
        #expect(object["mountpoint"] as? String == Self.canonical(vault.mountpoint))
        #expect(object["backing"] as? String == Self.canonical(vault.backing))
        #expect(object["passcodeSet"] as? Bool == true)
        #expect((object["grace"] as? NSNumber)?.intValue == 30)
        #expect((object["autolock"] as? NSNumber)?.intValue == 0)
        #expect((object["failedAttempts"] as? NSNumber)?.intValue == 0)
        #expect(object["retryAfterSeconds"] is NSNull)

        try vault.lock()
        object = try statusObject(vault)
        #expect(object["state"] as? String == "locking")
        let left = (object["graceSecondsLeft"] as? NSNumber)?.intValue ?? -1
        #expect((1...30).contains(left), "graceSecondsLeft \(left)")
        let human = vault.protfsctl(["status", vault.mountpoint])
        #expect(human.succeeded)
        for fragment in ["state:", "locking", "grace left", Self.canonical(vault.backing), "30 s"] {
            #expect(human.stdout.contains(fragment), "\(fragment) in \(human.stdout)")
        }
    }

    @Test("watch: the state line, then willBecomeUnavailable, didBecomeUnavailable, didBecomeAvailable")
    func watchEvents() throws {
        let vault = try TestVault()
        try vault.mount(options: ["grace=3"])
        defer { try? vault.unmount() }
        let watch = try LineStream(TestVault.protfsctl, ["watch", vault.mountpoint])
        defer { watch.stop() }
        #expect(watch.waitForLines(1) == ["state unlocked"])
        try vault.lock()
        try vault.waitForState(.locked)
        #expect(unlock(vault, passcode: TestVault.passcode).succeeded)
        #expect(watch.waitForLines(4) == ["state unlocked", "willBecomeUnavailable", "didBecomeUnavailable", "didBecomeAvailable"])
        // An unlock during the grace cancels the lock: no didBecomeUnavailable.
        try vault.lock()
        #expect(unlock(vault, passcode: TestVault.passcode).succeeded)
        #expect(watch.waitForLines(6).suffix(2) == ["willBecomeUnavailable", "didBecomeAvailable"])
        usleep(3_500_000)
        #expect(watch.lines.count == 6, "\(watch.lines)")
        try vault.unmount()
        #expect(watch.waitForExit() == 0)
    }

    @Test("another user may ask for the status, but not lock, unlock, passwd or backing-path")
    func peerTiers() throws {
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        #expect(vault.shell("echo x > f && chmod 644 f").succeeded)
        let status = protfsctlAsNobody(["status", vault.mountpoint, "--json"])
        #expect(status.succeeded, "\(status.stderr)")
        #expect(status.stdout.contains(#""state":"unlocked""#))
        let refusals = [
            protfsctlAsNobody(["lock", vault.mountpoint]),
            protfsctlAsNobody(["lock", "--now", vault.mountpoint]),
            protfsctlAsNobody(["unlock", vault.mountpoint], stdin: TestVault.passcode + "\n"),
            protfsctlAsNobody(["passwd", vault.mountpoint], stdin: TestVault.passcode + "\nother\n"),
            protfsctlAsNobody(["backing-path", vault.path("f")]),
        ]
        for refused in refusals {
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("not allowed"), "\(refused.stderr)")
        }
        #expect(try vault.state() == .unlocked)
        #expect(protfsctlAsNobody(["class", "get", vault.path("f")]).stdout == "completeUntilFirstUserAuthentication\n")
    }

    @Test("a wrong passcode exits 3 and changes nothing")
    func wrongPasscode() throws {
        let vault = try TestVault()
        try vault.mount(in: .locked)
        defer { try? vault.unmount() }
        let wrong = unlock(vault, passcode: "not it")
        #expect(wrong.status == 3)
        #expect(wrong.stderr.contains("wrong passcode"), "\(wrong.stderr)")
        #expect(try vault.state() == .locked)
        #expect((try statusObject(vault)["failedAttempts"] as? NSNumber)?.intValue == 1)
        #expect(unlock(vault, passcode: TestVault.passcode).succeeded)
        #expect((try statusObject(vault)["failedAttempts"] as? NSNumber)?.intValue == 0)
    }

    @Test("after the 5th failure every attempt exits 4 until the delay ends, across a daemon restart")
    func delayAfterFailures() throws {
        let vault = try TestVault()
        // 60 s x 0.25: long enough to outlast a restart, short enough to wait out.
        vault.daemonEnvironment = ["PROTFS_TEST_DELAY_SCALE": "0.25"]
        try vault.mount(in: .locked)
        defer { try? vault.unmount() }
        for attempt in 1...5 {
            let wrong = unlock(vault, passcode: "guess \(attempt)")
            #expect(wrong.status == 3, "attempt \(attempt): \(wrong.stderr)")
        }
        let refused = unlock(vault, passcode: TestVault.passcode)
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("retry in"), "\(refused.stderr)")
        let status = try statusObject(vault)
        #expect((status["failedAttempts"] as? NSNumber)?.intValue == 5)  // a refused attempt does not count
        #expect(((status["retryAfterSeconds"] as? NSNumber)?.intValue ?? 0) > 0)

        try vault.unmount()
        try vault.mount(passcode: false)
        let afterRestart = unlock(vault, passcode: TestVault.passcode)
        #expect(afterRestart.status == 4, "\(afterRestart.stderr)")
        #expect(try vault.state() == .beforeFirstUnlock)

        let deadline = Date().addingTimeInterval(30)
        while !(try statusObject(vault)["retryAfterSeconds"] is NSNull) && Date() < deadline { usleep(250_000) }
        let accepted = unlock(vault, passcode: TestVault.passcode)
        #expect(accepted.succeeded, "\(accepted.stderr)")
        #expect((try statusObject(vault)["failedAttempts"] as? NSNumber)?.intValue == 0)
    }

    @Test("passwd: the new passcode unlocks, the old fails; an older keybag copied back is refused at mount")
    func passwdAndRollback() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let keybag = vault.backing + "/protfs.keybag"
        let saved = vault.root.appendingPathComponent("keybag.before").path
        try FileManager.default.copyItem(atPath: keybag, toPath: saved)
        let newPasscode = "a new passcode"
        let passwd = vault.protfsctl(["passwd", vault.mountpoint], stdin: "\(TestVault.passcode)\n\(newPasscode)\n")
        #expect(passwd.succeeded, "\(passwd.stderr)")
        #expect(try vault.state() == .unlocked)  // passwd does not change the state
        try vault.lock(now: true)
        #expect(unlock(vault, passcode: TestVault.passcode).status == 3)
        #expect(unlock(vault, passcode: newPasscode).succeeded)

        try vault.unmount()
        try (newPasscode + "\n").write(toFile: vault.passcodeFile, atomically: true, encoding: .utf8)
        let current = vault.root.appendingPathComponent("keybag.current").path
        try FileManager.default.copyItem(atPath: keybag, toPath: current)
        try FileManager.default.removeItem(atPath: keybag)
        try FileManager.default.copyItem(atPath: saved, toPath: keybag)
        do {
            try vault.mount()
            Issue.record("a keybag from before passwd was accepted")
        } catch {
            #expect("\(error)".contains("older than the recorded generation"), "\(error)")
        }
        #expect(!TestVault.isMounted(vault.mountpoint))
        try FileManager.default.removeItem(atPath: keybag)
        try FileManager.default.copyItem(atPath: current, toPath: keybag)
        try vault.mount()
        #expect(try vault.state() == .unlocked)
    }

    @Test("class get and set, with every spelling, several paths and -R")
    func classes() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.shell("mkdir -p d/e && echo 1 > d/f && echo 2 > d/e/g && ln -s f d/link && mkfifo d/pipe").succeeded)
        func get(_ paths: String...) -> CommandResult { vault.protfsctl(["class", "get"] + paths.map(vault.path)) }
        func set(_ arguments: String...) -> CommandResult {
            vault.protfsctl(["class", "set"] + arguments.map { $0.hasPrefix("d") ? vault.path($0) : $0 })
        }
        #expect(get("d/f").stdout == "completeUntilFirstUserAuthentication\n")
        for (spelling, name) in [("none", "none"), ("B", "completeUnlessOpen"), ("NSFileProtectionComplete", "complete")] {
            #expect(set(spelling, "d/f").succeeded)
            #expect(get("d/f").stdout == name + "\n")
        }
        #expect(get("d/f", "d").stdout == "complete\t\(vault.path("d/f"))\ncompleteUntilFirstUserAuthentication\t\(vault.path("d"))\n")
        let bad = set("Z", "d/f")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("unknown class 'Z'"))
        let missing = get("d/nothing")
        #expect(missing.status == 6)
        let noClass = get("d/pipe")
        #expect(noClass.status == 1)
        #expect(noClass.stderr.contains("has no protection class"))

        let recursive = set("-R", "none", "d")
        #expect(recursive.succeeded, "\(recursive.stderr)")
        #expect(get("d", "d/e", "d/f", "d/e/g").stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("none\t") })
        #expect(vault.protectionClass(of: "d/link") == "none")  // through the link: its target

        // Locked, files cannot leave `complete` (EACCES) but directories can change: each
        // failure is reported, the rest is done, and the exit code is 1.
        #expect(set("-R", "complete", "d").succeeded)
        try vault.lock(now: true)
        let partial = set("-R", "completeUnlessOpen", "d")
        #expect(partial.status == 1)
        #expect(partial.stderr.contains(vault.path("d/f")) && partial.stderr.contains(vault.path("d/e/g")), "\(partial.stderr)")
        #expect(get("d").stdout == "completeUnlessOpen\n")
        #expect(get("d/e").stdout == "completeUnlessOpen\n")
        #expect(get("d/f").stdout == "complete\n")
    }

    @Test("backing-path names the backing object; no daemon is exit 6")
    func backingPath() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.shell("mkdir sub && echo content > sub/file && ln -s file sub/link").succeeded)
        for (relative, isLink) in [("sub/file", false), ("sub/link", true)] {
            let result = vault.protfsctl(["backing-path", vault.path(relative)])
            #expect(result.succeeded, "\(result.stderr)")
            let stored = result.stdout.trimmingCharacters(in: .newlines)
            // Two encrypted components; neither is the plaintext name (a random base64url name
            // may well contain "sub" somewhere).
            let components = stored.split(separator: "/")
            #expect(components.count == 2 && !components.contains("sub") && !components.contains("file"), "\(stored)")
            var st = stat()
            #expect(lstat(vault.backing + "/" + stored, &st) == 0)
            #expect(st.st_mode & S_IFMT == (isLink ? S_IFLNK : S_IFREG), "\(relative)")
        }
        #expect(vault.protfsctl(["backing-path", vault.mountpoint]).stdout == ".\n")
        let missing = vault.protfsctl(["backing-path", vault.path("sub/none")])
        #expect(missing.status == 6, "\(missing.stderr)")
        let outside = vault.protfsctl(["backing-path", vault.root.path])
        #expect(outside.status == 6)
        #expect(outside.stderr.contains("not on a protfs mount"))

        try vault.unmount()
        let gone = vault.protfsctl(["status", vault.mountpoint])
        #expect(gone.status == 6)
        #expect(gone.stderr.contains("no protfs daemon serves \(Self.canonical(vault.mountpoint))"), "\(gone.stderr)")
    }
}

/// A long-running command whose standard output is read line by line as it comes.
final class LineStream: Sendable {
    private let process: Process
    private let output = Mutex("")

    init(_ executable: String, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                self?.output.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }
        try process.run()
    }

    var lines: [String] { output.withLock { $0.split(separator: "\n").map(String.init) } }

    /// The lines so far once there are `count` of them, or when 15 s have passed.
    func waitForLines(_ count: Int, seconds: TimeInterval = 15) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        while lines.count < count && Date() < deadline { usleep(10_000) }
        return lines
    }

    /// The exit status once the command ended by itself (-1 if it had to be killed).
    func waitForExit(seconds: TimeInterval = 15) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            stop()
            return -1
        }
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
