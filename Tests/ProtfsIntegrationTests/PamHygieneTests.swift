import Foundation
import Glibc
import Testing

/// What pam_protfs leaves behind inside a login: no password anywhere outside the socket,
/// and no memory error or leak (valgrind through pamtester, every stage).
@Suite(.enabled(if: geteuid() == 0, "accounts, /etc/pam.d and mounts for others need root"))
struct PamHygieneTests {
    @Test("the password is never in any process's argv or environment during the unlocks, nor in a log line or the sessions' file")
    func thePasswordStaysInPam() throws {
        let secret = "pfpam secret " + (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let user = try TestUser.withPassword("pfpam-hygiene", secret)
        defer { user.retire() }
        let vault = try TestVault(initialize: false)
        try (secret + "\n").write(toFile: vault.passcodeFile, atomically: true, encoding: .utf8)
        try vault.initialize()
        try vault.mount(for: user)
        let stack = try PamStack(configuration: ["* *"])
        let stop = stack.root + "/stop-scanning"
        let scanner = Process()
        scanner.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        scanner.arguments = ["python3", CommandRunner.scriptPath("pam/scan-proc-for-secret.py"), stop]
        let input = Pipe(), output = Pipe()
        scanner.standardInput = input
        scanner.standardOutput = output
        try scanner.run()
        defer { if scanner.isRunning { kill(scanner.processIdentifier, SIGKILL) } }
        input.fileHandleForWriting.write(Data((secret + "\n").utf8))
        try input.fileHandleForWriting.close()
        for _ in 0..<3 {
            let login = stack.pamtester(user, ["authenticate", "open_session", "close_session"], input: secret + "\n")
            #expect(login.succeeded, "\(login.stderr)")
        }
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        scanner.waitUntilExit()
        #expect(scanner.terminationStatus == 0 && report.hasPrefix("scans "), "\(report)")
        let unlocks = stack.moduleLog.filter { $0.contains("\(vault.mountpoint): unlocked for pfpam-hygiene") }
        let locks = stack.moduleLog.filter { $0.contains("\(vault.mountpoint): locked at the last logout for pfpam-hygiene") }
        #expect(unlocks.count == 3 && locks.count == 3, "three logins, each unlocking and locking: \(stack.wholeLog)")
        #expect(!stack.wholeLog.contains(secret) && !vault.daemonOutput.contains(secret))
        let shares = try String(contentsOfFile: "/run/protfs/sessions/\(user.uid)", encoding: .utf8)
        #expect(shares.isEmpty, "the sessions' file holds locks, never bytes")
    }

    @Test("valgrind finds no error and no leak in the module through pamtester: auth, session and password")
    func valgrindClean() throws {
        let user = try TestUser.withPassword("pfpam-valgrind", TestVault.passcode)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        let stack = try PamStack(configuration: ["* *", "pfpam-valgrind /nonexistent/vault"])
        let valgrind = ["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                        "--show-leak-kinds=definite,indirect", "--track-fds=no"]
        let login = stack.pamtester(user, ["authenticate", "open_session", "close_session"], input: TestVault.passcode + "\n",
                                    wrapper: valgrind, timeout: 300)
        #expect(login.succeeded, "\(login.status): \(login.stderr)")
        // As root: pam_unix under valgrind cannot update /etc/shadow for a real uid other
        // than root's, so the password stage runs the module's path for an unknown old password.
        let newPassword = "Zebra quartz 7 lanterns"
        let change = stack.pamtester(user, ["chauthtok"], input: "\(newPassword)\n\(newPassword)\n", wrapper: valgrind, timeout: 300)
        #expect(change.succeeded, "\(change.status): \(change.stderr)")
        // The module did its work under valgrind, so what valgrind saw is the module's real path.
        let log = stack.moduleLog
        #expect(log.contains { $0.contains("unlocked for pfpam-valgrind") } && log.contains { $0.contains("locked at the last logout") }
                && log.contains { $0.contains("the vault passcodes of pfpam-valgrind are unchanged: the old password is unknown") }
                && log.contains { $0.contains("/nonexistent/vault") }, "\(stack.wholeLog)")
    }

    @Test("hostile replies from a daemon the user runs (garbage, bad lengths, lies, forged log lines, escapes, silence): the login succeeds, valgrind clean, only printable bytes logged",
          arguments: ["garbage", "huge", "zero", "truncated", "lies", "forged", "escapes", "silent", "close"])
    func hostileReplies(_ mode: String) throws {
        let user = try TestUser.withPassword("pfpam-hostile-\(mode.prefix(6))", TestVault.passcode)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        // The real daemon's socket steps aside; the user's own "daemon" answers in its place,
        // where a user's daemon serves (/run/user/UID/protfs), as the user.
        let aside = try SocketAside(vault)
        let runtime = try user.makeRuntimeSocketDirectory()
        defer { try? FileManager.default.removeItem(atPath: "/run/user/\(user.uid)") }
        let daemon = try StandInDaemon(socket: runtime + "/" + vault.controlSocketName, mode: mode, as: user)
        let stack = try PamStack(configuration: ["* *"], options: ["timeout=2"])
        let login = stack.pamtester(user, ["authenticate"], input: TestVault.passcode + "\n",
                                    wrapper: ["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
                                              "--errors-for-leak-kinds=definite,indirect", "--track-fds=no"], timeout: 300)
        #expect(login.succeeded, "\(login.status): \(login.stderr)")
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): not ") }, "the module says why: \(stack.wholeLog)")
        #expect(!stack.wholeLog.split(separator: "\n").contains { $0.hasPrefix("FORGED") }, "a line forged: \(stack.wholeLog)")
        aside.restore()
        #expect(try vault.state() == .beforeFirstUnlock)
        withExtendedLifetime(daemon) {}
    }
}
