import Foundation
import Testing

/// The systemd units in `systemd/` and the fstab route (docs/SYSTEMD.md): what systemd itself
/// says of the units, and what `mount.protfs` makes of systemd's fstab options.
@Suite("systemd units")
struct SystemdUnitTests {
    @Test("systemd-analyze verify finds nothing to say about the units; protfs@.service's exposure is at most 4.0")
    func unitsVerify() {
        let built = URL(fileURLWithPath: TestVault.protfs).deletingLastPathComponent().path
        let result = CommandRunner.script("commands/verify-units.sh", [built], timeout: 120)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("units verified") && result.stdout.contains("a broken unit fails")
                && result.stdout.contains("exposure"), "\(result.stdout)")
    }

    @Test("protfs@.service fails for a vault with no settings file, restarts a daemon that dies, bounds its memory")
    func failsRestartsBounds() throws {
        let unit = try String(contentsOf: CommandRunner.packageRoot.appendingPathComponent("systemd/protfs@.service"), encoding: .utf8)
        let lines = Set(unit.split(separator: "\n").map(String.init))
        // A Condition skips the unit in silence (a mistyped name looks fine); an Assert fails it.
        #expect(lines.contains("AssertPathExists=/etc/protfs/vaults/%i.conf") && !unit.contains("ConditionPathExists"))
        #expect(lines.contains("Restart=on-failure") && lines.contains { $0.hasPrefix("MemoryMax=") })
    }

    /// Issue 38: an OOM-killed daemon stayed dead until someone noticed.
    @Test("protfs@.service restarts a daemon that died")
    func vaultUnitRestarts() throws {
        let unit = try String(contentsOf: CommandRunner.packageRoot.appendingPathComponent("systemd/protfs@.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init)
        #expect(lines.contains("Restart=on-failure"), "\(unit)")
        #expect(lines.contains { $0.hasPrefix("RestartSec=") }, "\(unit)")
    }

    @Test("an fstab line with x-systemd.automount and nofail reaches protfs mount without them")
    func fstabOptions() {
        let helper = CommandRunner.packageRoot.path + "/mount-helpers/mount.protfs"
        let result = CommandRunner.run("/bin/sh", [helper, "/srv/vault", "/home/a/Vault", "-fv", "-o",
                                                   "x-systemd.automount,x-systemd.idle-timeout=300,nofail,_netdev,grace=10"])
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stderr.contains("mount /srv/vault /home/a/Vault -o grace=10\n"), "\(result.stderr)")
        #expect(!result.stderr.contains("x-systemd") && !result.stderr.contains("nofail"), "\(result.stderr)")
    }
}
