import Foundation
import Testing

/// The daemon's request loop (`RequestLoop`): one thread reads requests and handles the
/// small ones itself, so a request that blocks in the backing filesystem must not stop the
/// others from being served (the deputy takes over reading).
@Suite("Request loop", .serialized)
struct RequestLoopTests {
    @Test("a write held up by the backing filesystem does not hold up lookups and listings")
    func heldWriteDoesNotBlockOthers() throws {
        let vault = try TestVault(initialize: false)
        let image = vault.root.path + "/backing.img"
        let fs = vault.root.path + "/fs"
        try FileManager.default.createDirectory(atPath: fs, withIntermediateDirectories: true)
        guard CommandRunner.run("truncate", ["-s", "64M", image]).succeeded,
              CommandRunner.run("mkfs.ext4", ["-q", "-F", image]).succeeded else {
            Issue.record("cannot make an ext4 image")
            return
        }
        let mounted = CommandRunner.run("/bin/mount", ["-o", "loop", image, fs])
        guard mounted.succeeded else {
            Issue.record("cannot loop-mount an ext4 image: \(mounted.stderr)")
            return
        }
        defer { _ = CommandRunner.run("/bin/umount", ["-l", fs]) }
        vault.backing = fs + "/backing"
        try vault.initialize()
        try vault.mount()
        defer { try? vault.unmount() }
        // Runs first: a backing store left frozen would hold up the daemon's exit.
        defer { _ = CommandRunner.run("fsfreeze", ["-u", fs]) }
        let result = CommandRunner.script("requests/held-write.py", [vault.mountpoint, fs], timeout: 90)
        #expect(result.stdout == "held ['held'] written True\n", "\(result.stdout)\(result.stderr)")
    }
}
