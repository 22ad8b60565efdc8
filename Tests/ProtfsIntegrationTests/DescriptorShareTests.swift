import Foundation
import Testing

/// One local user on an `allow_other` mount holding every file open that its own limits
/// allow: each open file holds two descriptors in the daemon (its node's and its contents'),
/// and before the per-uid shares (`DescriptorShares`) this brought the daemon to its limit,
/// so that another user's `open`, root's and root's `protfsctl unlock` all failed with
/// `EMFILE` until the attacker let go. Now the attacker is refused its share's worth on, and
/// everybody else goes on.
@Suite("Per-uid descriptor shares through the kernel, as two real users")
struct DescriptorShareTests {
    @Test("a user holding every open it can is refused; another user and root create, read, lock, unlock, passwd")
    func attackerCannotStarveOthers() throws {
        let attacker = try TestUser.named("pffd-attacker")
        let victim = try TestUser.named("pffd-victim")
        let vault = try TestVault()
        // The daemon's shares are cut from its descriptor limit, whatever it is: with 1,200
        // (not the machine's 20,000) a few hundred opens run today's daemon out, not 10,000.
        try vault.mount(options: ["allow_other"], launcher: ["/usr/bin/prlimit", "--nofile=1200:1200", "--"])
        defer { try? vault.unmount() }
        let result = CommandRunner.script("mount/others-beside-a-descriptor-hog.sh",
                                          [vault.mountpoint, attacker.name, victim.name, TestVault.protfsctl, vault.passcodeFile],
                                          timeout: 300)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput)")
        #expect(vault.daemon?.isRunning == true, "the daemon is gone: \(vault.daemonOutput)")
    }
}
