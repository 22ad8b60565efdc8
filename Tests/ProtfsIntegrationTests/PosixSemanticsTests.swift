import Foundation
import Testing

/// File semantics through the kernel that ext4 users rely on: big sparse files, appends,
/// O_DIRECT, shared mmap, truncation, fallocate, modes, owners, times and special files.
@Suite("POSIX semantics on the mount", .serialized)
struct PosixSemanticsTests {
    @Test("sparse files past 4 GiB, truncate up and down, fallocate")
    func sizesAndHoles() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.checkScript("mount/sparse-files.sh")
    }

    @Test("O_APPEND from several writers, O_DIRECT, and a shared writable mmap")
    func appendDirectAndMmap() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.checkScript("mount/appends-direct-io-and-mmap.sh")
        try vault.unmount()
        try vault.mount()
        vault.check("""
            python3 -c 'd = open("mapped", "rb").read(); assert d[4090:4110] == b"across-the-boundary!"'
            """)
    }

    @Test("an O_DIRECT descriptor maps shared and private; the mapping, direct I/O and the page cache agree")
    func directIOFilesMap() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("python3 '\(CommandRunner.scriptPath("mount/direct-io-mmap.py"))'")
    }

    /// A buffered read racing a direct write may fill the page cache with the old bytes after
    /// the kernel dropped the range and before the write reaches the daemon: once the write has
    /// completed, no later read may see them.
    @Test("a completed O_DIRECT write is seen by every later buffered read, with readers racing it")
    func directWritesBesideBufferedReaders() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.checkScript("mount/direct-writes-beside-buffered-readers.py", ["5"], timeout: 90)
    }

    @Test("name_to_handle_at is refused with EOPNOTSUPP, not answered with handles that go stale")
    func noFileHandles() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("python3 '\(CommandRunner.scriptPath("mount/file-handles.py"))'")
    }

    @Test("modes, owners, set-group-ID directories, sticky bits and nanosecond times, at once")
    func ownershipModesAndTimes() throws {
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        vault.checkScript("mount/modes-owners-and-times.sh")
    }


    @Test("chmod and touch work where fchmodat2 is refused, through the descriptor's proc link",
          arguments: ["ENOSYS", "EPERM"])
    func modesWithoutFchmodat2(answer: String) throws {
        let vault = try TestVault()
        try vault.mount(launcher: ["/usr/bin/python3", CommandRunner.scriptPath("mount/refuse-fchmodat2.py"), answer])
        defer { try? vault.unmount() }
        vault.checkScript("mount/modes-without-fchmodat2.sh")
    }

    @Test("a write by a user without CAP_FSETID drops set-ID bits, through the page cache, write-only and with O_DIRECT; root's keeps them")
    func setIDBitsOnWrite() throws {
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        // Write-only and O_DIRECT descriptors get direct I/O, where the kernel leaves the bits
        // to the daemon; a read-write one writes through the page cache.
        vault.checkScript("mount/set-id-bits-on-write.sh")
    }

    @Test("set-ID bits after writes, truncates and fallocates by users in and out of the file's group, as ext4 drops them")
    func setIDBitsAsExt4() throws {
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        vault.check("python3 '\(CommandRunner.scriptPath("mount/set-id-drops.py"))'")
    }

    @Test("access times as Linux keeps them under relatime (the default), noatime and nodiratime",
          arguments: ["relatime", "noatime", "nodiratime"])
    func accessTimes(rule: String) throws {
        let vault = try TestVault()
        try vault.mount(options: rule == "relatime" ? [] : [rule])
        defer { try? vault.unmount() }
        vault.check("python3 '\(CommandRunner.scriptPath("mount/access-times.py"))' \(rule)")
    }

    @Test("O_DIRECT and write-only writes replace what other descriptors have in the page cache")
    func directWriteOverCachedPages() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        // Both kinds of descriptor bypass the page cache; pages that readers cached before
        // must not outlive the write, whether the reader keeps its descriptor or opens again.
        vault.checkScript("mount/direct-writes-replace-cached-pages.py")
    }

    @Test("write-only descriptors (direct I/O) take data from sendfile, splice from a pipe and copy_file_range")
    func kernelCopiesIntoWriteOnlyFiles() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        // The kernel hands these writes over as its own pages, not a user buffer.
        vault.checkScript("mount/kernel-copies-into-write-only-files.sh")
    }

    @Test("SQLite in WAL and rollback-journal modes")
    func sqlite() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.checkScript("sqlite/sqlite-journal-modes.sh", timeout: 300)
    }
}
