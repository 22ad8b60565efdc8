import Foundation
import Glibc
import Testing

/// pam_protfs through real PAM stacks (`PamStack`: pam_unix, pam_deny, pam_permit, then the
/// module, as Debian stacks them), real accounts and `pamtester`, against real mounts owned by
/// those accounts (docs/LOGIN.md).
@Suite(.enabled(if: geteuid() == 0, "accounts, /etc/pam.d and mounts for others need root"))
struct PamModuleTests {
    static let password = TestVault.passcode

    @Test("authentication with the right password unlocks the owner's vault, and stops a lock in its grace")
    func theRightPasswordUnlocks() throws {
        let alice = try TestUser.withPassword("pfpam-auth", Self.password)
        defer { alice.retire() }
        let vault = try TestVault()
        try vault.mount(for: alice, options: ["grace=600"])
        let stack = try PamStack(configuration: ["* *"])
        let login = stack.pamtester(alice, ["authenticate"], input: Self.password + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        #expect(try vault.state() == .unlocked)
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): unlocked for pfpam-auth") }, "\(stack.wholeLog)")
        // The lock screen: the password typed during the grace stops the lock.
        try vault.lock()
        #expect(try vault.state() == .locking)
        #expect(stack.pamtester(alice, ["authenticate"], input: Self.password + "\n").succeeded)
        #expect(try vault.state() == .unlocked)
    }

    @Test("a wrong password fails authentication before the module: the vault stays locked and no attempt counts")
    func aWrongPasswordTouchesNothing() throws {
        let user = try TestUser.withPassword("pfpam-wrong", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        let stack = try PamStack(configuration: ["pfpam-wrong \(vault.mountpoint)"])
        let login = stack.pamtester(user, ["authenticate"], input: "not the password\n")
        #expect(login.status != 0 && login.stderr.contains("Authentication failure"), "\(login.status): \(login.stderr)")
        let status = try vault.status()
        #expect(status["state"] as? String == "beforeFirstUnlock")
        #expect(status["failedAttempts"] as? Int == 0, "\(status)")
        #expect(stack.moduleLog.isEmpty, "\(stack.moduleLog)")
    }

    @Test("a vault whose passcode differs from the password stays locked, and the login still succeeds")
    func aDifferentPasscodeLeavesTheLoginAlone() throws {
        let user = try TestUser.withPassword("pfpam-differ", "a different login password 42")
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        let stack = try PamStack(configuration: ["* *"])
        let login = stack.pamtester(user, ["authenticate", "open_session", "close_session"],
                                    input: "a different login password 42\n")
        #expect(login.succeeded, "\(login.stderr)")
        let status = try vault.status()
        #expect(status["state"] as? String == "beforeFirstUnlock")
        #expect(status["failedAttempts"] as? Int == 1, "a passcode that differs counts as any wrong one: \(status)")
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): not unlocked for pfpam-differ: ") && $0.contains("exit code 3") },
                "\(stack.wholeLog)")
    }

    @Test("passwd changes the vault's passcode with the login password: the old one is refused after, the new one unlocks")
    func passwdChangesThePasscode() throws {
        let user = try TestUser.withPassword("pfpam-passwd", Self.password)
        defer { user.retire() }
        let newPassword = "Zebra quartz 7 lanterns"
        let vault = try TestVault()
        try vault.mount(for: user)
        let stack = try PamStack(configuration: ["pfpam-passwd \(vault.mountpoint)"])
        // As passwd(1) runs for the user: real uid the user's, so pam_unix asks for the old one.
        let change = stack.pamtester(user, ["chauthtok"], input: "\(Self.password)\n\(newPassword)\n\(newPassword)\n",
                                     realUser: user)
        #expect(change.succeeded, "\(change.stderr)")
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): passcode changed with the login password for pfpam-passwd") },
                "\(stack.wholeLog)")
        let old = vault.protfsctl(["unlock", vault.mountpoint], stdin: Self.password + "\n")
        #expect(old.status == 3, "the old passcode: \(old.status) \(old.stderr)")
        let login = stack.pamtester(user, ["authenticate"], input: newPassword + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        #expect(try vault.state() == .unlocked, "the new password unlocks at login")
    }

    @Test("a stopped daemon, then a dead one: authentication still succeeds within the module's bound, and says why")
    func aStoppedDaemonNeverBlocksTheLogin() throws {
        let user = try TestUser.withPassword("pfpam-stopped", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        let pid = try #require(vault.daemon?.processIdentifier)
        let stack = try PamStack(configuration: ["pfpam-stopped \(vault.mountpoint)"], options: ["timeout=2"])
        kill(pid, SIGSTOP)
        // The runner's deadline (60 s) only keeps a hang from hanging the tests; the
        // module's own bound is what lets the login through.
        let stopped = stack.pamtester(user, ["authenticate"], input: Self.password + "\n")
        kill(pid, SIGCONT)
        #expect(stopped.succeeded, "\(stopped.status): \(stopped.stderr)")
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): ") && $0.contains("did not answer in time") },
                "\(stack.wholeLog)")
        kill(pid, SIGKILL)
        let dead = stack.pamtester(user, ["authenticate"], input: Self.password + "\n")
        #expect(dead.succeeded, "\(dead.stderr)")
        // Dead: its socket refuses, or auto_unmount has already taken the mount away.
        #expect(stack.moduleLog.contains { $0.contains("no protfs daemon answers") || $0.contains("not a protfs mount now") },
                "\(stack.wholeLog)")
    }

    @Test("a daemon found in /run/user/UID/protfs (where a user's own daemon serves) is asked too; an impostor there gets nothing")
    func theUsersRuntimeDirectory() throws {
        let user = try TestUser.withPassword("pfpam-runtime", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        // Non-root FUSE mounts are closed on this machine (/dev/fuse is root's), so the
        // root daemon's socket is moved where a user's daemon would put it: it keeps serving.
        let name = vault.controlSocketName
        let runtime = "/run/user/\(user.uid)/protfs"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: "/run/user/\(user.uid)") }
        #expect(rename("/run/protfs/" + name, runtime + "/" + name) == 0)
        let stack = try PamStack(configuration: ["* *"])
        let login = stack.pamtester(user, ["authenticate"], input: Self.password + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): unlocked for pfpam-runtime") }, "\(stack.wholeLog)")

        // An impostor: a socket the user owns there, served by another uid, gets no password.
        #expect(rename(runtime + "/" + name, "/run/protfs/" + name) == 0)
        try vault.lock(now: true)
        let other = try TestUser.named("pfpam-impostor")
        // The real socket steps aside (and comes back for the unmount).
        let held = "/run/protfs/" + name + ".held"
        #expect(rename("/run/protfs/" + name, held) == 0)
        defer { rename(held, "/run/protfs/" + name) }
        let capture = stack.root + "/impostor.bytes"
        let impostor = Process()
        impostor.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        impostor.arguments = ["--reuid=\(other.uid)", "--regid=\(other.gid)", "--clear-groups", "/usr/bin/python3",
                              CommandRunner.scriptPath("pam/impostor-daemon.py"), runtime + "/" + name, capture]
        chmod(runtime, 0o777)
        chmod(stack.root, 0o777)
        try impostor.run()
        defer { kill(impostor.processIdentifier, SIGKILL) }
        for _ in 0..<200 where access(runtime + "/" + name, F_OK) != 0 { usleep(50_000) }
        #expect(chown(runtime + "/" + name, user.uid, user.gid) == 0)
        let fooled = stack.pamtester(user, ["authenticate"], input: Self.password + "\n")
        #expect(fooled.succeeded, "\(fooled.stderr)")
        #expect(stack.moduleLog.contains { $0.contains("is served by a process of uid \(other.uid), not one this user may trust") },
                "\(stack.wholeLog)")
        let received = (try? Data(contentsOf: URL(fileURLWithPath: capture))) ?? Data()
        #expect(!received.contains(Data(Self.password.utf8)) && received.isEmpty, "the impostor got \(received.count) bytes")
    }

    @Test("another user's login never touches this vault, even with the same password")
    func anotherUsersLoginLeavesTheVaultAlone() throws {
        let owner = try TestUser.withPassword("pfpam-owner", Self.password)
        defer { owner.retire() }
        let other = try TestUser.withPassword("pfpam-other", Self.password)
        defer { other.retire() }
        let vault = try TestVault()
        try vault.mount(for: owner)
        let stack = try PamStack(configuration: ["* *"])
        let login = stack.pamtester(other, ["authenticate", "open_session"], input: Self.password + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        var status = try vault.status()
        #expect(status["state"] as? String == "beforeFirstUnlock" && status["failedAttempts"] as? Int == 0, "\(status)")
        try vault.unlock()
        let logout = stack.pamtester(other, ["close_session"])
        #expect(logout.succeeded, "\(logout.stderr)")
        status = try vault.status()
        #expect(status["state"] as? String == "unlocked", "the other user's last logout: \(status)")
        #expect(stack.moduleLog.allSatisfy { !$0.contains(vault.mountpoint) }, "\(stack.moduleLog)")
    }

    @Test("a `* /MOUNTPOINT` line is that vault for its owner: other users' logins send it nothing and burn none of its attempts")
    func aStarLineIsForTheOwnerOnly() throws {
        let owner = try TestUser.withPassword("pfpam-starowner", Self.password)
        defer { owner.retire() }
        let other = try TestUser.withPassword("pfpam-starother", "another login password 9")
        defer { other.retire() }
        let vault = try TestVault()
        try vault.mount(for: owner)
        let stack = try PamStack(configuration: ["* \(vault.mountpoint)"])
        for _ in 0..<3 {
            let login = stack.pamtester(other, ["authenticate"], input: "another login password 9\n")
            #expect(login.succeeded, "\(login.stderr)")
        }
        let status = try vault.status()
        #expect(status["state"] as? String == "beforeFirstUnlock" && status["failedAttempts"] as? Int == 0, "\(status)")
        let login = stack.pamtester(owner, ["authenticate"], input: Self.password + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        #expect(try vault.state() == .unlocked, "the owner's password still unlocks: \(stack.wholeLog)")
    }
}
