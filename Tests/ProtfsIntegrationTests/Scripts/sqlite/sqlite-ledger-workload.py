#!/usr/bin/env python3
# Usage: sqlite-ledger-workload.py DATABASE JOURNAL_MODE SEED. Transactions that move amounts
# between accounts (the total never changes) and record each move in a ledger that must match
# the balances, so a torn transaction shows. Prints "ready" once the schema exists, then runs
# until killed or 2000 commits.
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
