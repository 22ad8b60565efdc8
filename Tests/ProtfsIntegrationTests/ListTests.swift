import Foundation
import Glibc
import Testing

/// `protfsctl list` (docs/OPERATIONS.md): every protfs mount with what its daemon lets the
/// caller see, from root's side and from a real user's, with three mounts of two owners.
@Suite("protfsctl list", .serialized)
struct ListTests {
    /// The user's runtime directory where `protfs mount` puts the socket of a user's daemon
    /// (`/run/user/UID`, made for the test when logind has not).
    private static func runtimeDirectory(of user: TestUser) throws -> (path: String, made: Bool) {
        let path = "/run/user/\(user.uid)"
        if FileManager.default.fileExists(atPath: path) { return (path, false) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(chown(path, user.uid, user.gid) == 0 && chmod(path, 0o700) == 0)
        return (path, true)
    }

    private static func list(_ launcher: [String] = [], environment: [String: String]? = nil) throws -> [[String: Any]] {
        let command = launcher + [TestVault.protfsctl, "list", "--json"]
        let result = CommandRunner.run(command[0], Array(command.dropFirst()), environment: environment, timeout: 30)
        guard result.succeeded, let entries = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        else { throw TestFailure("list --json (exit \(result.status)): \(result.stdout)\(result.stderr)") }
        return entries
    }

    private static func entry(_ entries: [[String: Any]], _ vault: TestVault) throws -> [String: Any] {
        let mountpoint = URL(fileURLWithPath: vault.mountpoint).resolvingSymlinksInPath().path
        return try #require(entries.first { $0["mountpoint"] as? String == mountpoint }, "\(mountpoint) not listed: \(entries)")
    }

    @Test("three mounts of root and a user: each sees every mount, its own lockable, backing where the daemon tells")
    func threeMountsTwoOwners() throws {
        let user = try TestUser.named("pfops-lister")
        let runtime = try Self.runtimeDirectory(of: user)
        defer { if runtime.made { try? FileManager.default.removeItem(atPath: runtime.path) } }
        let first = try TestVault(), second = try TestVault(), users = try TestVault()
        try first.mount()
        defer { try? first.unmount() }
        try second.mount(passcode: false)
        defer { try? second.unmount() }
        // /dev/fuse is root's alone on this machine: the user may open it for the test (an ACL).
        #expect(CommandRunner.run("setfacl", ["-m", "u:\(user.name):rw", "/dev/fuse"]).succeeded)
        defer { _ = CommandRunner.run("setfacl", ["-x", "u:\(user.name)", "/dev/fuse"]) }
        #expect(CommandRunner.run("chown", ["-R", "\(user.uid):\(user.gid)", users.root.path]).succeeded)
        users.daemonEnvironment["XDG_RUNTIME_DIR"] = runtime.path
        let asUser = ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups"]
        try users.mount(launcher: asUser, asker: asUser)
        defer { try? users.unmount() }

        let rootsView = try Self.list()
        var entry = try Self.entry(rootsView, first)
        #expect(entry["state"] as? String == "unlocked")
        #expect((entry["owner"] as? NSNumber)?.intValue == 0 && entry["ownerName"] as? String == "root")
        #expect(entry["callerMayLock"] as? Bool == true)
        #expect(entry["backing"] as? String == URL(fileURLWithPath: first.backing).resolvingSymlinksInPath().path)
        entry = try Self.entry(rootsView, second)
        #expect(entry["state"] as? String == "beforeFirstUnlock")
        entry = try Self.entry(rootsView, users)
        #expect((entry["owner"] as? NSNumber)?.uint32Value == user.uid && entry["ownerName"] as? String == user.name)
        #expect(entry["state"] as? String == "unlocked", "root reaches a user's daemon in /run/user/UID: \(entry)")
        #expect(entry["callerMayLock"] as? Bool == true)

        let usersView = try Self.list(asUser, environment: ["XDG_RUNTIME_DIR": runtime.path])
        entry = try Self.entry(usersView, users)
        #expect(entry["callerMayLock"] as? Bool == true && entry["state"] as? String == "unlocked")
        for vault in [first, second] {
            entry = try Self.entry(usersView, vault)
            #expect(entry["callerMayLock"] as? Bool == false, "\(entry)")
            #expect((entry["owner"] as? NSNumber)?.intValue == 0)
        }
        // Every entry has every key, null where it does not apply.
        let keys: Set = ["mountpoint", "backing", "owner", "ownerName", "state", "graceSecondsLeft", "grace", "callerMayLock",
                         "pid", "error"]
        for entry in rootsView + usersView { #expect(Set(entry.keys) == keys) }

        let text = CommandRunner.run(TestVault.protfsctl, ["list"])
        #expect(text.succeeded && text.stdout.hasPrefix("MOUNTPOINT"), "\(text.stderr)")
        #expect(text.stdout.contains(user.name))
    }

    @Test("in a mount namespace with no protfs mount: an empty list, exit 0")
    func emptyList() throws {
        // A private mount namespace whose /proc/self/mountinfo has no protfs mount: the
        // other tests' mounts are unmounted there.
        let result = CommandRunner.script("commands/list-without-mounts.sh", [TestVault.protfsctl], timeout: 30)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout == "[]\nMOUNTPOINT  STATE  OWNER  MAY LOCK  BACKING\n", "\(result.stdout)")
    }
}
