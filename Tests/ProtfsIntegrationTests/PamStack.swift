import Foundation
import Glibc

/// `pam_protfs.so` built from the repository's source with its own Makefile, once per test
/// process, into `.build/pam/` (built beside, then renamed into place, so that two test
/// processes never load a half-written module).
enum PamModule {
    private static let built: Result<String, TestFailure> = {
        let directory = CommandRunner.packageRoot.appendingPathComponent(".build/pam").path
        let scratch = directory + "/building-\(getpid())"
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let make = CommandRunner.run("make", ["-s", "-C", CommandRunner.packageRoot.appendingPathComponent("pam").path,
                                              "OUT=\(scratch)"], timeout: 180)
        guard make.succeeded else { return .failure(TestFailure("make pam_protfs.so failed: \(make.stdout)\(make.stderr)")) }
        let module = directory + "/pam_protfs.so"
        guard rename(scratch + "/pam_protfs.so", module) == 0 else { return .failure(TestFailure("cannot move \(module) into place")) }
        return .success(module)
    }()

    static func path() throws -> String { try built.get() }
}

/// A PAM service in /etc/pam.d/ stacked as Debian's common-* files are, with the freshly
/// built pam_protfs last in each stage (`Scripts/pam/pam-service.template`), its own
/// configuration file, and its own syslog (`Scripts/pam/with-private-syslog.sh`); removed at
/// deinit.
final class PamStack {
    let service = "pfpam-test-\(UUID().uuidString.prefix(8).lowercased())"
    let root: String
    var configuration: String { root + "/pam.conf" }
    var logPath: String { root + "/syslog" }

    /// `lines`: the configuration (`USER MOUNTPOINT`); `options`: the module's, besides
    /// `config=`; `sessionTail`: session lines after the module's (`session required pam_deny.so`);
    /// `holdsSessions`: a last session line that lets `holdSession` keep a session open.
    init(configuration lines: [String], options: [String] = [], sessionTail: [String] = [], holdsSessions: Bool = false) throws {
        root = NSTemporaryDirectory() + "protfs-pam-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try (lines.joined(separator: "\n") + "\n").write(toFile: configuration, atomically: true, encoding: .utf8)
        chmod(configuration, 0o644)
        let template = try String(contentsOfFile: CommandRunner.scriptPath("pam/pam-service.template"), encoding: .utf8)
        let filled = template.replacingOccurrences(of: "@MODULE@", with: try PamModule.path())
            .replacingOccurrences(of: "@OPTIONS@", with: (["config=\(configuration)"] + options).joined(separator: " "))
            .replacingOccurrences(of: "@SESSION_TAIL@", with: (sessionTail + (holdsSessions ? [holdingLine] : [])).joined(separator: "\n"))
        try filled.write(toFile: "/etc/pam.d/" + service, atomically: true, encoding: .utf8)
    }

    /// `pamtester SERVICE USER OPERATION...` with `input` (the passwords, a line each) on
    /// standard input; `realUser` runs it as a set-uid root program run by that user runs.
    /// `wrapper` goes before pamtester (valgrind, say).
    @discardableResult
    func pamtester(_ user: TestUser, _ operations: [String], input: String = "", realUser: TestUser? = nil,
                   wrapper: [String] = [], timeout: TimeInterval = 60) -> CommandResult {
        let asUser = realUser.map { ["python3", CommandRunner.scriptPath("pam/as-user-with-root.py"), String($0.uid)] } ?? []
        return CommandRunner.run("/bin/bash", pamtesterArguments(user, operations, prefix: asUser + wrapper), stdin: input,
                                 timeout: timeout)
    }

    private func pamtesterArguments(_ user: TestUser, _ operations: [String], prefix: [String] = []) -> [String] {
        [CommandRunner.scriptPath("pam/with-private-syslog.sh"), logPath] + prefix + ["pamtester", "-v", service, user.name]
            + operations
    }

    /// The session line that keeps the next session opened open (`Scripts/pam/hold-pam-session.sh`).
    private var holdingLine: String {
        "session\toptional\t\t\tpam_exec.so quiet type=open_session /bin/sh \(CommandRunner.scriptPath("pam/hold-pam-session.sh")) \(root)"
    }

    /// One login whose session stays open, as a login's does while the user works: `pamtester`
    /// runs `operations` and waits in `open_session` until `HeldSession.release()`. Needs a
    /// stack made with `holdsSessions`.
    func holdSession(_ user: TestUser, _ operations: [String], input: String) throws -> HeldSession {
        let flag = root + "/hold"
        _ = FileManager.default.createFile(atPath: flag, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = pamtesterArguments(user, operations)
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let held = HeldSession(process: process, holding: root + "/holding")
        for _ in 0..<600 where held.pamtesterPid == nil && process.isRunning { usleep(50_000) }
        guard held.pamtesterPid != nil else {
            held.release()
            throw TestFailure("the session was not held open (is the stack made with holdsSessions?)")
        }
        return held
    }

    /// What the module logged (its lines only).
    var moduleLog: [String] {
        let all = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return all.split(separator: "\n").map(String.init).filter { $0.contains("pam_protfs(") }
    }

    var wholeLog: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    deinit {
        unlink("/etc/pam.d/" + service)
        try? FileManager.default.removeItem(atPath: root)
    }
}

/// A login waiting in its open session (`PamStack.holdSession`).
final class HeldSession {
    let process: Process
    private let holding: String

    init(process: Process, holding: String) {
        self.process = process
        self.holding = holding
    }

    /// The pamtester process holding the session (what `kill -9` hits), once it waits.
    var pamtesterPid: pid_t? {
        (try? String(contentsOfFile: holding, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Lets the session go on (its remaining operations run), and waits for its end.
    @discardableResult
    func release(timeout: TimeInterval = 60) -> Int32 {
        unlink(holding)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { if process.isRunning { release() } }
}

/// A real account with a password, for pam_unix; no session of it is held.
extension TestUser {
    static func withPassword(_ name: String, _ password: String) throws -> TestUser {
        let user = try named(name)
        let set = CommandRunner.run("/usr/sbin/chpasswd", [], stdin: "\(name):\(password)\n")
        guard set.succeeded else { throw TestFailure("chpasswd \(name): \(set.stderr)") }
        user.forgetSessions()
        return user
    }

    /// The file whose locks are this uid's sessions for pam_protfs (a uid may be reused by a
    /// later account).
    func forgetSessions() { unlink("/run/protfs/sessions/\(uid)") }

    /// After the test: the sessions' file goes, and the password no longer opens the account
    /// (TestUser keeps its accounts; one with a known password must not stay usable).
    func retire() {
        forgetSessions()
        CommandRunner.run("/usr/bin/passwd", ["--lock", name])
    }
}

extension TestVault {
    /// Mounts as root for `owner` (`-o owner=`, `allow_other`), in `beforeFirstUnlock`.
    func mount(for owner: TestUser, options: [String] = []) throws {
        try mount(passcode: false, options: ["owner=\(owner.name)", "allow_other"] + options)
    }

    /// `protfsctl status --json`, as root.
    func status() throws -> [String: Any] {
        let result = protfsctl(["status", mountpoint, "--json"])
        guard result.succeeded, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else { throw TestFailure("protfsctl status failed (\(result.status)): \(result.stderr)") }
        return object
    }
}
