#!/usr/bin/env python3
# Usage: sqlite-journal-modes-while-locked.py PROTFSCTL DIRECTORY PASSCODE_FILE (DIRECTORY a
# completeUnlessOpen directory of the mount). Prints which journal modes a database can commit
# in while locked: those that keep a -journal between transactions reopen it for each one,
# which the class refuses, unless locking_mode=EXCLUSIVE keeps it open.
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
