#!/usr/bin/env python3
# Usage: sqlite-ledger-check.py DATABASE. Prints the integrity check of a database
# sqlite-ledger-workload.py wrote, its total and how many balances disagree with the ledger.
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("integrity", db.execute("PRAGMA integrity_check").fetchone()[0])
total = db.execute("SELECT sum(balance) FROM account").fetchone()[0]
mismatched = db.execute("SELECT count(*) FROM account WHERE balance - 1000 != (SELECT coalesce(sum(amount), 0) FROM entry WHERE entry.account = account.id)").fetchone()[0]
print("total", total, "ledger mismatches", mismatched)
