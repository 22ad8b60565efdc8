import Foundation
import Testing

/// `protfsctl follow` against systemd-logind and a screen saver, both mocked by
/// python3-dbusmock on private buses (this machine runs no logind; the mock speaks logind's
/// documented API): the screen lock starts the grace, sleep waits for `locked` before the
/// inhibitor goes, a restarted bus is reached again, and follow ends with the mount.
@Suite("follow the screen lock and sleep", .serialized)
struct FollowTests {
    /// Mounts an unlocked vault with a 2 s grace and runs one scenario of follow-logind.py.
    private func run(_ scenario: String, _ extra: [String] = []) throws {
        let vault = try TestVault()
        try vault.mount(options: ["passcode_file=\(vault.passcodeFile)", "grace=2"])
        defer { try? vault.unmount() }
        let scratch = vault.root.appendingPathComponent("buses")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let result = CommandRunner.run("/usr/bin/python3", [CommandRunner.scriptPath("follow/follow-logind.py"), TestVault.protfsctl,
                                                            vault.mountpoint, vault.passcodeFile, scratch.path, scenario] + extra,
                                       timeout: 150)
        #expect(result.succeeded, "\(scenario) (exit \(result.status)):\n\(result.stdout)\(result.stderr)")
    }

    @Test("Lock, LockedHint and ActiveChanged(true) start the grace; Unlock unlocks nothing")
    func screenLock() throws { try run("screen-lock") }

    @Test("PrepareForSleep(true) locks before the inhibitor goes; a new one after waking")
    func sleepLocksFirst() throws { try run("sleep") }

    @Test("a restarted system bus and logind are reached again, and the screen lock still locks")
    func busRestart() throws { try run("restart") }

    @Test("without --session: the session XDG_SESSION_ID names, else the user's display session", arguments: ["xdg-session-id", "display-session"])
    func sessionFound(how: String) throws { try run(how) }

    @Test("logind's signals from another sender, or with the wrong arguments, change nothing")
    func impostor() throws { try run("impostor") }

    /// The review's attack: on a bus with the system bus' policy, another user forges
    /// PrepareForSleep, Session.Lock, LockedHint, ActiveChanged and the driver's
    /// NameOwnerChanged, each sent to follow alone and broadcast.
    @Test("another user's forged signals, unicast or broadcast, neither lock nor release the inhibitor")
    func spoofed() throws {
        let mallory = try TestUser.named("pffollow-spoofer")
        try run("spoofed", ["\(mallory.uid):\(mallory.gid)"])
    }

    @Test("follow run by a user who may not lock the vault locks nothing, says so, and lets the machine sleep")
    func otherUser() throws {
        let eve = try TestUser.named("pffollow-eve")
        try run("other-user", ["\(eve.uid):\(eve.gid)"])
    }

    @Test("a daemon that never answers status still gets the screen lock's and the sleep's lock")
    func lockWithoutStatus() throws { try run("slow-status") }

    @Test("follow exits 0 when the mount goes away")
    func mountGone() throws { try run("gone") }
}
