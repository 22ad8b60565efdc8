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
        let made = vault.shell("""
            set -e
            for f in symfile relsym fifo device hardlink plain; do printf 'inside %s' "$f" > "$f"; done
            mkdir symdir metadir; printf 'x' > metadir/kept
            printf 'long' > \(Self.longName)
            ln -s "$(head -c 4000 /dev/zero | tr '\\0' t)" longlink
            """)
        try #require(made.succeeded, "\(made.stderr)")
        let names = ["symfile", "relsym", "fifo", "device", "hardlink", "symdir", "metadir", Self.longName]
        let backing = Dictionary(uniqueKeysWithValues: zip(names, try vault.backingPaths(of: names)))
        let keys = try VaultKeys(of: vault)
        let dotNames = try ["..", ".", "a/b", "nul\u{0}inside"].map { try keys.storedName(Array($0.utf8)) }
        try vault.unmount()

        let outsideSetup = CommandRunner.shell("""
            set -e
            mkdir -p '\(outside)/dir'
            printf 'outside secret' > '\(outside)/file'
            printf 'outside, hard-linked' > '\(outside)/linked'
            chmod 0640 '\(outside)/file' '\(outside)/linked'
            touch -d '2001-02-03 04:05:06' '\(outside)/file' '\(outside)/linked' '\(outside)/dir'
            """)
        try #require(outsideSetup.succeeded, "\(outsideSetup.stderr)")
        let before = try snapshot(outside)
        // One command a line, so `set -e` stops at the first that fails (it ignores failures
        // inside `&&` lists); names as `./NAME`, since a base64url name may start with `-`.
        let plant = CommandRunner.shell("""
            set -e
            cd '\(vault.backing)'
            rm './\(backing["symfile"]!)'
            ln -s '\(outside)/file' './\(backing["symfile"]!)'
            rm './\(backing["relsym"]!)'
            ln -s ../outside/file './\(backing["relsym"]!)'
            rm './\(backing["fifo"]!)'
            mkfifo './\(backing["fifo"]!)'
            rm './\(backing["device"]!)'
            mknod './\(backing["device"]!)' c 1 5
            rm './\(backing["hardlink"]!)'
            ln '\(outside)/linked' './\(backing["hardlink"]!)'
            rm -r './\(backing["symdir"]!)'
            ln -s '\(outside)/dir' './\(backing["symdir"]!)'
            rm './\(backing["metadir"]!)/protfs.dir'
            ln -s '\(outside)/file' './\(backing["metadir"]!)/protfs.dir'
            rm './\(backing[Self.longName]!).name'
            mkfifo './\(backing[Self.longName]!).name'
            rm -r protfs.links
            ln -s '\(outside)/dir' protfs.links
            touch './\(dotNames[0])' './\(dotNames[1])'
            mkdir './\(dotNames[2])'
            ln -s ../outside './\(dotNames[3])'
            stat -c %F './\(backing["fifo"]!)' './\(backing["device"]!)' './\(backing["symfile"]!)'
            """)
        try #require(plant.succeeded && plant.stdout == "fifo\ncharacter special file\nsymbolic link\n",
                     "planting: \(plant.stdout)\(plant.stderr) in \(backing)")

        try vault.mount()
        let result = PythonChecks.run("""
            LONG = sys.argv[2]
            EIO, EACCES, ENXIO, EPERM, ENODATA = Fails(errno.EIO), Fails(errno.EACCES), Fails(errno.ENXIO), Fails(errno.EPERM), Fails(errno.ENODATA)
            is_kind = lambda check: (lambda st: check(st.st_mode))
            for link in ["symfile", "relsym"]:
                expect(link + " is a symlink", lambda: os.lstat(link), is_kind(stat.S_ISLNK))
                expect(link + ": readlink", lambda: os.readlink(link), EIO)
                expect(link + ": open", lambda: os.open(link, os.O_RDONLY), EIO)
                expect(link + ": open for writing", lambda: os.open(link, os.O_WRONLY | os.O_CREAT), EIO)
                expect(link + ": chmod (follows)", lambda: os.chmod(link, 0o777), EIO)
                expect(link + ": chown -h", lambda: os.lchown(link, 65534, 65534))
                expect(link + ": touch -h", lambda: os.utime(link, (1, 1), follow_symlinks=False))
                expect(link + ": user xattr on a symlink", lambda: os.setxattr(link, "user.x", b"x", follow_symlinks=False), EPERM)
            expect("fifo is a FIFO", lambda: os.lstat("fifo"), is_kind(stat.S_ISFIFO))
            expect("fifo: open to read (the kernel's pipe, no writer)", lambda: os.read(os.open("fifo", os.O_RDONLY | os.O_NONBLOCK), 10), b"")
            expect("fifo: open to write with no reader", lambda: os.open("fifo", os.O_WRONLY | os.O_NONBLOCK), ENXIO)
            expect("fifo: no class", lambda: os.getxattr("fifo", "user.protfs.class"), ENODATA)
            expect("fifo: chmod", lambda: os.chmod("fifo", 0o600))
            expect("device is a character device", lambda: os.lstat("device"), lambda st: stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 5))
            expect("device: open (the mount is nodev)", lambda: os.open("device", os.O_RDONLY), EACCES)
            expect("device: chown", lambda: os.chown("device", 65534, 65534))
            expect("hardlink is a regular file", lambda: os.lstat("hardlink"), is_kind(stat.S_ISREG))
            for label, call in [("open", lambda: os.open("hardlink", os.O_RDONLY)), ("open for writing", lambda: os.open("hardlink", os.O_WRONLY)),
                                ("truncate", lambda: os.truncate("hardlink", 0)), ("chmod", lambda: os.chmod("hardlink", 0o777)),
                                ("chown", lambda: os.chown("hardlink", 65534, 65534)), ("touch", lambda: os.utime("hardlink", (1, 1))),
                                ("link", lambda: os.link("hardlink", "hardlink2")), ("set xattr", lambda: os.setxattr("hardlink", "user.x", b"x")),
                                ("class", lambda: os.getxattr("hardlink", "user.protfs.class"))]:
                expect("hardlink: " + label, call, EIO)
            expect("hardlink: rename (inside the backing directory)", lambda: os.rename("hardlink", "hardlink3"))
            expect("hardlink: unlink", lambda: os.unlink("hardlink3"))
            expect("symdir is a symlink", lambda: os.lstat("symdir"), is_kind(stat.S_ISLNK))
            expect("symdir: list", lambda: os.listdir("symdir"), EIO)
            expect("symdir: create in it", lambda: os.open("symdir/new", os.O_WRONLY | os.O_CREAT), EIO)
            expect("symdir: mkdir in it", lambda: os.mkdir("symdir/sub"), EIO)
            expect("metadir is still a directory", lambda: os.lstat("metadir"), is_kind(stat.S_ISDIR))
            expect("metadir: list", lambda: os.listdir("metadir"), EIO)
            expect("metadir: look up", lambda: os.stat("metadir/kept"), EIO)
            expect("metadir: create in it", lambda: os.open("metadir/new", os.O_WRONLY | os.O_CREAT), EIO)
            expect("metadir: class", lambda: os.getxattr("metadir", "user.protfs.class"), EIO)
            expect("the long name with a FIFO sidecar reads", lambda: open(LONG, "rb").read(), b"long")
            expect("longlink with the link store planted", lambda: os.readlink("longlink"), EIO)
            expect("a new long symlink with the link store planted", lambda: os.symlink("t" * 4000, "newlong"), EIO)
            expect("the listing shows no dot or slash names and skips the long one",
                   lambda: sorted(os.listdir(".")), sorted(["symfile", "relsym", "fifo", "device", "symdir", "metadir", "plain", "longlink"]))
            expect("plain still reads", lambda: open("plain", "rb").read(), b"inside plain")
            """, in: vault.mountpoint, arguments: [Self.longName])
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput)")
        #expect(vault.daemon?.isRunning == true, "the daemon is gone: \(vault.daemonOutput)")
        try vault.unmount()
        #expect(try snapshot(outside) == before, "something outside the backing directory changed")
    }

    /// SPEC section 4: a sealed target is bound to its symlink. Copied over another symlink's
    /// (in the same directory, another one, out of line) or carried by an entry renamed onto
    /// another symlink's name, it is damage: EIO, never followed.
    @Test("a symlink target copied from another symlink in the backing directory is EIO, not followed")
    func copiedSymlinkTargets() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let made = CommandRunner.script("symlink-copied-targets.sh", ["make", vault.mountpoint])
        try #require(made.succeeded, "\(made.stdout)\(made.stderr)")
        let backing = try vault.backingPaths(of: ["evil", "victim", "d/victim", "longevil", "longvictim", "renamed", "swapped"])
        try vault.unmount()
        let plant = CommandRunner.script("symlink-copied-targets.sh", ["plant", vault.backing] + backing)
        try #require(plant.succeeded, "\(plant.stdout)\(plant.stderr)")
        try vault.mount()
        let check = CommandRunner.script("symlink-copied-targets.sh", ["check", vault.mountpoint])
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
        let result = CommandRunner.shell("""
            cd '\(directory)' && find . | sort | while read -r p; do
                stat -c '%n %F %a %u:%g %s %.9Y' "$p"; [ -f "$p" ] && sha256sum < "$p"
            done
            """)
        guard result.succeeded else { throw TestFailure("cannot snapshot \(directory): \(result.stderr)") }
        return result.stdout
    }
}
