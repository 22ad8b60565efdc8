#!/usr/bin/env bash
# Usage: sqlite-journal-modes.sh MOUNT. SQLite in WAL and rollback-journal modes: 20
# transactions of 200 rows each, all there, integrity_check ok.
set -euo pipefail
mnt=$1
cd "$mnt"
for mode in wal delete; do
    sqlite3 db-$mode "PRAGMA journal_mode=$mode; CREATE TABLE t(x INTEGER, y TEXT);"
    for i in $(seq 1 20); do
        sqlite3 db-$mode "BEGIN; INSERT INTO t SELECT value, hex(randomblob(100)) FROM generate_series(1, 200); COMMIT;" 2>/dev/null \
        || sqlite3 db-$mode "BEGIN; WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM c WHERE v < 200) INSERT INTO t SELECT v, hex(randomblob(100)) FROM c; COMMIT;"
    done
    [ "$(sqlite3 db-$mode 'SELECT count(*) FROM t')" = 4000 ]
    [ "$(sqlite3 db-$mode 'PRAGMA integrity_check')" = ok ]
done
