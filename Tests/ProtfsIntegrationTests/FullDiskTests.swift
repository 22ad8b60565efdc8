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
        let script = """
            set -u
            cd '\(vault.mountpoint)'
            head -c 1000000 /dev/urandom > kept
            cp kept '\(vault.root.path)/reference'
            head -c 2500000 /dev/urandom > big 2>/dev/null
            head -c 8000000 /dev/zero > filler 2>/dev/null
            # On a full disk: overwrite the middle of 'kept' and try to grow it.
            python3 - <<'PY'
            import os
            fd = os.open("kept", os.O_WRONLY)
            for offset in range(300000, 350000, 5000):
                try:
                    os.pwrite(fd, os.urandom(5000), offset)
                except OSError:
                    pass
            try:
                os.pwrite(fd, b"grow" * 50000, 1000000)
            except OSError:
                pass
            os.close(fd)
            data = open("kept", "rb").read()   # EIO here would be a torn chunk
            ref = open("\(vault.root.path)/reference", "rb").read()
            assert data[:300000 - 4096] == ref[:300000 - 4096], "bytes before the overwrite changed"
            assert data[350000 + 4096:1000000] == ref[350000 + 4096:], "bytes after the overwrite changed"
            open("big", "rb").read(); open("filler", "rb").read()
            PY
            """
        let result = CommandRunner.shell(script, timeout: 120)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
        let fill = CommandRunner.shell("head -c 8000000 /dev/zero > '\(vault.path("more"))'")
        #expect(fill.stderr.contains("No space left on device"), "\(fill.stderr)")
    }
}
