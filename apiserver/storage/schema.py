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

UPSERT_KV = (
    "INSERT INTO kv(key, revision, value) VALUES (?, ?, ?) "
    "ON CONFLICT(key) DO UPDATE SET revision = excluded.revision, value = excluded.value"
)
DELETE_KV = "DELETE FROM kv WHERE key = ?"
INSERT_LOG = "INSERT INTO log(revision, key, type, prev_revision, prev_value) VALUES (?, ?, ?, ?, ?)"
SET_META = "UPDATE meta SET value = ? WHERE name = ?"
GET_META = "SELECT name, value FROM meta"
SELECT_KV = "SELECT key, revision, value FROM kv"
MAX_LOG_REVISION = "SELECT MAX(revision) FROM log"
SELECT_LOG_AFTER = (
    "SELECT revision, key, type, prev_revision, prev_value FROM log WHERE revision > ? ORDER BY revision"
)
DELETE_LOG_RANGE = "DELETE FROM log WHERE revision > ? AND revision <= ?"
MIN_LOG_REVISION = "SELECT MIN(revision) FROM log"
