import Foundation
import ProtfsTestSupport
import Testing

/// The encrypted mount driven through the kernel with ordinary tools.
@Suite("Encrypted mount", .serialized)
struct MountTests {
    @Test("cp -a of /usr/include, diff -r clean before and after a remount")
    func copyTreeAndRemount() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let copy = CommandRunner.shell("cp -a /usr/include '\(vault.path("include"))' && diff -r /usr/include '\(vault.path("include"))'", timeout: 600)
        #expect(copy.succeeded, "\(copy.stdout)\(copy.stderr)")
        try vault.unmount()
        try vault.mount()
        let again = CommandRunner.shell("diff -r /usr/include '\(vault.path("include"))'", timeout: 300)
        #expect(again.succeeded, "\(again.stdout)\(again.stderr)")
    }

    @Test("more files than the daemon may hold descriptors for: create, ls -l (cold too), ls -a, read, rm")
    func moreFilesThanDescriptors() throws {
        let vault = try TestVault()
        // 1200 descriptors: the node table holds 688 nodes, so 3000 files only work if the
        // kernel is told to forget some (FUSE_NOTIFY_PRUNE).
        try vault.mount(launcher: ["/usr/bin/prlimit", "--nofile=1200:1200", "--"])
        defer { try? vault.unmount() }
        let directory = vault.path("many")
        let result = CommandRunner.script("mount/many-files.sh", [directory], timeout: 300)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test("find takes names only (no node per file); ls -l, d_ino and du after a bare listing are right")
    func listingsWithAndWithoutAttributes() throws {
        let vault = try TestVault()
        try vault.mount()
        let make = CommandRunner.script("mount/make-listing-tree.sh", [vault.mountpoint], timeout: 120)
        #expect(make.succeeded, "\(make.stderr)")
        // A fresh mount: the kernel has cached nothing, every entry comes from a listing.
        try vault.unmount()
        try vault.mount()
        defer { try? vault.unmount() }
        let pid = try #require(vault.daemon?.processIdentifier)
        let descriptors = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0 }
        let before = descriptors()
        let found = CommandRunner.shell("cd '\(vault.mountpoint)' && find top | sort")
        #expect(found.stdout.split(separator: "\n").count == 1 + 5 + 15 + 200 + 1, "\(found.stdout)\(found.stderr)")
        // One descriptor per node: the 5 subdirectories and `top`, not the 216 other entries.
        #expect(descriptors() - before < 50, "find made \(descriptors() - before) nodes")
        let checked = CommandRunner.script("mount/listing-tree-attributes.sh", [vault.mountpoint])
        #expect(checked.succeeded, "\(checked.stdout)\(checked.stderr)")
    }

    @Test("a listing right after a create shows it, each time, however soon the listings follow each other")
    func listingAfterCreate() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.checkScript("mount/listing-after-create.sh")
    }

    @Test("tar and rsync -aHX round trips keep contents, links and xattrs")
    func tarAndRsync() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let source = vault.root.appendingPathComponent("source").path
        let result = CommandRunner.script("mount/tar-and-rsync.sh", [source, vault.mountpoint, vault.root.path], timeout: 300)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
    }

    @Test("hard links, long symlink targets, FIFOs and renameat2 flags")
    func posixSurface() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.checkScript("mount/hard-links-symlinks-fifos-renames.sh")
    }

    @Test("a renamed or exchanged symlink keeps its target, owner, times and inode; hard links of symlinks are refused")
    func symlinkRenames() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let result = CommandRunner.script("mount/symlink-renames.sh", [vault.mountpoint], timeout: 60)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput)")
        let symlinks = vault.shell("find \(vault.mountpoint) -type l | wc -l").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let blobs = try FileManager.default.contentsOfDirectory(atPath: vault.backing + "/protfs.links")
        #expect(String(blobs.count) == symlinks, "one out-of-line target per symlink, none left behind")
    }

    /// Symlinks of an older format (here format 1) are rewritten in format 3 where they are
    /// before they move: the backing symlink changes once, the target stays.
    @Test("a rename or exchange of an older-format symlink rewrites it in format 3, leaving nothing behind")
    func olderSymlinkRenames() throws {
        let vault = try TestVault()
        try vault.mount()
        let made = CommandRunner.script("mount/format-one-symlinks.sh", ["make", vault.mountpoint])
        try #require(made.succeeded, "\(made.stdout)\(made.stderr)")
        let names = ["docs/link", "top", "long"]
        let targets = try names.map { try Array(FsckTests.readLink(vault.path($0)).utf8) }
        let backing = try vault.backingPaths(of: names)
        let keys = try VaultKeys(of: vault)
        try vault.unmount()
        for (path, target) in zip(backing, targets) { try keys.rewriteInFormatOne(symlink: path, target: target) }
        try vault.mount()
        defer { try? vault.unmount() }
        let renamed = CommandRunner.script("mount/format-one-symlinks.sh", ["rename", vault.mountpoint])
        #expect(renamed.succeeded, "\(renamed.stdout)\(renamed.stderr)\ndaemon: \(vault.daemonOutput)")
        let moved = try vault.backingPaths(of: ["docs/old/link", "top", "long"]).map { try FsckTests.readLink(vault.backing + "/" + $0) }
        #expect(moved.allSatisfy { $0.hasPrefix("3.@") }, "\(moved)")
        let blobs = try FileManager.default.contentsOfDirectory(atPath: vault.backing + "/protfs.links")
        #expect(Set(blobs) == Set(moved.map { String($0.dropFirst(3)) }), "the format-1 blob went: \(blobs)")
    }

    @Test("xattrs round-trip with getfattr and setfattr; ENODATA and namespaces")
    func extendedAttributes() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.checkScript("mount/extended-attributes.sh", timeout: 60)
    }

    /// A daemon without the capability to override permissions (root's, here, dropped) may not
    /// open a directory of mode 0300 to set its xattrs through it: they go through the
    /// descriptor's /proc link instead.
    @Test("a daemon that may not read a directory still sets its xattrs and makes directories in it")
    func extendedAttributesOfUnreadableDirectories() throws {
        let vault = try TestVault()
        try vault.mount(launcher: ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"])
        defer { try? vault.unmount() }
        vault.checkScript("mount/xattrs-on-unreadable-directories.sh", timeout: 60)
    }

    @Test("the backing directory holds no plaintext name, content, xattr or symlink target")
    func nothingInTheClear() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let marker = "pfsmarker\(UUID().uuidString.prefix(8))"
        vault.checkScript("mount/nothing-in-the-clear.sh", [vault.backing, marker], timeout: 60)
    }

    @Test("a tampered chunk is EIO for that file only; the mount and other files go on")
    func tamperIsEIO() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let setup = CommandRunner.shell("""
            set -e
            head -c 20000 /dev/urandom > '\(vault.path("victim"))'
            echo fine > '\(vault.path("bystander"))'
            """)
        #expect(setup.succeeded, "\(setup.stderr)")
        try vault.unmount()
        // The backing object of "victim" is the larger of the two files.
        let flip = CommandRunner.shell("""
            set -e
            f=$(find '\(vault.backing)' -maxdepth 1 -type f -size +10k | head -n1)
            printf '\\xff' | dd of="$f" bs=1 seek=5000 conv=notrunc status=none
            """)
        #expect(flip.succeeded, "\(flip.stderr)")
        try vault.mount()
        let read = CommandRunner.shell("cat '\(vault.path("victim"))' > /dev/null")
        #expect(!read.succeeded)
        #expect(read.stderr.contains("Input/output error"), "\(read.stderr)")
        let other = CommandRunner.shell("cat '\(vault.path("bystander"))'")
        #expect(other.stdout == "fine\n")
        // Logged once, by backing path and inode, never by plaintext name.
        let log = vault.daemonOutput
        #expect(log.components(separatedBy: "contents of").count == 2 && log.contains("(inode "), "\(log)")
        #expect(!log.contains("victim"))
        let stat = CommandRunner.shell("stat -c %s '\(vault.path("victim"))' && rm '\(vault.path("victim"))'")
        #expect(stat.succeeded, "\(stat.stderr)")
    }

    @Test("class hints: a missing one is repaired, a foreign one is EIO for that file only")
    func classHints() throws {
        let vault = try TestVault()
        try vault.mount()
        let setup = CommandRunner.shell("echo aaaa > '\(vault.path("a"))' && printf '%0100d' 0 > '\(vault.path("b"))'")
        #expect(setup.succeeded)
        try vault.unmount()
        // Backing objects by size: "a" is the smaller one.
        let tamper = CommandRunner.script("mount/swap-class-hints.sh", [vault.backing])
        #expect(tamper.succeeded, "\(tamper.stderr)")
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(CommandRunner.shell("cat '\(vault.path("a"))'").stdout == "aaaa\n")
        let foreign = CommandRunner.shell("cat '\(vault.path("b"))'")
        #expect(foreign.stderr.contains("Input/output error"), "\(foreign.stdout)\(foreign.stderr)")
        let repaired = CommandRunner.shell("find '\(vault.backing)' -maxdepth 1 -type f ! -name 'protfs.*' -size -400c -exec getfattr -n user.protfs.class {} \\;")
        #expect(repaired.stdout.contains("user.protfs.class"), "the missing hint is written again")
    }

    @Test("wrong passcode exits 3 and mounts nothing; a wrong device key says so and exits 1")
    func wrongSecrets() throws {
        let vault = try TestVault()
        let wrong = vault.root.appendingPathComponent("wrong").path
        try "not the passcode\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        let bad = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-f",
                                                      "-o", "device_key=\(vault.deviceKey),passcode_file=\(wrong)"], timeout: 30)
        #expect(bad.status == 3, "\(bad.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
        let otherKey = vault.root.appendingPathComponent("other.key").path
        let keyBytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
        _ = FileManager.default.createFile(atPath: otherKey, contents: Data(keyBytes), attributes: [.posixPermissions: 0o600])
        let mismatch = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-f",
                                                           "-o", "device_key=\(otherKey),passcode_file=\(vault.passcodeFile)"], timeout: 30)
        #expect(mismatch.status == 1)
        #expect(mismatch.stderr.contains("device key does not match this vault"), "\(mismatch.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
    }

    @Test("kill -9 of the daemon, then a new mount on the same mount point works")
    func remountAfterCrash() throws {
        let vault = try TestVault()
        try vault.mount()
        let write = CommandRunner.shell("echo survived > '\(vault.path("kept"))' && sync")
        #expect(write.succeeded)
        if let daemon = vault.daemon {
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        // No unmount here: `protfs mount` itself must clear whatever the dead daemon left.
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(CommandRunner.shell("cat '\(vault.path("kept"))'").stdout == "survived\n")
    }
}
