import Foundation
import Testing

/// The daemon's request loop (`RequestLoop`): one thread reads requests and handles the
/// small ones itself, so a request that blocks in the backing filesystem must not stop the
/// others from being served (the deputy takes over reading).
@Suite("Request loop", .serialized)
struct RequestLoopTests {
    /// A write stuck on a frozen backing filesystem (`fsfreeze`), with lookups and a
    /// listing sent while it is stuck. A safety timer thaws the filesystem after 30 s, so a
    /// loop that left the other requests waiting shows as "not held" instead of a hang.
    static let heldWrite = #"""
        import os, subprocess, sys, threading, time
        MNT, FS = sys.argv[1], sys.argv[2]
        path = os.path.join(MNT, "held")
        with open(path, "wb") as f:
            f.write(b"x" * 4096)
        fd = os.open(path, os.O_WRONLY)
        subprocess.run(["fsfreeze", "-f", FS], check=True)
        safety = threading.Timer(30, lambda: subprocess.run(["fsfreeze", "-u", FS]))
        safety.start()
        written = threading.Event()
        def write():
            os.pwrite(fd, b"y" * 4096, 0)
            written.set()
        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.5)  # for the write to reach the daemon
        held_before = not written.is_set()
        for i in range(20):
            try:
                os.stat(os.path.join(MNT, "absent-%d" % i))
            except FileNotFoundError:
                pass
        names = sorted(os.listdir(MNT))
        held_after = not written.is_set()
        subprocess.run(["fsfreeze", "-u", FS], check=True)
        safety.cancel()
        writer.join(30)
        os.close(fd)
        print("held" if held_before and held_after else "not held", names,
              "written" if written.is_set() else "stuck", open(path, "rb").read() == b"y" * 4096)
        """#

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
        let result = CommandRunner.python(Self.heldWrite, [vault.mountpoint, fs], timeout: 90)
        #expect(result.stdout == "held ['held'] written True\n", "\(result.stdout)\(result.stderr)")
    }
}
