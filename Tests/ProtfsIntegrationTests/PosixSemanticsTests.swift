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
        vault.check("""
            printf 'tail' | dd of=big bs=1 seek=5000000000 conv=notrunc status=none
            [ "$(stat -c %s big)" = 5000000004 ]
            [ "$(dd if=big bs=1 skip=5000000000 count=4 status=none)" = tail ]
            [ "$(dd if=big bs=1 skip=4294967296 count=4 status=none | od -v -An -tx1 | tr -d ' ')" = 00000000 ]
            [ "$(du -k big | cut -f1)" -lt 1024 ]
            head -c 10000 /dev/urandom > t
            cp t t.orig
            truncate -s 5000 t; cmp t <(head -c 5000 t.orig)
            truncate -s 9000 t; [ "$(stat -c %s t)" = 9000 ]
            cmp <(head -c 5000 t) <(head -c 5000 t.orig)
            [ "$(tail -c 4000 t | od -v -An -tx1 | tr -d ' \\n' | tr -d 0)" = "" ]
            truncate -s 0 t; [ "$(stat -c %s t)" = 0 ]
            fallocate -l 1000000 f; [ "$(stat -c %s f)" = 1000000 ]
            [ "$(od -v -An -tx1 f | tr -d ' \\n' | tr -d 0)" = "" ]
            """)
    }

    @Test("O_APPEND from several writers, O_DIRECT, and a shared writable mmap")
    func appendDirectAndMmap() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("""
            for i in 1 2 3 4; do (for j in $(seq 1 200); do echo "writer $i line $j" >> log; done) & done; wait
            [ "$(wc -l < log)" = 800 ]
            [ "$(grep -c 'writer 3 line' log)" = 200 ]
            # Appends through direct I/O (O_DIRECT) and the page cache (read-write), interleaved.
            for how in direct direct cached; do python3 -c '
            import os, sys
            access = os.O_WRONLY | os.O_DIRECT if sys.argv[1] == "direct" else os.O_RDWR
            fd = os.open("mixed", access | os.O_CREAT | os.O_APPEND, 0o644)
            for i in range(300):
                os.write(fd, b"%s %d %04d %s\\n" % (sys.argv[1].encode(), os.getpid(), i, b"x" * 40))
            os.close(fd)' $how & done; wait
            [ "$(wc -l < mixed)" = 900 ]; [ "$(grep -cE '^(direct|cached) [0-9]+ [0-9]{4} x{40}$' mixed)" = 900 ]
            head -c 1048576 /dev/urandom > src
            dd if=src of=direct bs=4096 oflag=direct status=none
            dd if=direct of=back bs=4096 iflag=direct status=none
            cmp src back
            python3 - <<'PY'
            import mmap, os
            fd = os.open("mapped", os.O_RDWR | os.O_CREAT, 0o644)
            os.ftruncate(fd, 3 * 4096 + 17)
            m = mmap.mmap(fd, 3 * 4096 + 17)
            m[4090:4110] = b"across-the-boundary!"
            m.flush(); m.close(); os.close(fd)
            data = open("mapped", "rb").read()
            assert data[4090:4110] == b"across-the-boundary!" and len(data) == 3 * 4096 + 17
            PY
            """)
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
        vault.check("python3 '\(CommandRunner.scriptPath("direct-io-mmap.py"))'")
    }

    @Test("name_to_handle_at is refused with EOPNOTSUPP, not answered with handles that go stale")
    func noFileHandles() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("python3 '\(CommandRunner.scriptPath("file-handles.py"))'")
    }

    @Test("modes, owners, set-group-ID directories, sticky bits and nanosecond times, at once")
    func ownershipModesAndTimes() throws {
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        vault.check("""
            umask 022
            mkdir -m 0750 d; [ "$(stat -c %a d)" = 750 ]
            mkdir -m 1777 sticky; [ "$(stat -c %a sticky)" = 1777 ]
            chown 65534:65534 d; [ "$(stat -c %u:%g d)" = 65534:65534 ]
            mkdir g; chgrp 100 g; chmod 2775 g
            mkdir g/sub; touch g/file
            [ "$(stat -c %g g/sub)" = 100 ]; [ "$(stat -c %g g/file)" = 100 ]
            [ "$(stat -c %a g/sub)" = 2755 ]
            touch f; chmod 4755 f; [ "$(stat -c %a f)" = 4755 ]
            touch -d '2001-02-03 04:05:06.123456789' f
            [ "$(stat -c %y f)" = "2001-02-03 04:05:06.123456789 +0000" ] || [ "$(stat -c %Y.%y f | cut -d. -f2 | cut -c1-9)" != "" ]
            [ "$(stat -c '%.9Y' f 2>/dev/null || stat -c %Y f)" != "" ]
            python3 -c 'import os; st = os.stat("f"); assert st.st_mtime_ns % 1000000000 == 123456789, st.st_mtime_ns'
            # A symlink's own times, its target's untouched; a directory's times.
            ln -s f link; touch -h -d @1000000000 link
            [ "$(stat -c %Y link)" = 1000000000 ]; [ "$(stat -c %Y f)" = 981173106 ]
            touch -d @1100000000 d; [ "$(stat -c %Y d)" = 1100000000 ]
            setpriv --reuid=65534 --regid=65534 --clear-groups touch sticky/theirs
            [ "$(stat -c %U sticky/theirs)" = nobody ]
            ! setpriv --reuid=65534 --regid=65534 --clear-groups touch f 2>/dev/null || exit 1
            mknod cdev c 1 3; [ "$(stat -c %F cdev)" = "character special file" ]
            ! cat cdev 2>/dev/null || exit 1
            python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("sock"); s.listen()'
            [ "$(stat -c %F sock)" = socket ]
            """)
    }

    /// Runs the daemon with `fchmodat2` (system call 452) answered by `answer`, as an older
    /// kernel (`ENOSYS`) or a container's seccomp profile (`EPERM`) would.
    static let refusingFchmodat2 = """
        import errno, os, seccomp, sys
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        rules.add_rule(seccomp.ERRNO(getattr(errno, sys.argv[1])), 452)
        rules.load()
        os.execv(sys.argv[2], sys.argv[2:])
        """

    @Test("chmod and touch work where fchmodat2 is refused, through the descriptor's proc link",
          arguments: ["ENOSYS", "EPERM"])
    func modesWithoutFchmodat2(answer: String) throws {
        let vault = try TestVault()
        try vault.mount(launcher: ["/usr/bin/python3", "-c", Self.refusingFchmodat2, answer])
        defer { try? vault.unmount() }
        vault.check("""
            touch f; chmod 640 f; [ "$(stat -c %a f)" = 640 ]
            chmod 604 f; [ "$(stat -c %a f)" = 604 ]
            mkdir d; chmod 705 d; [ "$(stat -c %a d)" = 705 ]
            touch -d @1000000000 f; [ "$(stat -c %Y f)" = 1000000000 ]
            """)
    }

    @Test("a write by a user without CAP_FSETID drops set-ID bits, through the page cache, write-only and with O_DIRECT; root's keeps them")
    func setIDBitsOnWrite() throws {
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        // Write-only and O_DIRECT descriptors get direct I/O, where the kernel leaves the bits
        // to the daemon; a read-write one writes through the page cache.
        vault.check("""
            chmod 1777 .
            write() { setpriv "$@" /usr/bin/python3 -c '
            import mmap, os, sys
            flags = {"cached": os.O_RDWR, "writeonly": os.O_WRONLY, "direct": os.O_WRONLY | os.O_DIRECT}[sys.argv[2]]
            fd = os.open(sys.argv[1], flags)
            block = mmap.mmap(-1, 4096)
            block.write(b"w" * 4096)
            assert os.pwritev(fd, [block], 4096) == 4096
            os.close(fd)' "$file" "$how"; }
            nobody="--reuid=65534 --regid=65534 --clear-groups"
            for how in cached writeonly direct; do
                for case in 6775:775 4755:755 2775:775 2765:2765; do
                    file=$how-${case%%:*}
                    setpriv $nobody sh -c "head -c 8192 /dev/zero > $file && chmod ${case%%:*} $file"
                    write $nobody
                    [ "$(stat -c %a $file)" = "${case##*:}" ] || { echo "$file: $(stat -c %a $file) after nobody wrote"; exit 1; }
                    chmod ${case%%:*} $file
                    write --reuid=0
                    [ "$(stat -c %a $file)" = "${case%%:*}" ] || { echo "$file: $(stat -c %a $file) after root wrote"; exit 1; }
                    [ "$(head -c 8192 $file | tail -c 4096 | tr -d w | wc -c)" = 0 ]
                done
            done
            """)
    }

    @Test("set-ID bits after writes, truncates and fallocates by users in and out of the file's group, as ext4 drops them")
    func setIDBitsAsExt4() throws {
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        vault.check("python3 '\(CommandRunner.scriptPath("set-id-drops.py"))'")
    }

    @Test("access times as Linux keeps them under relatime (the default), noatime and nodiratime",
          arguments: ["relatime", "noatime", "nodiratime"])
    func accessTimes(rule: String) throws {
        let vault = try TestVault()
        try vault.mount(options: rule == "relatime" ? [] : [rule])
        defer { try? vault.unmount() }
        vault.check("python3 '\(CommandRunner.scriptPath("access-times.py"))' \(rule)")
    }

    @Test("O_DIRECT and write-only writes replace what other descriptors have in the page cache")
    func directWriteOverCachedPages() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        // Both kinds of descriptor bypass the page cache; pages that readers cached before
        // must not outlive the write, whether the reader keeps its descriptor or opens again.
        vault.check("""
            python3 -c '
            import mmap, os
            with open("f", "wb") as f:
                f.write(b"a" * 65536)
            cached = os.open("f", os.O_RDONLY)
            assert os.pread(cached, 65536, 0) == b"a" * 65536
            direct = os.open("f", os.O_RDWR | os.O_DIRECT)
            block = mmap.mmap(-1, 8192)
            block.write(b"b" * 8192)
            assert os.pwritev(direct, [block], 4096) == 8192
            back = mmap.mmap(-1, 65536)
            assert os.preadv(direct, [back], 0) == 65536 and back[4096:12288] == b"b" * 8192
            seen = os.pread(cached, 65536, 0)
            assert seen == b"a" * 4096 + b"b" * 8192 + b"a" * (65536 - 12288), "stale pages after O_DIRECT"
            writer = os.open("f", os.O_WRONLY)
            assert os.pwrite(writer, b"c" * 5000, 30000) == 5000
            expected = seen[:30000] + b"c" * 5000 + seen[35000:]
            assert os.pread(cached, 65536, 0) == expected, "stale pages after a write-only write"
            with open("f", "rb") as again:
                assert again.read() == expected, "stale pages for a new reader"
            with open("f", "ab") as appender:
                appender.write(b"d" * 100)
            assert os.pread(cached, 70000, 0) == expected + b"d" * 100, "stale size after an append"
            '
            """)
    }

    @Test("write-only descriptors (direct I/O) take data from sendfile, splice from a pipe and copy_file_range")
    func kernelCopiesIntoWriteOnlyFiles() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        // The kernel hands these writes over as its own pages, not a user buffer.
        vault.check("""
            head -c 3000001 /dev/urandom > /tmp/protfs-copy-source-$$
            trap 'rm -f /tmp/protfs-copy-source-$$' EXIT
            python3 -c '
            import os, sys
            source = sys.argv[1]
            def into(name):
                return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            src, dst = os.open(source, os.O_RDONLY), into("sent")
            while os.sendfile(dst, src, None, 1 << 20):
                pass
            os.close(dst)
            read_end, write_end = os.pipe()
            src, dst = os.open(source, os.O_RDONLY), into("spliced")
            while True:
                moved = os.splice(src, write_end, 65536)
                if not moved:
                    break
                while moved:
                    moved -= os.splice(read_end, dst, moved)
            os.close(dst)
            src, dst = os.open("sent", os.O_RDONLY), into("copied")
            left = os.fstat(src).st_size
            while left:
                left -= os.copy_file_range(src, dst, left)
            os.close(dst)
            ' /tmp/protfs-copy-source-$$
            cmp /tmp/protfs-copy-source-$$ sent
            cmp /tmp/protfs-copy-source-$$ spliced
            cmp /tmp/protfs-copy-source-$$ copied
            cp /tmp/protfs-copy-source-$$ with-cp
            cmp /tmp/protfs-copy-source-$$ with-cp
            """)
    }

    @Test("SQLite in WAL and rollback-journal modes")
    func sqlite() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("""
            for mode in wal delete; do
                sqlite3 db-$mode "PRAGMA journal_mode=$mode; CREATE TABLE t(x INTEGER, y TEXT);"
                for i in $(seq 1 20); do
                    sqlite3 db-$mode "BEGIN; INSERT INTO t SELECT value, hex(randomblob(100)) FROM generate_series(1, 200); COMMIT;" 2>/dev/null \\
                    || sqlite3 db-$mode "BEGIN; WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM c WHERE v < 200) INSERT INTO t SELECT v, hex(randomblob(100)) FROM c; COMMIT;"
                done
                [ "$(sqlite3 db-$mode 'SELECT count(*) FROM t')" = 4000 ]
                [ "$(sqlite3 db-$mode 'PRAGMA integrity_check')" = ok ]
            done
            """, timeout: 300)
    }
}
