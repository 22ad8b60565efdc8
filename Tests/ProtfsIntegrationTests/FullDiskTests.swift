import Foundation
import Testing

/// A full backing filesystem: ENOSPC reaches the writer, and what was written before stays
/// intact (space is reserved before a chunk is rewritten, so no chunk is torn).
@Suite("A full disk", .serialized)
struct FullDiskTests {
    @Test("ENOSPC on a small backing filesystem tears nothing already written")
    func enospcTearsNothing() throws {
        let vault = try TestVault(initialize: false)
        let small = vault.root.path + "/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mounted = CommandRunner.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", small])
        guard mounted.succeeded else {
            Issue.record("cannot mount a small tmpfs: \(mounted.stderr)")
            return
        }
        defer { _ = CommandRunner.run("/bin/umount", ["-l", small]) }
        vault.backing = small + "/backing"
        try vault.initialize()
        try vault.mount()
        defer { try? vault.unmount() }
        let result = CommandRunner.script("mount/full-disk-tears-nothing.sh", [vault.mountpoint, vault.root.path], timeout: 120)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
        let fill = CommandRunner.shell("head -c 8000000 /dev/zero > '\(vault.path("more"))'")
        #expect(fill.stderr.contains("No space left on device"), "\(fill.stderr)")
    }
}
