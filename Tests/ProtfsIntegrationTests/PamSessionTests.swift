import Foundation
import Glibc
import Testing

/// pam_protfs's sessions through real PAM stacks: each session holds a reference in its PAM
/// data, so a session killed without closing, or one whose opening failed later in the stack,
/// gives its share back by itself, and the last logout still locks (docs/LOGIN.md).
@Suite(.enabled(if: geteuid() == 0, "accounts, /etc/pam.d and mounts for others need root"))
struct PamSessionTests {
    static let password = TestVault.passcode

    @Test("a session held open keeps the vault unlocked through another login's logout; its own close is the last, and locks now")
    func theLastLogoutLocks() throws {
        let user = try TestUser.withPassword("pfpam-sessions", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user, options: ["grace=600"])
        let stack = try PamStack(configuration: ["* *"], holdsSessions: true)
        let first = try stack.holdSession(user, ["authenticate", "open_session", "close_session"], input: Self.password + "\n")
        #expect(try vault.state() == .unlocked)
        let second = stack.pamtester(user, ["authenticate", "open_session", "close_session"], input: Self.password + "\n")
        #expect(second.succeeded, "\(second.stderr)")
        #expect(try vault.state() == .unlocked, "the first session is still open")
        #expect(first.release() == 0)
        #expect(try vault.state() == .locked, "the last close locks with no grace, though the mount's is 600 s")
        #expect(stack.moduleLog.filter { $0.contains("\(vault.mountpoint): locked at the last logout for pfpam-sessions") }.count == 1,
                "\(stack.wholeLog)")
    }

    @Test("a session killed with SIGKILL gives its share back: the next login's logout is the last, and locks")
    func aKilledSessionGivesItsShareBack() throws {
        let user = try TestUser.withPassword("pfpam-killed", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        let stack = try PamStack(configuration: ["* *"], holdsSessions: true)
        let killed = try stack.holdSession(user, ["authenticate", "open_session", "close_session"], input: Self.password + "\n")
        #expect(try vault.state() == .unlocked)
        let pid = try #require(killed.pamtesterPid)
        #expect(kill(pid, SIGKILL) == 0)
        killed.release()
        #expect(try vault.state() == .unlocked, "nothing closed the killed session")
        let login = stack.pamtester(user, ["authenticate", "open_session", "close_session"], input: Self.password + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        #expect(try vault.state() == .locked, "the killed session counts no more: \(stack.wholeLog)")
    }

    @Test("a session whose opening a later module fails counts nothing: the next login's logout locks")
    func aFailedOpeningCountsNothing() throws {
        let user = try TestUser.withPassword("pfpam-failed", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        let failing = try PamStack(configuration: ["* *"], sessionTail: ["session\trequired\t\t\tpam_deny.so"])
        let refused = failing.pamtester(user, ["authenticate", "open_session", "close_session"], input: Self.password + "\n")
        #expect(!refused.succeeded, "pam_deny fails the opening: \(refused.stderr)")
        #expect(try vault.state() == .unlocked)
        let stack = try PamStack(configuration: ["* *"])
        let login = stack.pamtester(user, ["authenticate", "open_session", "close_session"], input: Self.password + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        #expect(try vault.state() == .locked, "the failed session counts no more: \(failing.wholeLog)\(stack.wholeLog)")
    }

    @Test("a daemon whose status does not answer in time still gets the lock at the last logout, from the user's uid, so that it locks only the user's own vault")
    func aSlowStatusStillLocks() throws {
        let user = try TestUser.withPassword("pfpam-slow", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        // The real daemon's socket steps aside; one run by root answers in its place, as a
        // daemon whose status waits on another user's item work: never.
        let aside = try SocketAside(vault)
        let stack = try PamStack(configuration: ["* *"], options: ["timeout=2"])
        let capture = stack.root + "/requests"
        let daemon = try StandInDaemon(socket: vault.systemControlSocket, mode: "slow-status", capture: capture)
        let session = stack.pamtester(user, ["open_session", "close_session"])
        #expect(session.succeeded, "\(session.stderr)")
        let requests = (try? String(contentsOfFile: capture, encoding: .utf8)) ?? ""
        #expect(requests == "{\"request\":\"lock\",\"mode\":\"now\"} from uid \(user.uid)\n", "\(requests)")
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): locked at the last logout for pfpam-slow") },
                "\(stack.wholeLog)")
        withExtendedLifetime(daemon) { aside.restore() }
    }

    @Test("lock_on_logout=no leaves the vault unlocked at the last logout")
    func lockOnLogoutNo() throws {
        let user = try TestUser.withPassword("pfpam-stay", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        let stack = try PamStack(configuration: ["* *"], options: ["lock_on_logout=no"])
        let login = stack.pamtester(user, ["authenticate", "open_session", "close_session"], input: Self.password + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        #expect(try vault.state() == .unlocked)
    }
}
