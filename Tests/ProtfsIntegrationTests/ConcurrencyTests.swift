import Foundation
import Testing

/// Issue 5, concurrency: processes and threads hammering one file (disjoint ranges that
/// share chunks, appends, readers) and many files at once, shared mappings beside writes,
/// and lock cycles under load. Nothing torn, no write ext4 would keep is lost (checked
/// again after a remount, so the page cache cannot hide a loss), no deadlock (every client
/// has a deadline), and the daemon stays up. Run with `PROTFS_TEST_PROTFS` pointing at a
/// ThreadSanitizer build of the daemon, the tests also fail on any report it makes.
@Suite("Concurrency: many writers, one daemon", .serialized)
struct ConcurrencyTests {
    /// Shared by the clients: a byte pattern that tells, at every position, which version
    /// wrote it (so a reader can check any range it sees), and forking helpers.
    static let prelude = #"""
        import errno, hashlib, json, mmap, os, random, struct, sys, threading, time
        MNT = sys.argv[1]
        CHUNK = 4096

        CYCLE = bytes(7 * p % 251 + 1 for p in range(251))
        INVERSE_131, SHIFT = pow(131, -1, 251), 131 * pow(7, -1, 251) % 251

        def pattern(start, length, version):
            """Byte p of version v is (7p + 131v) mod 251 + 1: never zero, and v is recoverable.
            (It is the cycle of 7p shifted by 131v/7, hence the slicing.)"""
            offset = (start + SHIFT * version) % 251
            return (CYCLE * (length // 251 + 2))[offset:offset + length]

        def version_at(position, byte):
            return None if byte == 0 else ((byte - 1 - 7 * position) * INVERSE_131) % 251

        def in_processes(count, body):
            """Runs body(i) in `count` forked processes; the exit statuses, 0 for success."""
            children = []
            for i in range(count):
                pid = os.fork()
                if pid == 0:
                    try:
                        body(i)
                        os._exit(0)
                    except BaseException as e:
                        print("process %d: %r" % (i, e), flush=True)
                        os._exit(1)
                children.append(pid)
            return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]

        def in_threads(count, body):
            """Runs body(i) in `count` threads; raises with what failed."""
            failures = []
            def run(i):
                try:
                    body(i)
                except BaseException as e:
                    failures.append("thread %d: %r" % (i, e))
            threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if failures:
                raise RuntimeError("; ".join(failures))

        """#

    func run(_ vault: TestVault, _ script: String, _ arguments: [String] = [], timeout: TimeInterval = 120) -> CommandResult {
        CommandRunner.python(Self.prelude + script, [vault.mountpoint] + arguments, timeout: timeout)
    }

    /// The daemon is still serving and ThreadSanitizer (when built in) has nothing to say.
    func expectHealthyDaemon(_ vault: TestVault, _ context: String) {
        #expect(vault.daemon?.isRunning == true, "\(context): the daemon is gone: \(vault.daemonOutput)")
        #expect(!vault.daemonOutput.contains("WARNING: ThreadSanitizer"), "\(context): \(vault.daemonOutput)")
    }

    // MARK: one file, many writers

    /// Sixteen 3000-byte slots (neighbours share a chunk), each owned by one thread of four
    /// processes, rewritten version after version in pieces; readers check every byte they
    /// see; appenders add records to a log at the same time.
    static let oneFileWriters = #"""
        SLOTS, SLOT, VERSIONS = 16, 3000, 12
        shared, log = os.path.join(MNT, "shared"), os.path.join(MNT, "log")
        with open(shared, "wb") as f:
            f.write(pattern(0, SLOTS * SLOT, 0))
        open(log, "wb").close()
        done = threading.Event()
        bad_reads = []

        def read_and_check(i):
            rng = random.Random(i)
            fd = os.open(shared, os.O_RDONLY)
            while not done.is_set():
                start = rng.randrange(SLOTS * SLOT)
                data = os.pread(fd, rng.choice([1, 100, CHUNK, 3 * CHUNK + 5]), start)
                for k, byte in enumerate(data):
                    v = version_at(start + k, byte)
                    if v is None or v > VERSIONS:
                        bad_reads.append("byte %d read %d" % (start + k, byte))
                        break
            os.close(fd)

        def slot_writer(process, thread):
            rng = random.Random(process * 10 + thread)
            fd = os.open(shared, os.O_WRONLY)
            for slot in (process * 4 + thread * 2, process * 4 + thread * 2 + 1):
                for version in range(1, VERSIONS + 1):
                    cuts = sorted(rng.sample(range(1, SLOT), rng.randrange(0, 4)))
                    pieces = list(zip([0] + cuts, cuts + [SLOT]))
                    rng.shuffle(pieces)
                    for a, b in pieces:
                        start = slot * SLOT + a
                        os.pwrite(fd, pattern(start, b - a, version), start)
            os.close(fd)

        def appender(i):
            fd = os.open(log, os.O_WRONLY | os.O_APPEND)
            rng = random.Random(100 + i)
            for seq in range(150):
                length = rng.randrange(25, 4500)
                body = hashlib.shake_128(b"%d/%d" % (i, seq)).hexdigest(length)
                record = ("<%d %d %d %s>\n" % (i, seq, length, body)).encode()
                if os.write(fd, record) != len(record):
                    raise RuntimeError("short append")
            os.close(fd)

        readers = [threading.Thread(target=read_and_check, args=(i,)) for i in range(2)]
        for r in readers:
            r.start()
        statuses = in_processes(4, lambda p: in_threads(2, lambda t: slot_writer(p, t)))
        statuses += in_processes(3, appender)
        done.set()
        for r in readers:
            r.join()
        print("writers", statuses, "bad reads", bad_reads[:3])
        """#

    /// Checks the final state: every slot at its last version, every record whole and once.
    static let oneFileCheck = #"""
        SLOTS, SLOT, VERSIONS = 16, 3000, 12
        data = open(os.path.join(MNT, "shared"), "rb").read()
        print("shared", "ok" if data == pattern(0, SLOTS * SLOT, VERSIONS) else "WRONG (%d bytes)" % len(data))
        seen, problems = {}, []
        text = open(os.path.join(MNT, "log"), "rb").read().decode()
        for line in text.split("\n")[:-1]:
            i, seq, length, body = line[1:-1].split(" ")
            expected = hashlib.shake_128(b"%s/%s" % (i.encode(), seq.encode())).hexdigest(int(length))
            if not (line[0] == "<" and line[-1] == ">" and body == expected):
                problems.append(line[:60])
            seen.setdefault(int(i), []).append(int(seq))
        complete = all(seen.get(i) == list(range(150)) for i in range(3))
        print("log", "ok" if complete and not problems and text.endswith("\n") else "WRONG %s" % problems[:3])
        """#

    @Test("one file written by many threads and processes at once, with appenders and readers: nothing lost, nothing torn")
    func oneFileManyWriters() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        let writers = run(vault, Self.oneFileWriters)
        #expect(writers.stdout == "writers [0, 0, 0, 0, 0, 0, 0] bad reads []\n", "\(writers.stdout)\(writers.stderr)")
        let expected = "shared ok\nlog ok\n"
        #expect(run(vault, Self.oneFileCheck).stdout == expected)
        expectHealthyDaemon(vault, "one file")
        try vault.unmount()
        try vault.mount()
        let afterRemount = run(vault, Self.oneFileCheck)
        #expect(afterRemount.stdout == expected, "after a remount: \(afterRemount.stdout)\(afterRemount.stderr)")
    }

    // MARK: many files

    /// Twelve workers (three processes of four threads), each with its own directory and a
    /// model of it, create, write, truncate, rename and unlink files, and make and remove
    /// names in one shared directory; each checks its files at the end and saves what it
    /// expects (argument 2) for the check after the remount.
    static let manyFiles = #"""
        EXPECTED = sys.argv[2]
        os.mkdir(os.path.join(MNT, "common"))

        def worker(process, thread):
            number = process * 4 + thread
            rng = random.Random(number)
            home = os.path.join(MNT, "w%d" % number)
            os.mkdir(home)
            model = {}
            for step in range(300):
                name = "f%d" % rng.randrange(6)
                path = os.path.join(home, name)
                action = rng.choice(["write", "write", "truncate", "rename", "unlink", "common"])
                if action == "write":
                    offset, size = rng.randrange(3 * CHUNK), rng.randrange(1, 2 * CHUNK)
                    data = hashlib.shake_128(b"%d %d" % (number, step)).digest(size)
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
                    os.pwrite(fd, data, offset)
                    os.close(fd)
                    old = model.get(name, b"").ljust(offset, b"\0")
                    model[name] = old[:offset] + data + old[offset + size:]
                elif action == "truncate" and name in model:
                    size = rng.randrange(3 * CHUNK)
                    os.truncate(path, size)
                    model[name] = model[name][:size].ljust(size, b"\0")
                elif action == "rename" and name in model:
                    target = "f%d" % rng.randrange(6)
                    os.rename(path, os.path.join(home, target))
                    model[target] = model.pop(name)
                elif action == "unlink" and name in model:
                    os.unlink(path)
                    del model[name]
                elif action == "common":
                    shared_name = os.path.join(MNT, "common", "w%d-%d" % (number, step % 5))
                    if os.path.exists(shared_name):
                        os.unlink(shared_name)
                    else:
                        os.close(os.open(shared_name, os.O_CREAT | os.O_WRONLY, 0o644))
            if sorted(os.listdir(home)) != sorted(model):
                raise RuntimeError("listing of w%d: %s, model %s" % (number, sorted(os.listdir(home)), sorted(model)))
            for name, data in model.items():
                if open(os.path.join(home, name), "rb").read() != data:
                    raise RuntimeError("w%d/%s differs from the model" % (number, name))
            with open("%s.%d" % (EXPECTED, number), "w") as f:
                json.dump({name: hashlib.sha256(data).hexdigest() for name, data in model.items()}, f)

        print("workers", in_processes(3, lambda p: in_threads(4, lambda t: worker(p, t))))
        """#

    static let manyFilesCheck = #"""
        EXPECTED = sys.argv[2]
        wrong = []
        for number in range(12):
            expected = json.load(open("%s.%d" % (EXPECTED, number)))
            home = os.path.join(MNT, "w%d" % number)
            found = {name: hashlib.sha256(open(os.path.join(home, name), "rb").read()).hexdigest() for name in os.listdir(home)}
            if found != expected:
                wrong.append(number)
        print("checked", "ok" if not wrong else "WRONG in %s" % wrong)
        """#

    @Test("twelve workers in three processes create, write, truncate, rename and unlink their own files at once")
    func manyFilesAtOnce() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        let expected = vault.root.path + "/expected"
        let workers = run(vault, Self.manyFiles, [expected])
        #expect(workers.stdout == "workers [0, 0, 0]\n", "\(workers.stdout)\(workers.stderr)")
        expectHealthyDaemon(vault, "many files")
        try vault.unmount()
        try vault.mount()
        let check = run(vault, Self.manyFilesCheck, [expected])
        #expect(check.stdout == "checked ok\n", "\(check.stdout)\(check.stderr)")
    }

    // MARK: mappings beside writes

    /// One process writes the first half of a file through a shared mapping (written back
    /// by the kernel as it likes), another the second half with pwrite, version after version.
    static let mappedAndWritten = #"""
        path, HALF = os.path.join(MNT, "mapped"), 32 * CHUNK
        with open(path, "wb") as f:
            f.write(pattern(0, 2 * HALF, 0))

        def mapper(_):
            fd = os.open(path, os.O_RDWR)
            m = mmap.mmap(fd, 2 * HALF, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            rng = random.Random(1)
            for version in range(1, 41):
                for start in sorted(rng.sample(range(0, HALF, 1000), 8)) + [0]:
                    end = min(start + 1000, HALF)
                    m[start:end] = pattern(start, end - start, version)
                m[0:HALF] = pattern(0, HALF, version)
                if version % 10 == 0:
                    m.flush()
            m.flush()
            m.close()
            os.close(fd)

        def writer(_):
            fd = os.open(path, os.O_WRONLY)
            for version in range(1, 41):
                for start in range(HALF, 2 * HALF, 5000):
                    end = min(start + 5000, 2 * HALF)
                    os.pwrite(fd, pattern(start, end - start, version), start)
            os.close(fd)

        print("processes", in_processes(2, lambda i: (mapper, writer)[i](i)))
        """#

    @Test("a shared writable mapping and pwrite on the same file at once: both halves whole after a remount")
    func mappingBesideWrites() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        let clients = run(vault, Self.mappedAndWritten)
        #expect(clients.stdout == "processes [0, 0]\n", "\(clients.stdout)\(clients.stderr)")
        expectHealthyDaemon(vault, "mapping")
        try vault.unmount()
        try vault.mount()
        let check = run(vault, #"""
            data = open(os.path.join(MNT, "mapped"), "rb").read()
            print("ok" if data == pattern(0, 64 * CHUNK, 40) else "WRONG", len(data))
            """#)
        #expect(check.stdout == "ok 262144\n", "\(check.stdout)\(check.stderr)")
    }

    // MARK: the lock under load

    /// Threads write files of every class while the main thread locks (`--now`) and unlocks
    /// five times. Writes to `none` and `completeUntilFirstUserAuthentication` files never
    /// fail; `complete` and `completeUnlessOpen` writes fail only with EACCES (`complete`
    /// while locked; a `completeUnlessOpen` handle is kept, so never). Arguments: protfsctl,
    /// the passcode file.
    static let lockUnderLoad = #"""
        import subprocess
        CTL, PASSCODE = sys.argv[2], sys.argv[3]
        CLASSES = ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen", "complete"]
        for c in CLASSES:
            os.mkdir(os.path.join(MNT, c))
            os.setxattr(os.path.join(MNT, c), "user.protfs.class", c.encode())
        stop = threading.Event()
        results = {c: {"written": 0, "errors": set()} for c in CLASSES}

        def writer(i):
            c = CLASSES[i % 4]
            fd = os.open(os.path.join(MNT, c, "f%d" % i), os.O_RDWR | os.O_CREAT, 0o644)
            version = 0
            while not stop.is_set():
                version += 1
                try:
                    os.pwrite(fd, pattern(0, 3 * CHUNK + 7, version % 200), 0)
                    os.pread(fd, CHUNK, CHUNK)
                    results[c]["written"] += 1
                except OSError as e:
                    results[c]["errors"].add(errno.errorcode[e.errno])
            os.close(fd)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for cycle in range(5):
            time.sleep(0.3)
            subprocess.run([CTL, "lock", "--now", MNT], check=True, timeout=60)
            time.sleep(0.3)
            subprocess.run([CTL, "unlock", MNT, "--passcode-file", PASSCODE], check=True, timeout=60)
        time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join(60)
        for c in CLASSES:
            print(c, "wrote" if results[c]["written"] else "never wrote", sorted(results[c]["errors"]))
        """#

    @Test("five lock and unlock cycles while eight threads write files of every class")
    func lockCyclesUnderLoad() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked)
        let client = run(vault, Self.lockUnderLoad, [TestVault.protfsctl, vault.passcodeFile])
        let expected = """
            none wrote []
            completeUntilFirstUserAuthentication wrote []
            completeUnlessOpen wrote []
            complete wrote ['EACCES']

            """
        #expect(client.stdout == expected, "\(client.stdout)\(client.stderr)")
        expectHealthyDaemon(vault, "lock cycles")
    }
}
