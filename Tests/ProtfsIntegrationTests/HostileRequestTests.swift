import Foundation
import Testing

/// Requests at the edges of what the kernel lets through to the daemon: the largest
/// offsets, zero-length I/O, 255-byte names of any byte, O_DIRECT at odd offsets, every
/// fallocate mode, copy_file_range, SEEK_DATA/SEEK_HOLE, and xattrs of every size and
/// namespace. Each call must get Linux's answer (or SPEC's, where it says), and the daemon
/// must keep answering afterwards.
@Suite("Hostile requests through the kernel", .serialized)
struct HostileRequestTests {
    /// Helpers of these scripts, after `PythonChecks.prelude`.
    static let helpers = #"""
        def fallocate(fd, mode, offset, length):
            if libc.fallocate(fd, mode, ctypes.c_long(offset), ctypes.c_long(length)) != 0:
                raise OSError(ctypes.get_errno(), "fallocate")

        def getxattr_sized(path, name, size):
            buffer = ctypes.create_string_buffer(max(size, 1))
            n = libc.getxattr(path.encode() if isinstance(path, str) else path, name, buffer if size else None, ctypes.c_size_t(size))
            if n < 0:
                raise OSError(ctypes.get_errno(), "getxattr")
            return n

        def getdents(directory):
            # The names of one getdents64 call at the descriptor's offset.
            buffer = ctypes.create_string_buffer(65536)
            n = libc.syscall(217, directory, buffer, ctypes.c_size_t(65536))
            if n < 0:
                raise OSError(ctypes.get_errno(), "getdents64")
            names, at = [], 0
            while at < n:
                length = struct.unpack_from("<H", buffer.raw, at + 16)[0]
                names.append(buffer.raw[at + 19:at + length].split(b"\0")[0])
                at += length
            return names

        def listxattr_sized(path, size):
            buffer = ctypes.create_string_buffer(max(size, 1))
            n = libc.listxattr(path.encode(), buffer if size else None, ctypes.c_size_t(size))
            if n < 0:
                raise OSError(ctypes.get_errno(), "listxattr")
            return n

        """#

    /// Runs a client script on a fresh mount, then checks that the daemon still answers.
    func run(_ script: String, timeout: TimeInterval = 120) throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let result = PythonChecks.run(Self.helpers + script, in: vault.mountpoint, timeout: timeout)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput)")
        #expect(vault.daemon?.isRunning == true, "the daemon is gone: \(vault.daemonOutput)")
        let root = CommandRunner.run("stat", ["-c", "%F", vault.mountpoint], timeout: 10)
        #expect(root.succeeded && root.stdout.hasPrefix("directory"), "the mount no longer answers: \(root.stderr)")
    }

    @Test("huge offsets, zero-length I/O, truncation limits and SEEK_DATA/SEEK_HOLE")
    func offsetsAndSizes() throws {
        try run("""
            fd = os.open("f", os.O_RDWR | os.O_CREAT, 0o644)
            os.pwrite(fd, b"hello world", 0)
            top = 2**63 - 1
            expect("pread past the largest offset", lambda: os.pread(fd, 10, top), Fails(errno.EINVAL))
            expect("pread at 2^62", lambda: os.pread(fd, 10, 2**62), b"")
            expect("pread at 2^63 - 4097", lambda: os.pread(fd, 4096, top - 4096), b"")
            expect("pwrite at 2^63 - 2", lambda: os.pwrite(fd, b"x", top - 1), Fails(errno.EFBIG))
            expect("pwrite at 2^63 - 8192", lambda: os.pwrite(fd, b"x" * 4096, top - 8192), Fails(errno.EFBIG))
            expect("pwrite across 2^63", lambda: os.pwrite(fd, b"x" * 100, top - 50), Fails(errno.EINVAL))
            expect("ftruncate to 2^63 - 1", lambda: os.ftruncate(fd, top), Fails(errno.EFBIG))
            expect("ftruncate to -1", lambda: os.ftruncate(fd, -1), Fails(errno.EINVAL))
            expect("pread of 0 bytes", lambda: os.pread(fd, 0, 5), b"")
            expect("pwrite of 0 bytes", lambda: os.pwrite(fd, b"", 5), 0)
            expect("pwrite of 0 bytes at 2^62", lambda: os.pwrite(fd, b"", 2**62), 0)
            expect("the size after all that", lambda: os.fstat(fd).st_size, 11)
            expect("the contents after all that", lambda: os.pread(fd, 100, 0), b"hello world")
            # Far past the end: the backing filesystem's own limit (EFBIG on ext4), or a sparse
            # file that reads back.
            far = 2**44 + 5
            try:
                os.pwrite(fd, b"far", far)
                expect("the far write reads back", lambda: os.pread(fd, 3, far), b"far")
                expect("the hole before it reads as zeros", lambda: os.pread(fd, 8, far - 8), b"\\0" * 8)
                os.ftruncate(fd, 11)
            except OSError as e:
                if e.errno != errno.EFBIG:
                    failures.append("write at 2^44: %s" % errno.errorcode.get(e.errno, e.errno))
            expect("SEEK_DATA at 0", lambda: os.lseek(fd, 0, os.SEEK_DATA), 0)
            expect("SEEK_HOLE at 0", lambda: os.lseek(fd, 0, os.SEEK_HOLE), 11)
            expect("SEEK_DATA past the end", lambda: os.lseek(fd, 100, os.SEEK_DATA), Fails(errno.ENXIO))
            expect("SEEK_HOLE past the end", lambda: os.lseek(fd, 100, os.SEEK_HOLE), Fails(errno.ENXIO))
            expect("SEEK_END to near 2^62", lambda: os.lseek(fd, 2**62, os.SEEK_END), 2**62 + 11)
            expect("a read at that offset", lambda: os.read(fd, 10), b"")
            os.close(fd)
            for i in range(5):
                open("entry%d" % i, "w").close()
            directory = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
            # Directory offsets are the backing directory's own positions (on ext4, name hashes):
            # one never handed out lists some of the entries, or none, and is never an error.
            listed = set([b".", b"..", b"f"] + [b"entry%d" % i for i in range(5)])
            for offset in [3, 8, 1000, 2**31, 2**62, 2**63 - 1]:
                expect("lseek the directory to %d" % offset, lambda: os.lseek(directory, offset, os.SEEK_SET), offset)
                expect("getdents at %d lists only entries" % offset, lambda: set(getdents(directory)) <= listed, True)
            expect("lseek the directory to -1", lambda: os.lseek(directory, -1, os.SEEK_SET), Fails(errno.EINVAL))
            os.lseek(directory, 0, os.SEEK_SET)
            expect("a whole listing after all that", lambda: sorted(getdents(directory)), sorted([b".", b"..", b"f"] + [b"entry%d" % i for i in range(5)]))
            """)
    }

    @Test("fallocate in every mode and copy_file_range at odd and huge offsets")
    func fallocateAndCopyRange() throws {
        try run("""
            fd = os.open("f", os.O_RDWR | os.O_CREAT, 0o644)
            data = os.urandom(20000)
            os.pwrite(fd, data, 0)
            KEEP_SIZE, PUNCH_HOLE, COLLAPSE, ZERO, INSERT, UNSHARE = 1, 2, 8, 16, 32, 64
            expect("fallocate mode 0 inside", lambda: fallocate(fd, 0, 100, 4096))
            expect("the contents survive it", lambda: os.pread(fd, 20000, 0), data)
            expect("fallocate mode 0 past the end", lambda: fallocate(fd, 0, 19000, 10000))
            expect("the size grows to it", lambda: os.fstat(fd).st_size, 29000)
            expect("and the new range reads as zeros", lambda: os.pread(fd, 9000, 20000), b"\\0" * 9000)
            for mode, name in [(KEEP_SIZE, "KEEP_SIZE"), (PUNCH_HOLE | KEEP_SIZE, "PUNCH_HOLE"), (ZERO, "ZERO_RANGE"),
                               (COLLAPSE, "COLLAPSE_RANGE"), (INSERT, "INSERT_RANGE"), (UNSHARE, "UNSHARE_RANGE")]:
                expect("fallocate " + name, lambda: fallocate(fd, mode, 0, 4096), Fails(errno.EOPNOTSUPP))
            expect("fallocate of length 0", lambda: fallocate(fd, 0, 0, 0), Fails(errno.EINVAL))
            expect("fallocate past 2^63", lambda: fallocate(fd, 0, 2**63 - 4096, 8192), Fails(errno.EFBIG))
            expect("the contents after every refused mode", lambda: os.pread(fd, 20000, 0), data)
            os.ftruncate(fd, 20000)
            out = os.open("g", os.O_RDWR | os.O_CREAT, 0o644)
            expect("copy_file_range of the whole file", lambda: os.copy_file_range(fd, out, 20000, 0, 0), 20000)
            expect("copy_file_range at odd offsets", lambda: os.copy_file_range(fd, out, 5000, 4097, 30001), 5000)
            expect("copy_file_range from past the end", lambda: os.copy_file_range(fd, out, 10, 30000, 0), 0)
            expect("copy_file_range of 0 bytes", lambda: os.copy_file_range(fd, out, 0, 0, 0), 0)
            expect("copy_file_range to 2^63 - 5", lambda: os.copy_file_range(fd, out, 10, 0, 2**63 - 5), Fails(errno.EFBIG))
            copied = expect("the copy", lambda: os.pread(out, 40000, 0))
            if copied is not None and (copied[:20000] != data or copied[30001:35001] != data[4097:9097] or len(copied) != 35001):
                failures.append("copy_file_range copied the wrong bytes")
            """)
    }

    @Test("O_DIRECT reads and writes at aligned and odd offsets and lengths")
    func directIO() throws {
        try run("""
            fd = os.open("direct", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
            aligned = mmap.mmap(-1, 65536)
            aligned.write(os.urandom(65536))
            expect("aligned O_DIRECT write", lambda: os.pwritev(fd, [aligned], 0), 65536)
            expect("odd O_DIRECT write across a chunk boundary", lambda: os.pwrite(fd, b"abcdefg", 4093), 7)
            expect("odd O_DIRECT write of odd length", lambda: os.pwrite(fd, b"z" * 5000, 12345), 5000)
            expect("O_DIRECT write past the end", lambda: os.pwrite(fd, b"tail", 70001), 4)
            back = mmap.mmap(-1, 8192)
            expect("aligned O_DIRECT read", lambda: os.preadv(fd, [back], 4096), 8192)
            expect("odd O_DIRECT read", lambda: os.pread(fd, 7, 4093), b"abcdefg")
            expect("odd O_DIRECT read of odd length", lambda: os.pread(fd, 5000, 12345), b"z" * 5000)
            expect("O_DIRECT read across the end", lambda: os.pread(fd, 100, 70000), b"\\0tail")
            expect("O_DIRECT read past the end", lambda: os.pread(fd, 100, 10**9), b"")
            expect("O_DIRECT read of 0 bytes", lambda: os.pread(fd, 0, 3), b"")
            expect("O_DIRECT read at 2^62", lambda: os.pread(fd, 10, 2**62), b"")
            expect("O_DIRECT write at 2^63 - 2", lambda: os.pwrite(fd, b"x", 2**63 - 2), Fails(errno.EFBIG))
            os.close(fd)
            expected = bytearray(aligned[:])
            expected[4093:4100] = b"abcdefg"
            expected[12345:17345] = b"z" * 5000
            expected += b"\\0" * (70001 - len(expected)) + b"tail"
            with open("direct", "rb") as cached:
                expect("the same bytes through the page cache", lambda: cached.read(), bytes(expected))
            """)
    }

    @Test("names of 255 bytes and of every byte but '/' and NUL; 256 bytes is ENAMETOOLONG")
    func names() throws {
        try run("""
            every = bytes(b for b in range(1, 256) if b != ord("/"))
            names = [every[:127], every[127:], b"\\xff" * 255, b"a" * 255, b"\\x01" + b"\\xc3" * 254, b"-", b"..." , b" "]
            for name in names:
                expect("create %r" % name[:8], lambda: os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644)))
                expect("stat %r" % name[:8], lambda: os.stat(name).st_size, 0)
            expect("a listing shows exactly them", lambda: sorted(os.listdir(b".")), sorted(names))
            expect("mkdir of 255 bytes", lambda: os.mkdir(b"\\xfe" * 255))
            expect("a file in it", lambda: os.close(os.open(b"\\xfe" * 255 + b"/" + b"\\xfd" * 255, os.O_CREAT | os.O_WRONLY)))
            expect("symlink of 255 bytes to a PATH_MAX - 1 target of every byte",
                   lambda: os.symlink((every * 17)[:4095], b"\\xfc" * 255))
            expect("its target", lambda: os.readlink(b"\\xfc" * 255), (every * 17)[:4095])
            expect("rename between two 255-byte names", lambda: os.rename(b"\\xff" * 255, b"\\xfb" * 255))
            expect("hard link to a 255-byte name", lambda: os.link(b"a" * 255, b"\\xfa" * 255))
            too_long = b"b" * 256
            for label, call in [("create", lambda: os.open(too_long, os.O_CREAT | os.O_WRONLY)), ("stat", lambda: os.stat(too_long)),
                                ("mkdir", lambda: os.mkdir(too_long)), ("symlink", lambda: os.symlink("t", too_long)),
                                ("mknod", lambda: os.mkfifo(too_long)), ("rename", lambda: os.rename(b"a" * 255, too_long)),
                                ("link", lambda: os.link(b"a" * 255, too_long)), ("unlink", lambda: os.unlink(too_long)),
                                ("a 4096-byte name", lambda: os.stat(b"c" * 4096))]:
                expect(label + " of 256 bytes", call, Fails(errno.ENAMETOOLONG))
            expect("symlink to a PATH_MAX target", lambda: os.symlink(b"t" * 4096, b"toolong"), Fails(errno.ENAMETOOLONG))
            for name in names[2:4] + [b"\\xfb" * 255, b"\\xfa" * 255]:
                if os.path.lexists(name):
                    expect("unlink %r" % name[:8], lambda: os.unlink(name))
            """)
    }

    @Test("xattrs: sizes 0, too small and too large, names in every namespace, non-UTF-8 names")
    func extendedAttributes() throws {
        try run("""
            open("f", "w").close()
            os.mkdir("d")
            expect("set", lambda: os.setxattr("f", "user.a", b"v" * 10))
            expect("get with size 0 gives the size", lambda: getxattr_sized("f", b"user.a", 0), 10)
            expect("get into a buffer too small", lambda: getxattr_sized("f", b"user.a", 3), Fails(errno.ERANGE))
            expect("get into a buffer of the exact size", lambda: getxattr_sized("f", b"user.a", 10), 10)
            expect("list with size 0", lambda: listxattr_sized("f", 0), len(b"user.protfs.class\\0user.a\\0"))
            expect("list into a buffer too small", lambda: listxattr_sized("f", 5), Fails(errno.ERANGE))
            expect("an empty value", lambda: os.setxattr("f", "user.empty", b""))
            expect("reads back empty", lambda: os.getxattr("f", "user.empty"), b"")
            expect("a value of 3000 bytes", lambda: os.setxattr("f", "user.big", b"\\x00\\xff" * 1500))
            expect("reads back", lambda: os.getxattr("f", "user.big"), b"\\x00\\xff" * 1500)
            # The largest value whose sealed form fits the kernel's 64 KiB: stored where the
            # backing filesystem takes values that large (ext4 without ea_inode takes one block
            # and says ENOSPC, as it does for a value set on it directly).
            largest = 65536 - 40
            try:
                os.setxattr("f", "user.largest", b"\\xfe" * largest)
                expect("the largest value reads back", lambda: os.getxattr("f", "user.largest"), b"\\xfe" * largest)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    failures.append("the largest value: %s" % errno.errorcode.get(e.errno, e.errno))
            for size in [largest + 1, 65536, 65537, 1 << 20]:
                expect("a value of %d bytes" % size, lambda: os.setxattr("f", "user.big", b"v" * size), Fails(errno.E2BIG))
            expect("the longest name that fits", lambda: os.setxattr("f", "user." + "n" * 159, b"x"))
            expect("a name one byte longer", lambda: os.setxattr("f", "user." + "n" * 160, b"x"), Fails(errno.ERANGE))
            expect("a name of 256 bytes", lambda: os.setxattr("f", "user." + "n" * 251, b"x"), Fails(errno.ERANGE))
            expect("get of a name of 256 bytes", lambda: os.getxattr("f", "user." + "n" * 251), Fails(errno.ERANGE))
            expect("an empty user name", lambda: os.setxattr("f", "user.", b"x"), Fails(errno.EINVAL))
            expect("set a non-UTF-8 name", lambda: os.setxattr("f", b"user.\\xff", b"ff"))
            expect("a different non-UTF-8 name is another attribute", lambda: os.getxattr("f", b"user.\\xfe"), Fails(errno.ENODATA))
            expect("set it too", lambda: os.setxattr("f", b"user.\\xfe", b"fe"))
            expect("each keeps its value", lambda: (os.getxattr("f", b"user.\\xff"), os.getxattr("f", b"user.\\xfe")), (b"ff", b"fe"))
            expect("listed by their bytes", lambda: {os.fsencode(n) for n in os.listxattr(b"f")} >= {b"user.\\xff", b"user.\\xfe"}, True)
            acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, 0xFFFFFFFF) for tag, perm in [(1, 6), (4, 4), (0x20, 4)])
            capability = struct.pack("<IIIII", 0x02000001, 0, 0, 0, 0)
            for name in ["trusted.x", "security.x", "security.selinux", "system.nfs4_acl", "other.x"]:
                expect("get " + name, lambda: os.getxattr("f", name), Fails(errno.EOPNOTSUPP))
                expect("set " + name, lambda: os.setxattr("f", name, b"x"), Fails(errno.EOPNOTSUPP))
                expect("remove " + name, lambda: os.removexattr("f", name), Fails(errno.EOPNOTSUPP))
            expect("get system.posix_acl_access", lambda: os.getxattr("f", "system.posix_acl_access"), Fails(errno.EOPNOTSUPP))
            expect("set a valid access ACL", lambda: os.setxattr("f", "system.posix_acl_access", acl), Fails(errno.EOPNOTSUPP))
            expect("set a valid default ACL", lambda: os.setxattr("d", "system.posix_acl_default", acl), Fails(errno.EOPNOTSUPP))
            expect("get security.capability", lambda: os.getxattr("f", "security.capability"), Fails(errno.ENODATA))
            expect("set a valid security.capability", lambda: os.setxattr("f", "security.capability", capability),
                   Fails(errno.EOPNOTSUPP))
            expect("remove security.capability", lambda: os.removexattr("f", "security.capability"), Fails(errno.ENODATA))
            expect("the file is still writable", lambda: os.write(os.open("f", os.O_WRONLY), b"data"), 4)
            """)
    }
}
