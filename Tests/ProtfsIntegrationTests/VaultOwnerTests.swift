import Foundation
import Glibc
import Testing

/// `-o owner=`: root mounts a user's vault; the owner and root may lock, unlock and change
/// the passcode, anyone else only reads the status, which tells them the owner but neither
/// the backing directory nor the daemon's pid (docs/CONTROL.md, "Who may do what").
@Suite(.enabled(if: geteuid() == 0, "accounts and mounts for others need root"))
struct VaultOwnerTests {
    private func protfsctl(as user: TestUser, _ arguments: [String], stdin: String? = nil) -> CommandResult {
        CommandRunner.run("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups",
                                               TestVault.protfsctl] + arguments, stdin: stdin, timeout: 30)
    }

    private func json(_ result: CommandResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
    }

    @Test("the owner locks and unlocks a vault root mounted; another user sees the owner and state, nothing more")
    func theOwnerDrivesTheVault() throws {
        let owner = try TestUser.named("pfpam-vowner")
        let other = try TestUser.named("pfpam-vother")
        let vault = try TestVault()
        try vault.mount(passcode: true, options: ["owner=\(owner.name)", "allow_other"])
        let lock = protfsctl(as: owner, ["lock", "--now", vault.mountpoint])
        #expect(lock.succeeded, "\(lock.stderr)")
        #expect(try vault.state() == .locked)
        let refused = protfsctl(as: other, ["unlock", vault.mountpoint], stdin: TestVault.passcode + "\n")
        #expect(refused.status == 1 && refused.stderr.contains("not allowed: only the owner of \(vault.mountpoint) (uid \(owner.uid))"),
                "\(refused.stderr)")
        let unlock = protfsctl(as: owner, ["unlock", vault.mountpoint], stdin: TestVault.passcode + "\n")
        #expect(unlock.succeeded, "\(unlock.stderr)")
        #expect(try vault.state() == .unlocked)

        let seenByOther = try json(protfsctl(as: other, ["status", "--json", vault.mountpoint]))
        #expect(seenByOther["owner"] as? Int == Int(owner.uid) && seenByOther["state"] as? String == "unlocked", "\(seenByOther)")
        #expect(seenByOther["backing"] is NSNull && seenByOther["pid"] is NSNull, "\(seenByOther)")
        let text = protfsctl(as: other, ["status", vault.mountpoint]).stdout
        #expect(text.contains("\(owner.name) (uid \(owner.uid))") && !text.contains(vault.backing) && !text.contains("daemon pid"), "\(text)")
        for seenBy in [protfsctl(as: owner, ["status", "--json", vault.mountpoint]), vault.protfsctl(["status", "--json", vault.mountpoint])] {
            let status = try json(seenBy)
            #expect(status["backing"] as? String == vault.backing && status["pid"] as? Int == Int(vault.daemon?.processIdentifier ?? 0),
                    "\(status)")
        }
    }

    @Test("owner= names an existing user or a uid; only root may name another; the mount helper passes it on")
    func ownerOptionChecks() throws {
        let vault = try TestVault()
        let unknown = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-o", "owner=pfpam-nobody-here"])
        #expect(unknown.status == 2 && unknown.stderr.contains("option 'owner' names no user"), "\(unknown.stderr)")
        let user = try TestUser.named("pfpam-vother")
        let asUser = CommandRunner.run("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", TestVault.protfs,
                                                            "mount", vault.backing, vault.mountpoint, "-o", "owner=0"])
        #expect(asUser.status == 2 && asUser.stderr.contains("only root may mount a vault for another owner"), "\(asUser.stderr)")
        let helper = CommandRunner.run("/bin/sh", [CommandRunner.packageRoot.appendingPathComponent("mount-helpers/mount.protfs").path,
                                                   vault.backing, vault.mountpoint, "-fv", "-o", "rw,owner=\(user.name),nofail"])
        #expect(helper.succeeded && helper.stderr.contains("-o owner=\(user.name)"), "\(helper.stderr)")
    }
}
