#!/usr/bin/env python3
# Usage: sqlite-across-the-lock.py PROTFSCTL DATABASE JOURNAL_MODE PASSCODE_FILE (DATABASE in
# a completeUnlessOpen directory of the mount). The iOS background case: one connection,
# opened while unlocked, commits across a lock --now; meanwhile a new connection and a plain
# open get EACCES; after unlock a new connection sees every commit. Prints each outcome.
import errno, os, sqlite3, subprocess, sys
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
