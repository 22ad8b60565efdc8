import Foundation
import Testing

/// Objects planted in the backing directory while the vault is unmounted: symlinks in place
/// of files and directories (absolute and `..`-relative, pointing outside), a FIFO and a
/// device node in place of files, a hard link to a file outside, a symlink in place of a
/// directory's metadata and of the out-of-line link store, a FIFO in place of a long name's
/// sidecar, and entries whose encrypted names say `.`, `..` or `a/b`. Through the mount,
/// none may lead outside, hang a worker or be opened raw; nothing outside may change; the
/// daemon keeps answering.
@Suite("Hostile backing directory", .serialized)
struct HostileBackingTests {
    /// What is made on the mount before the plant, by role; `longName` is stored long.
    static let longName = String(repeating: "l", count: 250)

    @Test("planted symlinks, FIFOs, device nodes, hard links and dot names lead nowhere outside")
    func plantedObjects() throws {
        let vault = try TestVault()
        let outside = vault.root.path + "/outside"
        try vault.mount()
        defer { try? vault.unmount() }
        let made = CommandRunner.script("hostile-backing/make-plant-sites.sh", [vault.mountpoint, Self.longName])
        try #require(made.succeeded, "\(made.stderr)")
        let names = ["symfile", "relsym", "fifo", "device", "hardlink", "symdir", "metadir", Self.longName]
        let backing = Dictionary(uniqueKeysWithValues: zip(names, try vault.backingPaths(of: names)))
        let keys = try VaultKeys(of: vault)
        let dotNames = try ["..", ".", "a/b", "nul\u{0}inside"].map { try keys.storedName(Array($0.utf8)) }
        try vault.unmount()

        let outsideSetup = CommandRunner.script("hostile-backing/make-outside-tree.sh", [outside])
        try #require(outsideSetup.succeeded, "\(outsideSetup.stderr)")
        let before = try snapshot(outside)
        let plant = CommandRunner.script("hostile-backing/plant-hostile-objects.sh", [vault.backing, outside] + names.map { backing[$0]! } + dotNames)
        try #require(plant.succeeded && plant.stdout == "fifo\ncharacter special file\nsymbolic link\n",
                     "planting: \(plant.stdout)\(plant.stderr) in \(backing)")

        try vault.mount()
        let result = CommandRunner.script("requests/hostile-backing-objects.py", [vault.mountpoint, Self.longName], timeout: 300)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput)")
        #expect(vault.daemon?.isRunning == true, "the daemon is gone: \(vault.daemonOutput)")
        try vault.unmount()
        #expect(try snapshot(outside) == before, "something outside the backing directory changed")
    }

    /// docs/FORMAT.md: a sealed target is bound to its symlink. Copied over another symlink's
    /// (in the same directory, another one, out of line) or carried by an entry renamed onto
    /// another symlink's name, it is damage: EIO, never followed.
    @Test("a symlink target copied from another symlink in the backing directory is EIO, not followed")
    func copiedSymlinkTargets() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let made = CommandRunner.script("hostile-backing/symlink-copied-targets.sh", ["make", vault.mountpoint])
        try #require(made.succeeded, "\(made.stdout)\(made.stderr)")
        let backing = try vault.backingPaths(of: ["evil", "victim", "d/victim", "longevil", "longvictim", "renamed", "swapped"])
        try vault.unmount()
        let plant = CommandRunner.script("hostile-backing/symlink-copied-targets.sh", ["plant", vault.backing] + backing)
        try #require(plant.succeeded, "\(plant.stdout)\(plant.stderr)")
        try vault.mount()
        let check = CommandRunner.script("hostile-backing/symlink-copied-targets.sh", ["check", vault.mountpoint])
        #expect(check.succeeded, "\(check.stdout)\(check.stderr)\ndaemon: \(vault.daemonOutput)")
        #expect(vault.daemonOutput.contains("symlink target of"), "the damage is logged: \(vault.daemonOutput)")
        #expect(vault.daemon?.isRunning == true, "the daemon is gone: \(vault.daemonOutput)")
    }

    @Test("a FIFO, device node or symlink in place of the keybag or the root's metadata: a clear refusal, no hang",
          arguments: ["protfs.keybag", "protfs.dir"])
    func plantedDaemonFiles(_ name: String) throws {
        let vault = try TestVault()
        for (kind, command) in [("FIFO", "mkfifo \(name)"), ("device node", "mknod \(name) c 1 5"), ("symlink", "ln -s /etc/passwd \(name)")] {
            let plant = CommandRunner.shell("cd '\(vault.backing)' && mv \(name) saved && \(command)")
            try #require(plant.succeeded, "\(plant.stderr)")
            let mount = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-o",
                                                             "device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile)"],
                                          timeout: 30)
            #expect(mount.status == 8 && mount.stderr.contains(name == "protfs.keybag" ? "keybag" : name),
                    "\(kind) as \(name): exit \(mount.status): \(mount.stderr)")
            #expect(!TestVault.isMounted(vault.mountpoint))
            CommandRunner.shell("cd '\(vault.backing)' && rm -f \(name) && mv saved \(name)")
        }
        try vault.mount()
        #expect(FileManager.default.fileExists(atPath: vault.mountpoint + "/."), "the restored vault mounts")
        try vault.unmount()
    }

    @Test("a backing filesystem without user.* xattrs: init and mount say so")
    func filesystemWithoutUserXattrs() throws {
        let vault = try TestVault()
        // ramfs has no xattrs at all (tmpfs has user.* ones since Linux 6.6).
        let ramfs = vault.root.path + "/ramfs"
        let mounted = CommandRunner.shell("mkdir -p '\(ramfs)' && mount -t ramfs -o mode=0755 ramfs '\(ramfs)'")
        try #require(mounted.succeeded, "\(mounted.stderr)")
        defer { CommandRunner.run("umount", [ramfs], timeout: 20) }
        try #require(!CommandRunner.run("setfattr", ["-n", "user.probe", "-v", "1", ramfs]).succeeded, "ramfs took a user xattr")

        let initialize = CommandRunner.run(TestVault.protfs, ["init", ramfs + "/vault", "--device-key", vault.deviceKey,
                                                              "--passcode-file", vault.passcodeFile, "--kdf", "interactive"])
        #expect(initialize.status == 1 && initialize.stderr.contains("does not support user.* extended attributes"),
                "init: exit \(initialize.status): \(initialize.stderr)")

        // A vault made elsewhere and copied without its xattrs.
        let copied = CommandRunner.shell("mkdir -m 0700 '\(ramfs)/copy' && cp '\(vault.backing)'/protfs.* '\(ramfs)/copy/'")
        try #require(copied.succeeded, "\(copied.stderr)")
        let mount = CommandRunner.run(TestVault.protfs, ["mount", ramfs + "/copy", vault.mountpoint, "-o", "device_key=\(vault.deviceKey)"],
                                      timeout: 30)
        #expect(mount.status == 1 && mount.stderr.contains("does not support user.* extended attributes"),
                "mount: exit \(mount.status): \(mount.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
    }

    /// Modes, owners, sizes, mtimes, contents and listings of everything under `directory`.
    func snapshot(_ directory: String) throws -> String {
        let result = CommandRunner.script("hostile-backing/snapshot-tree.sh", [directory])
        guard result.succeeded else { throw TestFailure("cannot snapshot \(directory): \(result.stderr)") }
        return result.stdout
    }
}
