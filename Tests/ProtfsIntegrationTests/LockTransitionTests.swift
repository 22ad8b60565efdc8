import Foundation
import Testing

/// SPEC sections 2 and 3 across the lock: descriptors and mappings opened before it, writes
/// racing the end of the grace, remounts and auto-lock. A Python client holds what a shell
/// cannot (descriptors, mappings, threads) and calls `protfsctl` itself at the right moment.
@Suite("Handles, mappings and writes across the lock")
struct LockTransitionTests {
    /// Shared by every client script: arguments 1 and 2 are protfsctl and the mount point.
    static let prelude = #"""
        import errno, json, mmap, os, signal, subprocess, sys, threading, time
        CTL, MNT = sys.argv[1], sys.argv[2]

        def attempt(call):
            try:
                call()
                return "ok"
            except OSError as e:
                return errno.errorcode.get(e.errno, str(e.errno))

        def reads(fd, expected):
            try:
                data = os.pread(fd, 4096, 0)
            except OSError as e:
                return errno.errorcode.get(e.errno, str(e.errno))
            return "ok" if data == expected else "wrong data %r" % data

        def ctl(*arguments):
            done = subprocess.run([CTL, *arguments], capture_output=True, text=True, timeout=60)
            if done.returncode != 0:
                print("protfsctl", *arguments, "exited", done.returncode, done.stderr.strip())

        def state():
            done = subprocess.run([CTL, "status", MNT, "--json"], capture_output=True, text=True, timeout=60)
            try:
                return json.loads(done.stdout)["state"]
            except Exception:
                return "unknown (%s%s)" % (done.stdout.strip(), done.stderr.strip())

        def wait_for(wanted, seconds=20):
            deadline = time.time() + seconds
            while state() != wanted and time.time() < deadline:
                time.sleep(0.1)
            return state()

        def lock(*flags):
            # A client whose lock did not happen stops at once, threads and all.
            ctl("lock", *flags, MNT)
            now = state()
            if now not in (("locked",) if "--now" in flags else ("locking", "locked")):
                print("the lock left the state", now, flush=True)
                os._exit(1)

        """#

    func runClient(_ vault: TestVault, _ script: String, _ arguments: [String], timeout: TimeInterval = 90) -> CommandResult {
        CommandRunner.python(Self.prelude + script, [TestVault.protfsctl, vault.mountpoint] + arguments, timeout: timeout)
    }

    enum LockKind: String, CaseIterable { case now, graceEnds }

    /// How the handle is opened: through the page cache, or O_DIRECT (direct I/O: every read
    /// and write comes to the daemon, nothing of it is cached).
    enum Access: String, CaseIterable { case cached, direct }

    @Test("a complete handle opened before the lock: read and write get EACCES, fsync and close succeed",
          arguments: LockKind.allCases, Access.allCases)
    func completeHandleAcrossTheLock(_ kind: LockKind, _ access: Access) throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked, grace: kind == .now ? 600 : 2) { try vault.makeClassDirectories(holding: ["f": "complete\n"]) }
        let client = runClient(vault, #"""
            path, kind, access = sys.argv[3], sys.argv[4], sys.argv[5]
            fd = os.open(path, os.O_RDWR | (os.O_DIRECT if access == "direct" else 0))
            print("read before", reads(fd, b"complete\n"))
            print("write before", attempt(lambda: os.pwrite(fd, b"C", 0)))
            if kind == "now":
                lock("--now")
            else:
                lock()
                print("read in the grace", reads(fd, b"Complete\n"))
            print("state", wait_for("locked"))
            print("read after", reads(fd, b"Complete\n"))
            print("write after", attempt(lambda: os.pwrite(fd, b"X", 0)))
            print("fsync after", attempt(lambda: os.fsync(fd)))
            print("close", attempt(lambda: os.close(fd)))
            print("open anew", attempt(lambda: os.close(os.open(path, os.O_RDONLY))))
            """#, [vault.path("d-complete/f"), kind.rawValue, access.rawValue])
        let expected = ["read before ok", "write before ok"] + (kind == .graceEnds ? ["read in the grace ok"] : [])
            + ["state locked", "read after EACCES", "write after EACCES", "fsync after ok", "close ok", "open anew EACCES"]
        #expect(client.stdout.split(separator: "\n").map(String.init) == expected, "\(client.stdout)\(client.stderr)")
        try vault.unlock()
        #expect(vault.shell("cat d-complete/f").stdout == "Complete\n", "the write before the lock is kept, the one after is not")
    }

    @Test("a completeUnlessOpen handle keeps working across the lock until closed; no new open while locked")
    func completeUnlessOpenHandleAcrossTheLock() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked) { try vault.makeClassDirectories(holding: ["f": "unless open\n"]) }
        let client = runClient(vault, #"""
            path = sys.argv[3]
            fd = os.open(path, os.O_RDWR)
            lock("--now")
            print("read after", reads(fd, b"unless open\n"))
            print("write after", attempt(lambda: os.pwrite(fd, b"written while locked\n", 12)))
            print("read back", reads(fd, b"unless open\nwritten while locked\n"))
            print("open anew", attempt(lambda: os.close(os.open(path, os.O_RDONLY))))
            print("open anew to write", attempt(lambda: os.close(os.open(path, os.O_WRONLY))))
            print("read still", reads(fd, b"unless open\nwritten while locked\n"))
            print("close", attempt(lambda: os.close(fd)))
            print("open after close", attempt(lambda: os.close(os.open(path, os.O_RDONLY))))
            """#, [vault.path("d-completeUnlessOpen/f")])
        let expected = ["read after ok", "write after ok", "read back ok", "open anew EACCES",
                        "open anew to write EACCES", "read still ok", "close ok", "open after close EACCES"]
        #expect(client.stdout.split(separator: "\n").map(String.init) == expected, "\(client.stdout)\(client.stderr)")
        try vault.unlock()
        #expect(vault.shell("cat d-completeUnlessOpen/f").stdout == "unless open\nwritten while locked\n")
    }

    @Test("a completeUnlessOpen file created without the private key is readable after unlock",
          arguments: [MountState.locked, .beforeFirstUnlock])
    func completeUnlessOpenCreatedWhileLocked(_ state: MountState) throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: state) { try vault.makeClassDirectories() }
        let create = vault.shell("echo created > d-completeUnlessOpen/new && stat -c %s d-completeUnlessOpen/new")
        #expect(create.succeeded && create.stdout == "8\n", "\(create.stdout)\(create.stderr)")
        #expect(vault.protectionClass(of: "d-completeUnlessOpen/new") == "completeUnlessOpen")
        let reopen = vault.shell("cat d-completeUnlessOpen/new")
        #expect(!reopen.succeeded && reopen.stderr.contains("Permission denied"), "\(reopen.stdout)\(reopen.stderr)")
        try vault.unlock()
        #expect(vault.shell("cat d-completeUnlessOpen/new").stdout == "created\n")
    }

    @Test("a shared mapping of a complete file: written back at the lock, SIGBUS when touched after it")
    func mappingAcrossTheLock() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked) {
            try vault.makeClassDirectories(holding: ["mapped": String(repeating: ".", count: 8192)])
        }
        // The child maps, dirties and later touches the mapping; the parent locks in between
        // and reports how the child ended.
        let client = runClient(vault, #"""
            path = sys.argv[3]
            ready_r, ready_w = os.pipe()
            go_r, go_w = os.pipe()
            child = os.fork()
            if child == 0:
                os.close(ready_r)
                os.close(go_w)
                fd = os.open(path, os.O_RDWR)
                m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
                m[0:19] = b"written in the map\n"
                os.write(ready_w, b"r")
                os.read(go_r, 1)
                m[0]
                os._exit(0)
            os.close(ready_w)
            os.close(go_r)
            os.read(ready_r, 1)
            lock("--now")
            os.write(go_w, b"g")
            _, status = os.waitpid(child, 0)
            print("touch after the lock", signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "exit %d" % os.WEXITSTATUS(status))
            """#, [vault.path("d-complete/mapped")])
        #expect(client.stdout == "touch after the lock SIGBUS\n", "\(client.stdout)\(client.stderr)")
        try vault.unlock()
        let read = vault.shell("head -c 19 d-complete/mapped; stat -c %s d-complete/mapped")
        #expect(read.stdout == "written in the map\n8192\n", "\(read.stdout)\(read.stderr)")
    }

    @Test("writes and dirty mapped pages up to the end of the grace are all on disk after unlock")
    func nothingLostAtTheEndOfTheGrace() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked, grace: 2) {
            try vault.makeClassDirectories(holding: ["records": "", "mapped": String(repeating: ".", count: 4096)])
        }
        let client = runClient(vault, #"""
            path, mapped = sys.argv[3], sys.argv[4]
            fd = os.open(path, os.O_WRONLY)
            mfd = os.open(mapped, os.O_RDWR)
            m = mmap.mmap(mfd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            lock()
            print("state", state())
            m[0:21] = b"dirtied in the grace\n"
            written, outcome, deadline = 0, "nothing", time.time() + 20
            while time.time() < deadline:
                record = ("record %08d\n" % written).encode().ljust(4096, b".")
                try:
                    os.pwrite(fd, record, written * 4096)
                except OSError as e:
                    outcome = errno.errorcode.get(e.errno, str(e.errno))
                    break
                written += 1
                time.sleep(0.002)
            print("writes stopped by", outcome)
            print("state", state())
            m.close()
            print("close", attempt(lambda: os.close(mfd)), attempt(lambda: os.close(fd)))
            print("written", written, file=sys.stderr)
            """#, [vault.path("d-complete/records"), vault.path("d-complete/mapped")])
        #expect(client.stdout == "state locking\nwrites stopped by EACCES\nstate locked\nclose ok ok\n", "\(client.stdout)\(client.stderr)")
        let written = client.stderr.split(separator: "\n").last.flatMap { $0.hasPrefix("written ") ? Int($0.dropFirst(8)) : nil }
        let count = try #require(written, "\(client.stderr)")
        #expect(count > 0)
        try vault.unlock()
        let check = CommandRunner.python(#"""
            import sys
            path, count = sys.argv[1], int(sys.argv[2])
            data = open(path, "rb").read()
            bad = [i for i in range(count) if data[i * 4096:(i + 1) * 4096] != ("record %08d\n" % i).encode().ljust(4096, b".")]
            print("size", len(data) // 4096, "records, damaged", bad[:5])
            """#, [vault.path("d-complete/records"), String(count)])
        #expect(check.stdout == "size \(count) records, damaged []\n", "\(check.stdout)\(check.stderr)")
        #expect(vault.shell("head -c 21 d-complete/mapped").stdout == "dirtied in the grace\n")
    }

    @Test("8 threads doing I/O on complete files through the lock see success or EACCES, never corrupt data")
    func threadsThroughTheTransition() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked, grace: 1) {
            let zeros = String(repeating: "\0", count: 16 * 4096)
            try vault.makeClassDirectories(holding: Dictionary(uniqueKeysWithValues: (0..<8).map { ("t\($0)", zeros) }))
        }
        let client = runClient(vault, #"""
            directory, passcode_file = sys.argv[3], sys.argv[4]
            BLOCK, BLOCKS, THREADS = 4096, 16, 8
            def pattern(t, block, version):
                return ("thread %d block %d version %d|" % (t, block, version)).encode().ljust(BLOCK, b"#")
            paths = ["%s/t%d" % (directory, t) for t in range(THREADS)]
            fds = [os.open(p, os.O_RDWR) for p in paths]
            written = [[0] * BLOCKS for _ in range(THREADS)]  # last version written; 0 = the zeros prepared
            outcomes = [None] * THREADS
            stop = time.time() + 20
            def expected(t, block):
                version = written[t][block]
                return pattern(t, block, version) if version else bytes(BLOCK)
            def work(t):
                fd, version = fds[t], 0
                while time.time() < stop:
                    version += 1
                    block = version % BLOCKS
                    try:
                        os.pwrite(fd, pattern(t, block, version), block * BLOCK)
                        written[t][block] = version
                        if version % 4 == 0:
                            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # the next read reaches the daemon
                        other = (block + 5) % BLOCKS
                        if os.pread(fd, BLOCK, other * BLOCK) != expected(t, other):
                            outcomes[t] = "corrupt block %d" % other
                            return
                    except OSError as e:
                        outcomes[t] = errno.errorcode.get(e.errno, str(e.errno))
                        return
                outcomes[t] = "never refused"
            threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(THREADS)]
            for thread in threads:
                thread.start()
            time.sleep(0.5)
            lock()
            for thread in threads:
                thread.join(60)
            print("threads ended by", " ".join(sorted(set(str(o) for o in outcomes))))
            print("state", state())
            print("close", " ".join(sorted(set(attempt(lambda: os.close(fd)) for fd in fds))))
            ctl("unlock", MNT, "--passcode-file", passcode_file)
            print("state", state())
            damaged = []
            for t in range(THREADS):
                data = open(paths[t], "rb").read()
                if len(data) != BLOCK * BLOCKS:
                    damaged.append("t%d size %d" % (t, len(data)))
                damaged += ["t%d block %d: %r" % (t, b, data[b * BLOCK:b * BLOCK + 40])
                            for b in range(BLOCKS) if data[b * BLOCK:(b + 1) * BLOCK] != expected(t, b)]
            print("damaged", damaged[:8])
            """#, [vault.path("d-complete"), vault.passcodeFile])
        #expect(client.stdout == "threads ended by EACCES\nstate locked\nclose ok\nstate unlocked\ndamaged []\n",
                "\(client.stdout)\(client.stderr)")
        #expect(vault.daemon?.isRunning == true && TestVault.isMounted(vault.mountpoint), "the daemon stays up: \(vault.daemonOutput)")
    }

    @Test("unmount ends everything: a mount without the passcode is beforeFirstUnlock, whatever came before")
    func remountStartsBeforeFirstUnlock() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(passcode: true)
        #expect(try vault.state() == .unlocked)
        try vault.lock(now: true)
        try vault.unmount()
        try vault.mount(passcode: false)
        #expect(try vault.state() == .beforeFirstUnlock)
        try vault.unlock()
        try vault.unmount()
        try vault.mount(passcode: false)
        #expect(try vault.state() == .beforeFirstUnlock)
    }

    @Test("autolock=2,grace=0 locks after a few idle seconds")
    func autolock() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(passcode: true)
        try vault.makeClassDirectories(holding: ["f": "idle\n"])
        try vault.unmount()
        try vault.mount(passcode: true, options: ["autolock=2", "grace=0"])
        try vault.waitForState(.locked, within: 20)
        let read = vault.shell("cat d-complete/f")
        #expect(!read.succeeded && read.stderr.contains("Permission denied"), "\(read.stdout)\(read.stderr)")
        #expect(vault.shell("cat d-completeUntilFirstUserAuthentication/f").stdout == "idle\n")
    }
}
