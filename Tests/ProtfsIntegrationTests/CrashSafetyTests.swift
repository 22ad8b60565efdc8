import Foundation
import Testing

/// Issue 5, crash safety: `kill -9` of the daemon in the middle of heavy writes, re-classes
/// and `passwd`, then a remount. Files nobody was writing read back exactly; a file being
/// written holds, chunk by chunk, its contents before or after the write in flight, or EIO
/// for a torn chunk, never other data; the keybag is never lost.
@Suite("Crash safety: kill -9 of the daemon", .serialized)
struct CrashSafetyTests {
    /// Shared by the client scripts: deterministic contents, the operation log, and reads
    /// chunk by chunk with O_DIRECT (one chunk per request: a torn chunk fails alone).
    static let prelude = #"""
        import errno, hashlib, json, mmap, os, random, signal, struct, sys, threading, time
        CHUNK = 4096
        CLASS = "user.protfs.class"

        def payload(seed, size):
            return hashlib.shake_128(struct.pack("<Q", seed)).digest(size)

        def apply(data, op):
            """A write is ["write", offset, size, seed, bytes written]: the kernel splits a write
            at the end of a partial first page into several requests, so a crash between them
            leaves a short write, and the caller is told so."""
            if op[0] == "write":
                _, offset, size, seed, written = op
                grown = data.ljust(offset + written, b"\0")
                return grown[:offset] + payload(seed, size)[:written] + grown[offset + written:]
            return data[:op[1]].ljust(op[1], b"\0")

        def chunks(path):
            """Each chunk of the file as bytes, or "EIO"; read one request per chunk."""
            fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
            size = os.fstat(fd).st_size
            buffer = mmap.mmap(-1, CHUNK)
            found = []
            for offset in range(0, size, CHUNK):
                try:
                    count = os.preadv(fd, [buffer], offset)
                    found.append(bytes(buffer[:count]))
                except OSError as e:
                    if e.errno != errno.EIO:
                        raise
                    found.append("EIO")
            os.close(fd)
            return size, found

        """#

    /// Arguments: the mount point, the daemon's pid, a work directory outside the mount, the
    /// round. Makes this round's files (copies kept in the work directory), starts one writer
    /// per hot file and a re-classer, kills the daemon mid-flight, and logs what completed.
    static let writeAndKill = #"""
        MNT, PID, WORK, ROUND = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
        rng = random.Random(ROUND)
        CLASSES = ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen", "complete"]
        files = {}
        for protection_class in CLASSES:
            for kind, count in (("stable", 3), ("hot", 2), ("reclassed", 1)):
                for i in range(count):
                    name = "d-%s/r%d-%s-%d" % (protection_class, ROUND, kind, i)
                    data = payload(rng.getrandbits(64), rng.choice([0, 1, 4095, 4096, 4097, rng.randrange(60000)]))
                    with open(os.path.join(MNT, name), "wb") as f:
                        f.write(data)
                    with open(os.path.join(WORK, name.replace("/", "_")), "wb") as f:
                        f.write(data)
                    files[name] = kind
        log = {name: {"done": [], "inflight": None} for name, kind in files.items() if kind == "hot"}
        problems = []

        def write_hot(name, seed):
            local = random.Random(seed)
            fd = os.open(os.path.join(MNT, name), os.O_RDWR)
            entry = log[name]
            while True:
                if local.random() < 0.1:
                    op = ["truncate", local.randrange(50000)]
                else:
                    size = local.choice([1, 100, 4096, 5000, local.randrange(1, 20000)])
                    op = ["write", local.randrange(45000), size, local.getrandbits(64), size]
                entry["inflight"] = op
                try:
                    if op[0] == "write":
                        op[4] = os.pwrite(fd, payload(op[3], op[2]), op[1])
                    else:
                        os.ftruncate(fd, op[1])
                except OSError as e:
                    if e.errno not in (errno.ENOTCONN, errno.ECONNABORTED):
                        problems.append("%s: %s during %s" % (name, e, op))
                    break
                entry["done"].append(op)
                entry["inflight"] = None
            try:
                os.close(fd)
            except OSError:
                pass

        def reclass(names):
            classes = ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen"]
            turn = 0
            while True:
                turn += 1
                for name in names:
                    try:
                        os.setxattr(os.path.join(MNT, name), CLASS, classes[turn % 3].encode())
                    except OSError as e:
                        if e.errno not in (errno.ENOTCONN, errno.ECONNABORTED):
                            problems.append("re-class of %s: %s" % (name, e))
                        return

        threads = [threading.Thread(target=write_hot, args=(name, rng.getrandbits(64))) for name in log]
        threads.append(threading.Thread(target=reclass, args=([n for n, k in files.items() if k == "reclassed"],)))
        for thread in threads:
            thread.start()
        time.sleep(rng.uniform(0.3, 0.8))
        os.kill(PID, signal.SIGKILL)
        for thread in threads:
            thread.join(60)
        json.dump({"files": files, "log": log}, open(os.path.join(WORK, "round-%d.json" % ROUND), "w"))
        print("writes completed before the kill:", sum(len(e["done"]) for e in log.values()))
        print("in flight at the kill:", sum(1 for e in log.values() if e["inflight"]))
        for problem in problems:
            print("PROBLEM", problem)
        """#

    /// Arguments: the mount point, the work directory, the last round. Checks every round's
    /// files after the remount.
    static let verify = #"""
        MNT, WORK, LAST = sys.argv[1], sys.argv[2], int(sys.argv[3])

        def older_state(original, done, window, chunk):
            """Which earlier state the chunk holds, if any: tells a lost write from garbage."""
            state, matches = original, []
            for number, op in enumerate([None] + done):
                if op:
                    state = apply(state, op)
                if state[window].ljust(len(chunk), b"\0") == chunk:
                    matches.append(number)
            return "it holds the state after %d of %d completed operations" % (matches[-1], len(done)) if matches else "it matches no earlier state"

        torn = unconfirmed = 0
        for round_ in range(1, LAST + 1):
            record = json.load(open(os.path.join(WORK, "round-%d.json" % round_)))
            for name, kind in sorted(record["files"].items()):
                if kind == "hot" and round_ != LAST:
                    continue  # a file being written at an earlier crash: checked then
                original = open(os.path.join(WORK, name.replace("/", "_")), "rb").read()
                path = os.path.join(MNT, name)
                if kind == "reclassed":
                    got = os.getxattr(path, CLASS).decode()
                    if got not in ("none", "completeUntilFirstUserAuthentication", "completeUnlessOpen"):
                        print("WRONG class of %s: %s" % (name, got))
                if kind != "hot":
                    size, found = chunks(path)
                    if size != len(original) or b"".join(c if c != "EIO" else b"?" for c in found) != original:
                        print("WRONG %s (%s), not being written: %d bytes, expected %d; EIO in %s" % (
                            name, kind, size, len(original), [i for i, c in enumerate(found) if c == "EIO"]))
                    continue
                entry = record["log"][name]
                states = [original]
                for op in entry["done"]:
                    states = [apply(state, op) for state in states]
                # What the kernel did not confirm may be there too, request by request (so
                # chunk by chunk): the rest of a short write, and the write in flight.
                last = entry["done"][-1] if entry["done"] else None
                if last and last[0] == "write" and last[4] < last[2]:
                    previous = original
                    for op in entry["done"][:-1]:
                        previous = apply(previous, op)
                    states.append(apply(previous, last[:4] + [last[2]]))
                if entry["inflight"]:
                    states += [apply(state, entry["inflight"]) for state in states]
                size, found = chunks(path)
                sizes = sorted(len(state) for state in states)
                if not (size in sizes or (sizes[0] < size < sizes[-1] and size % CHUNK == 0)):
                    print("WRONG size of %s: %d, expected one of %s" % (name, size, sizes))
                for index, chunk in enumerate(found):
                    if chunk == "EIO":
                        torn += 1
                        continue
                    window = slice(index * CHUNK, index * CHUNK + len(chunk))
                    candidates = [state[window].ljust(len(chunk), b"\0") for state in states]
                    if chunk not in candidates:
                        print("WRONG chunk %d of %s: holds neither the confirmed writes nor the unconfirmed ones %s; %s" % (
                            index, name, entry["inflight"], older_state(original, entry["done"], window, chunk)))
                    elif chunk != candidates[0]:
                        unconfirmed += 1
        print("checked; torn chunks (EIO): %d, chunks holding unconfirmed writes: %d" % (torn, unconfirmed))
        """#

    @Test("kill -9 in the middle of heavy writes and re-classes, three times: nothing acknowledged is lost, nothing torn reads back")
    func killDuringHeavyWrites() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        try vault.makeClassDirectories()
        let work = vault.root.path + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        for round in 1...3 {
            let writer = CommandRunner.python(Self.prelude + Self.writeAndKill,
                                              [vault.mountpoint, String(vault.daemonPID), work, String(round)], timeout: 120)
            #expect(writer.succeeded && !writer.stdout.contains("PROBLEM"), "round \(round): \(writer.stdout)\(writer.stderr)")
            try vault.reapKilledDaemon()
            try vault.mount()
            let check = CommandRunner.python(Self.prelude + Self.verify, [vault.mountpoint, work, String(round)], timeout: 120)
            #expect(check.succeeded && check.stdout.hasPrefix("checked;"),
                    "round \(round): \(writer.stdout)\(check.stdout)\(check.stderr)\ndaemon: \(vault.daemonOutput)")
        }
    }

    @Test("kill -9 while passwd rewrites the keybag: the old or the new passcode opens the vault, and the data is there")
    func killDuringPasswd() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        try vault.makeClassDirectories(holding: ["f": "still here\n"])
        // One passwd run to its end says how long one takes on this machine now (two Argon2id
        // runs and the keybag's write: 0.3 s when idle, seconds on a loaded one), so that the
        // kills below land from before passwd has read its input to after it has finished,
        // across the window where the new keybag and the generation are written.
        let started = Date()
        let calibration = vault.protfsctl(["passwd", vault.mountpoint], stdin: "\(TestVault.passcode)\ncalibrated\n", timeout: 60)
        #expect(calibration.succeeded, "\(calibration.stderr)")
        let step = Date().timeIntervalSince(started) * 1.2 / 11
        var current = "calibrated"
        var changed = 0
        for round in 0..<12 {
            let next = "passcode of round \(round)"
            try vault.protfsctlPasswdThenKill(old: current, new: next, after: step * Double(round))
            try vault.reapKilledDaemon()
            var opened: String?
            for candidate in [current, next] {
                try (candidate + "\n").write(toFile: vault.passcodeFile, atomically: true, encoding: .utf8)
                do {
                    try vault.mount()
                    opened = candidate
                    break
                } catch {
                    #expect("\(error)".contains("exited with 3"), "round \(round): only a wrong passcode may fail: \(error)")
                }
            }
            guard let opened else {
                Issue.record("round \(round): neither the old nor the new passcode opens the vault: \(vault.daemonOutput)")
                return
            }
            if opened == next { changed += 1 }
            current = opened
            for protectionClass in TestVault.classNames {
                #expect(vault.shell("cat \(TestVault.classDirectory(protectionClass))/f").stdout == "still here\n",
                        "round \(round), class \(protectionClass)")
            }
        }
        #expect(changed > 0, "no passwd completed before its kill: the rounds do not cover the window")
    }

    @Test("a mount right after a crash waits for the dead daemon's auto-unmount helper, not refused by cached attributes")
    func mountRightAfterACrash() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        #expect(vault.shell("echo kept > f && ls > /dev/null").succeeded)
        // The helper is held until a second after the crash: meanwhile the dead mount stays,
        // and the kernel still answers a stat of its root from its attribute cache.
        let helper = try autoUnmountHelper(of: vault)
        kill(helper, SIGSTOP)
        defer { kill(helper, SIGCONT) }
        try vault.killDaemon()
        let release = Thread {
            usleep(1_000_000)
            kill(helper, SIGCONT)
        }
        release.start()
        try vault.mount()
        #expect(vault.shell("cat f").stdout == "kept\n", "\(vault.daemonOutput)")
    }

    func autoUnmountHelper(of vault: TestVault) throws -> pid_t {
        let found = CommandRunner.run("pgrep", ["-P", String(vault.daemonPID), "fusermount3"]).stdout
        guard let pid = pid_t(found.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("no auto-unmount helper beside the daemon: '\(found)'")
        }
        return pid
    }

    @Test("a mount right after a crash keeps its mount when the dead daemon's auto-unmount helper is slow")
    func slowAutoUnmountHelper() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        #expect(vault.shell("echo kept > f").succeeded)
        // The crashed daemon's fusermount3 helper is held for a second inside its unmount,
        // after it has found the dead mount: the window a mount must not fall into.
        let helper = try autoUnmountHelper(of: vault)
        let tracer = Process()
        tracer.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        tracer.arguments = ["-p", String(helper), "-e", "trace=umount2", "-e", "inject=umount2:delay_enter=1000000", "-o", "/dev/null"]
        try tracer.run()
        defer { if tracer.isRunning { tracer.terminate() } }
        usleep(500_000)
        try vault.killDaemon()
        try vault.mount()
        usleep(2_000_000)
        #expect(TestVault.isMounted(vault.mountpoint), "the new mount was taken away: \(vault.daemonOutput)")
        #expect(vault.shell("cat f").stdout == "kept\n")
    }
}

extension TestVault {
    /// Starts `protfsctl passwd` (old, then new passcode on its standard input) and kills
    /// the daemon `seconds` later, as a crash would.
    func protfsctlPasswdThenKill(old: String, new: String, after seconds: Double) throws {
        let passwd = Process()
        passwd.executableURL = URL(fileURLWithPath: Self.protfsctl)
        passwd.arguments = ["passwd", mountpoint]
        let input = Pipe()
        passwd.standardInput = input
        passwd.standardOutput = FileHandle.nullDevice
        passwd.standardError = FileHandle.nullDevice
        try passwd.run()
        input.fileHandleForWriting.write(Data("\(old)\n\(new)\n".utf8))
        try input.fileHandleForWriting.close()
        usleep(useconds_t(seconds * 1_000_000))
        try killDaemon()
        let deadline = Date().addingTimeInterval(30)
        while passwd.isRunning && Date() < deadline { usleep(10_000) }
        if passwd.isRunning { passwd.terminate() }
        passwd.waitUntilExit()
    }
}
