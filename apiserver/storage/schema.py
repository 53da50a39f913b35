"""SQLite schema and statements of the store (layer L4, apiserver/storage only).

The layout follows kine's idea (a revision-keyed change log in SQLite) without its polling:

- `kv`   current state: one row per live key (key, revision of its last write, JSON value).
- `log`  change log: one row per revision (revision, key, type, prev_revision, prev_value).
         The log stores the object as it was BEFORE the change (an undo image), not after:
         the state after revision r is either the key's current `kv` value (if r is its latest
         write) or the `prev_value` of the key's next log row. So a create writes its JSON once
         (into `kv`), an update twice, a delete once, instead of 2/3/1 with after-images: on a
         disk-bound 100k-pod load that halves the bytes written per create. A DELETED event's
         object is its `prev_value` with `metadata.resourceVersion` set to the delete revision.
- `meta` the current revision and the compacted revision (the log holds every revision above
         it), plus the schema version.

Every write batch updates `kv`, appends to `log` and bumps `meta.revision` in one transaction,
so the three always agree after a crash. The database is created with
`auto_vacuum=INCREMENTAL` so compaction can hand freed pages back to the file system.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

# Event types as stored in log.type.
TYPE_ADDED = 0
TYPE_MODIFIED = 1
TYPE_DELETED = 2
TYPE_NAMES = ("ADDED", "MODIFIED", "DELETED")

# page_size and auto_vacuum must be chosen before the first table is created. 16 KiB pages
# suit ~2 KiB JSON objects: measured ~2x the insert throughput of the 4 KiB default.
CREATE_PRAGMAS = ("PRAGMA page_size=16384", "PRAGMA auto_vacuum=INCREMENTAL")

OPEN_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-65536",
    "PRAGMA busy_timeout=30000",
    # After a checkpoint, shrink a WAL that grew past 64 MiB (bursts) instead of keeping it.
    "PRAGMA journal_size_limit=67108864",
    # No checkpoint inside COMMIT: the store runs PASSIVE checkpoints on a second connection
    # (sqlite_store's checkpointer), so a commit costs the WAL append and its fsync only.
    "PRAGMA wal_autocheckpoint=0",
)

CREATE_TABLES = (
    "CREATE TABLE IF NOT EXISTS kv ( key TEXT PRIMARY KEY, revision INTEGER NOT NULL, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS log ("
    " revision INTEGER PRIMARY KEY,"
    " key TEXT NOT NULL,"
    " type INTEGER NOT NULL,"
    " prev_revision INTEGER NOT NULL,"
    " prev_value BLOB)",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO meta(name, value) VALUES ('revision', 0)",
    "INSERT OR IGNORE INTO meta(name, value) VALUES ('compacted', 0)",
    f"INSERT OR IGNORE INTO meta(name, value) VALUES ('schema_version', {SCHEMA_VERSION})",
)

SET_META = "UPDATE meta SET value = ? WHERE name = ?"
GET_META = "SELECT name, value FROM meta"
SELECT_KV = "SELECT key, revision, value FROM kv"
MAX_LOG_REVISION = "SELECT MAX(revision) FROM log"
SELECT_LOG_AFTER = (
    "SELECT revision, key, type, prev_revision, prev_value FROM log WHERE revision > ? ORDER BY revision"
)
DELETE_LOG_RANGE = "DELETE FROM log WHERE revision > ? AND revision <= ?"
MIN_LOG_REVISION = "SELECT MIN(revision) FROM log"



# The writer's batch statement. Python's sqlite3 re-takes the GIL after every sqlite3_step (each
# row of an executemany, each statement), and while the event loop thread is busy every re-take
# waits for the loop to let go of it: a 300-row executemany took 2.6 s of wall time (27 ms of CPU)
# during a scheduling burst, and every watcher waited behind it. So a whole batch is ONE
# statement: a multi-row INSERT into a TEMP view whose INSTEAD OF trigger applies each row (kv
# upsert or delete, log row, meta revision). In autocommit mode one statement is one atomic,
# durable transaction, so a batch costs one GIL round trip and one fsync. Columns per row:
# (revision, key, type, prev_revision, prev_value, value): `value` is the key's final JSON when
# this row is the key's last write in the batch, else NULL (kv untouched); a DELETED row deletes
# the kv row. Rows with a NULL revision are padding (statements come in power-of-two sizes so a
# few cached statements serve every batch size) and are skipped. TEMP objects live only in the
# writer's connection: the file's schema is unchanged.
BATCH_COLUMNS = 6
CREATE_BATCH_VIEW = (
    "CREATE TEMP VIEW IF NOT EXISTS batch(revision, key, type, prev_revision, prev_value, value) AS "
    "SELECT NULL, NULL, NULL, NULL, NULL, NULL WHERE 0",
    "CREATE TEMP TRIGGER IF NOT EXISTS batch_apply INSTEAD OF INSERT ON batch "
    "WHEN NEW.revision IS NOT NULL BEGIN "
    "INSERT INTO kv(key, revision, value) SELECT NEW.key, NEW.revision, NEW.value "
    "WHERE NEW.value IS NOT NULL "
    "ON CONFLICT(key) DO UPDATE SET revision = excluded.revision, value = excluded.value; "
    f"DELETE FROM kv WHERE NEW.type = {TYPE_DELETED} AND key = NEW.key; "
    "INSERT INTO log(revision, key, type, prev_revision, prev_value) "
    "VALUES (NEW.revision, NEW.key, NEW.type, NEW.prev_revision, NEW.prev_value); "
    "UPDATE meta SET value = NEW.revision WHERE name = 'revision'; "
    "END",
)


def insert_batch_rows(n: int) -> str:
    """The batch statement for n rows."""
    return "INSERT INTO batch(revision, key, type, prev_revision, prev_value, value) VALUES " + ",".join(
        ["(?,?,?,?,?,?)"] * n
    )
