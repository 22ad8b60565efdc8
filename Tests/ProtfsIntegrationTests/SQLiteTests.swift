import Foundation
import Testing

/// Issue 5, a real database on the mount: SQLite in WAL and rollback-journal modes through a
/// kill -9 of its writer and of the daemon, and the iOS background case: a database in a
/// `completeUnlessOpen` directory that keeps committing across a lock.
@Suite("SQLite on the mount", .serialized)
struct SQLiteTests {
    /// The workload: transactions that move amounts between accounts (the total never
    /// changes) and record each move in a ledger that must match the balances, so a torn
    /// transaction shows.
    /// Arguments: the database, the journal mode, the seed; runs until killed or 2000 commits.
    static let workload = #"""
        import random, sqlite3, sys
        path, mode, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
        db = sqlite3.connect(path, isolation_level=None, timeout=30)
        db.execute("PRAGMA journal_mode=%s" % mode)
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE IF NOT EXISTS account(id INTEGER PRIMARY KEY, balance INTEGER)")
        db.execute("CREATE TABLE IF NOT EXISTS entry(id INTEGER PRIMARY KEY, account INTEGER, amount INTEGER, note BLOB)")
        db.execute("WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 50) "
                   "INSERT OR IGNORE INTO account SELECT v, 1000 FROM n")
        rng = random.Random(seed)
        print("ready", flush=True)
        for _ in range(2000):
            db.execute("BEGIN IMMEDIATE")
            for _ in range(rng.randrange(1, 8)):
                a, b, amount = rng.randrange(1, 51), rng.randrange(1, 51), rng.randrange(1, 100)
                db.execute("UPDATE account SET balance = balance - ? WHERE id = ?", (amount, a))
                db.execute("UPDATE account SET balance = balance + ? WHERE id = ?", (amount, b))
                db.execute("INSERT INTO entry(account, amount, note) VALUES (?, ?, randomblob(?))", (a, -amount, rng.randrange(10, 3000)))
                db.execute("INSERT INTO entry(account, amount, note) VALUES (?, ?, randomblob(?))", (b, amount, rng.randrange(10, 3000)))
            if rng.random() < 0.1:
                # Rewrites pages all over the file, as a vacuum-less database ages.
                db.execute("UPDATE entry SET note = randomblob(2000) WHERE id % 17 = ?", (rng.randrange(17),))
            db.execute("COMMIT")
        """#

    /// Arguments: the database. Prints the integrity check and whether the invariants hold.
    static let check = #"""
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        print("integrity", db.execute("PRAGMA integrity_check").fetchone()[0])
        total = db.execute("SELECT sum(balance) FROM account").fetchone()[0]
        mismatched = db.execute("SELECT count(*) FROM account WHERE balance - 1000 != (SELECT coalesce(sum(amount), 0) FROM entry WHERE entry.account = account.id)").fetchone()[0]
        print("total", total, "ledger mismatches", mismatched)
        """#

    /// Starts the workload, lets it commit for `seconds`, then kills the given process.
    func runWorkload(_ vault: TestVault, database: String, mode: String, seed: Int, seconds: Double,
                     kill victim: Victim) throws {
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = ["python3", "-c", Self.workload, database, mode, String(seed)]
        let output = Pipe()
        writer.standardOutput = output
        writer.standardError = FileHandle.nullDevice
        try writer.run()
        // Wait for "ready" (the schema exists), then let it commit for a while.
        _ = output.fileHandleForReading.availableData
        usleep(useconds_t(seconds * 1_000_000))
        switch victim {
        case .writer:
            kill(writer.processIdentifier, SIGKILL)
        case .daemon:
            try vault.killDaemon()
        }
        let deadline = Date().addingTimeInterval(30)
        while writer.isRunning && Date() < deadline { usleep(10_000) }
        if writer.isRunning { kill(writer.processIdentifier, SIGKILL) }
        writer.waitUntilExit()
        if victim == .daemon { try vault.mount() }
    }

    enum Victim: String, CaseIterable { case writer, daemon }

    @Test("kill -9 of the writer, then of the daemon, in the middle of commits: integrity_check is ok, no transaction torn",
          arguments: ["wal", "delete"])
    func killedMidTransaction(_ mode: String) throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount()
        let database = vault.path("db-\(mode)")
        for (round, victim) in [Victim.writer, .daemon, .writer, .daemon].enumerated() {
            try runWorkload(vault, database: database, mode: mode, seed: round, seconds: 0.4 + 0.3 * Double(round % 2), kill: victim)
            let result = CommandRunner.python(Self.check, [database])
            #expect(result.stdout == "integrity ok\ntotal 50000 ledger mismatches 0\n",
                    "\(mode), round \(round) (\(victim.rawValue) killed): \(result.stdout)\(result.stderr)")
        }
        expectRows(in: database, atLeast: 1)
    }

    func expectRows(in database: String, atLeast minimum: Int) {
        let rows = CommandRunner.run("sqlite3", [database, "SELECT count(*) FROM entry"])
        #expect((Int(rows.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= minimum, "\(rows.stdout)\(rows.stderr)")
    }

    /// The iOS background case. One connection, opened while unlocked, commits across a
    /// `lock --now`; meanwhile a new connection and a plain open get EACCES; after unlock a
    /// new connection sees every commit. Arguments: protfsctl, the database, the journal
    /// mode, the passcode file.
    static let background = #"""
        import errno, json, os, sqlite3, subprocess, sys
        CTL, path, mode, passcode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
        mnt = os.path.dirname(os.path.dirname(path))
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode=%s" % mode)
        db.execute("CREATE TABLE t(x INTEGER, y BLOB)")
        db.execute("INSERT INTO t VALUES (0, randomblob(100))")
        subprocess.run([CTL, "lock", "--now", mnt], check=True, timeout=60)
        committed = 0
        for i in range(1, 41):
            db.execute("BEGIN")
            db.execute("INSERT INTO t VALUES (?, randomblob(5000))", (i,))
            db.execute("COMMIT")
            committed += 1
        print("committed while locked", committed)
        try:
            os.close(os.open(path, os.O_RDONLY))
            print("open anew ok")
        except OSError as e:
            print("open anew", errno.errorcode[e.errno])
        try:
            sqlite3.connect(path).execute("SELECT count(*) FROM t").fetchone()
            print("new connection ok")
        except sqlite3.OperationalError as e:
            print("new connection", e)
        print("journal files now", sorted(n for n in os.listdir(os.path.dirname(path)) if n != "db"))
        print("still counts", db.execute("SELECT count(*) FROM t").fetchone()[0])
        subprocess.run([CTL, "unlock", mnt, "--passcode-file", passcode], check=True, timeout=60)
        db.close()
        other = sqlite3.connect(path)
        print("after unlock", other.execute("SELECT count(*) FROM t").fetchone()[0],
              other.execute("PRAGMA integrity_check").fetchone()[0])
        """#

    @Test("a database in a completeUnlessOpen directory keeps committing across the lock; a new connection gets EACCES",
          arguments: ["delete", "wal"])
    func backgroundDatabaseAcrossTheLock(_ mode: String) throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked) { try vault.makeClassDirectories() }
        let directory = TestVault.classDirectory("completeUnlessOpen")
        let client = CommandRunner.python(Self.background, [TestVault.protfsctl, vault.path("\(directory)/db"), mode,
                                                            vault.passcodeFile], timeout: 120)
        // WAL keeps its -wal and -shm open for the connection's life; the rollback journal
        // is created and deleted by every transaction: created while locked, which the class
        // allows.
        let journals = mode == "wal" ? "['db-shm', 'db-wal']" : "[]"
        let expected = """
            committed while locked 40
            open anew EACCES
            new connection unable to open database file
            journal files now \(journals)
            still counts 41
            after unlock 41 ok

            """
        #expect(client.stdout == expected, "\(client.stdout)\(client.stderr)\ndaemon: \(vault.daemonOutput)")
    }

    /// Which journal modes a `completeUnlessOpen` database can commit in while locked: those
    /// that keep a `-journal` between transactions reopen it for each one, which the class
    /// refuses, unless `locking_mode=EXCLUSIVE` keeps it open. Arguments: protfsctl, the
    /// directory, the passcode file.
    static let journalModes = #"""
        import os, sqlite3, subprocess, sys
        CTL, directory, passcode = sys.argv[1], sys.argv[2], sys.argv[3]
        mnt = os.path.dirname(directory)
        for mode in ["delete", "wal", "memory", "persist", "truncate"]:
            for exclusive in (False, True):
                db = sqlite3.connect(os.path.join(directory, "db-%s-%d" % (mode, exclusive)), isolation_level=None)
                if exclusive:
                    db.execute("PRAGMA locking_mode=EXCLUSIVE")
                db.execute("PRAGMA journal_mode=%s" % mode)
                db.execute("CREATE TABLE t(x)")
                db.execute("INSERT INTO t VALUES (0)")
                subprocess.run([CTL, "lock", "--now", mnt], check=True, timeout=60)
                try:
                    for i in range(1, 4):
                        db.execute("BEGIN")
                        db.execute("INSERT INTO t VALUES (?)", (i,))
                        db.execute("COMMIT")
                    outcome = "commits"
                except sqlite3.OperationalError as e:
                    outcome = str(e)
                    db.execute("ROLLBACK")
                subprocess.run([CTL, "unlock", mnt, "--passcode-file", passcode], check=True, timeout=60)
                print(mode, "exclusive" if exclusive else "normal", outcome)
                db.close()
        """#

    @Test("while locked, a completeUnlessOpen database commits in delete, WAL and memory journal modes; persist and truncate need locking_mode=EXCLUSIVE")
    func journalModesWhileLocked() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        try vault.mount(in: .unlocked) { try vault.makeClassDirectories() }
        let client = CommandRunner.python(Self.journalModes, [TestVault.protfsctl,
                                                              vault.path(TestVault.classDirectory("completeUnlessOpen")),
                                                              vault.passcodeFile], timeout: 120)
        let expected = """
            delete normal commits
            delete exclusive commits
            wal normal commits
            wal exclusive commits
            memory normal commits
            memory exclusive commits
            persist normal unable to open database file
            persist exclusive commits
            truncate normal unable to open database file
            truncate exclusive commits

            """
        #expect(client.stdout == expected, "\(client.stdout)\(client.stderr)")
    }
}
