import Foundation
import Glibc
import ProtfsFormat
import ProtfsSystem
import Testing

/// Many `user.*` xattrs on one file, on real mounts: docs/FORMAT.md "xattrs" packs the small
/// ones into one sealed backing xattr, so a file holds at least as many as the backing
/// filesystem would (ext4 without `ea_inode`: one 4 KiB block), with every change atomic, and
/// still reads what earlier builds wrote one backing xattr per attribute.
@Suite("Many extended attributes", .serialized)
struct ManyAttributesTests {
    @discardableResult
    func script(_ vault: TestVault, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> CommandResult {
        let result = CommandRunner.script("backup/many-xattrs.py", [vault.mountpoint] + arguments, timeout: 300)
        #expect(result.succeeded, "\(arguments): \(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput)",
                sourceLocation: sourceLocation)
        return result
    }

    /// The backing xattr names of the file `relative` of the mount.
    func backingAttributeNames(_ vault: TestVault, _ relative: String) throws -> [String] {
        let backing = vault.backing + "/" + (try vault.backingPaths(of: [relative])[0])
        let fd = try FileDescriptor.open(path: backing, [.readOnly])
        defer { fd.close() }
        return try fd.extendedAttributeNames()
    }

    @Test("200 small attributes on one file list and read back across remounts and a lock and unlock")
    func hundredsOnOneFile() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.shell("touch f").succeeded)
        script(vault, ["set", "f", "200"])
        script(vault, ["check", "f", "200"])
        #expect(try backingAttributeNames(vault, "f").filter { $0.hasPrefix("user.protfs.x") } == [PackedXattrs.backingName])
        try vault.unmount()
        try vault.mount()
        script(vault, ["check", "f", "200"])
        try vault.lock(now: true)
        script(vault, ["check", "f", "200"])
        try vault.unlock()
        script(vault, ["check", "f", "200"])
    }

    /// "At least what the backing filesystem allows": the same tiny attributes set until a
    /// refusal, on a plain file beside the backing directory and on a file of the mount.
    @Test("a file of the mount holds at least as many tiny attributes as one of the backing filesystem")
    func atLeastTheBackingFilesystemsLimit() throws {
        let vault = try TestVault()
        let plain = vault.root.path + "/plain"
        #expect(FileManager.default.createFile(atPath: plain, contents: nil))
        let backing = CommandRunner.script("backup/many-xattrs.py", [vault.root.path, "fill", "plain"], timeout: 300)
        try #require(backing.succeeded, "\(backing.stdout)\(backing.stderr)")
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.shell("touch f").succeeded)
        let mounted = script(vault, ["fill", "f"])
        let backingCount = Int(backing.stdout.split(separator: " ")[0]) ?? 0
        let mountedCount = Int(mounted.stdout.split(separator: " ")[0]) ?? 0
        #expect(mountedCount >= 100 && mountedCount >= backingCount,
                "the mount holds \(mounted.stdout), the backing filesystem \(backing.stdout)")
    }

    /// End to end; the kernel already holds the inode's lock around each `setxattr`, so the
    /// daemon's own per-object lock is proved by `ExtendedAttributeStoreTests`, without FUSE.
    @Test("setxattr of different names from 8 threads at once loses none")
    func concurrentSets() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.shell("touch f").succeeded)
        script(vault, ["concurrent", "f"])
    }

    @Test("XATTR_CREATE and XATTR_REPLACE on packed and unpacked values; values move between the forms")
    func createAndReplace() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.shell("touch f && mkdir d").succeeded)
        script(vault, ["flags", "f"])
        script(vault, ["flags", "d"])
        #expect(try backingAttributeNames(vault, "f").filter { $0.hasPrefix("user.protfs.x") }.isEmpty)
    }

    /// An attribute written by an earlier build (its own backing xattr) reads back, moves into
    /// the blob when set, and a stale own copy the blob shadows is fsck's finding.
    @Test("attributes of earlier builds read back and move into the blob when set; fsck removes stale copies")
    func unpackedAttributesOfEarlierBuilds() throws {
        let vault = try TestVault()
        try vault.mount()
        #expect(vault.shell("touch f && setfattr -n user.dup -v packed f").succeeded)
        let file = try vault.backingPaths(of: ["f"])[0]
        let keys = try VaultKeys(of: vault)
        try keys.setUnpackedAttribute("user.old", Array("old value".utf8), ofBacking: file)
        try keys.setUnpackedAttribute("user.dup", Array("stale".utf8), ofBacking: file)
        #expect(vault.shell("[ \"$(getfattr --only-values -n user.old f)\" = 'old value' ]").succeeded)
        #expect(vault.shell("[ \"$(getfattr --only-values -n user.dup f)\" = packed ]").succeeded)
        #expect(vault.shell("[ \"$(getfattr -d f | grep -c '^user\\.dup=')\" = 1 ]").succeeded, "user.dup listed once")
        try vault.unmount()

        let check = FsckTests().fsck(vault)
        #expect(check.status != 0 && check.stdout.contains("user.dup is also packed"), "\(check.stdout)\(check.stderr)")
        let repair = FsckTests().fsck(vault, ["--repair"])
        #expect(repair.succeeded, "\(repair.stdout)\(repair.stderr)")
        #expect(FsckTests().fsck(vault).status == 0)

        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.shell("[ \"$(getfattr --only-values -n user.dup f)\" = packed ]").succeeded)
        #expect(vault.shell("setfattr -n user.old -v new f && [ \"$(getfattr --only-values -n user.old f)\" = new ]").succeeded)
        #expect(try backingAttributeNames(vault, "f").filter { $0.hasPrefix(XattrCodec.backingPrefix) }.isEmpty,
                "the old copy went when the value moved into the blob")
    }

    @Test("a tampered blob is EIO for that file's attributes only, and fsck --repair removes it")
    func tamperedBlob() throws {
        let vault = try TestVault()
        try vault.mount()
        #expect(vault.shell("touch a b && setfattr -n user.n -v 1 a && setfattr -n user.n -v 2 b").succeeded)
        let blob = vault.backing + "/" + (try vault.backingPaths(of: ["a"])[0])
        try vault.unmount()
        let fd = try FileDescriptor.open(path: blob, [.readOnly])
        var sealed = try fd.extendedAttribute(PackedXattrs.backingName)
        sealed[sealed.count / 2] ^= 0x01
        try fd.setExtendedAttribute(PackedXattrs.backingName, sealed)
        fd.close()

        try vault.mount()
        #expect(vault.shell("getfattr -n user.n a 2>&1 | grep -q 'Input/output error'").succeeded)
        #expect(vault.shell("getfattr -d a 2>&1 | grep -q 'Input/output error'").succeeded)
        #expect(vault.shell("setfattr -n user.m -v 3 a 2>&1 | grep -q 'Input/output error'").succeeded)
        #expect(vault.shell("[ \"$(getfattr --only-values -n user.n b)\" = 2 ] && cat a b && getfattr -n user.protfs.class a").succeeded)
        try vault.unmount()

        let check = FsckTests().fsck(vault)
        #expect(check.status != 0 && check.stdout.contains("packed extended attributes fail authentication"),
                "\(check.stdout)\(check.stderr)")
        #expect(FsckTests().fsck(vault, ["--repair"]).succeeded)
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.shell("getfattr -n user.n a 2>&1 | grep -q 'No such attribute' && setfattr -n user.n -v 4 a").succeeded)
    }
}
