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
/// built pam_protfs last in each stage (`Scripts/pam-service.template`), its own
/// configuration file, and its own syslog (`Scripts/with-private-syslog.sh`); removed at
/// deinit.
final class PamStack {
    let service = "pfpam-test-\(UUID().uuidString.prefix(8).lowercased())"
    let root: String
    var configuration: String { root + "/pam.conf" }
    var logPath: String { root + "/syslog" }

    /// `lines`: the configuration (`USER MOUNTPOINT`); `options`: the module's, besides
    /// `config=`.
    init(configuration lines: [String], options: [String] = []) throws {
        root = NSTemporaryDirectory() + "protfs-pam-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try (lines.joined(separator: "\n") + "\n").write(toFile: configuration, atomically: true, encoding: .utf8)
        chmod(configuration, 0o644)
        let template = try String(contentsOfFile: CommandRunner.scriptPath("pam-service.template"), encoding: .utf8)
        let filled = template.replacingOccurrences(of: "@MODULE@", with: try PamModule.path())
            .replacingOccurrences(of: "@OPTIONS@", with: (["config=\(configuration)"] + options).joined(separator: " "))
        try filled.write(toFile: "/etc/pam.d/" + service, atomically: true, encoding: .utf8)
    }

    /// `pamtester SERVICE USER OPERATION...` with `input` (the passwords, a line each) on
    /// standard input; `realUser` runs it as a set-uid root program run by that user runs.
    /// `wrapper` goes before pamtester (valgrind, say).
    @discardableResult
    func pamtester(_ user: TestUser, _ operations: [String], input: String = "", realUser: TestUser? = nil,
                   wrapper: [String] = [], timeout: TimeInterval = 60) -> CommandResult {
        let asUser = realUser.map { ["python3", CommandRunner.scriptPath("as-user-with-root.py"), String($0.uid)] } ?? []
        return CommandRunner.run("/bin/bash", [CommandRunner.scriptPath("with-private-syslog.sh"), logPath] + asUser + wrapper
                                 + ["pamtester", "-v", service, user.name] + operations, stdin: input, timeout: timeout)
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

/// A real account with a password, for pam_unix; its session count starts at zero.
extension TestUser {
    static func withPassword(_ name: String, _ password: String) throws -> TestUser {
        let user = try named(name)
        let set = CommandRunner.run("/usr/sbin/chpasswd", [], stdin: "\(name):\(password)\n")
        guard set.succeeded else { throw TestFailure("chpasswd \(name): \(set.stderr)") }
        user.forgetSessions()
        return user
    }

    /// pam_protfs's count of this uid's sessions (a uid may be reused by a later account).
    func forgetSessions() { unlink("/run/protfs/sessions/\(uid)") }

    /// After the test: the session count goes, and the password no longer opens the account
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
