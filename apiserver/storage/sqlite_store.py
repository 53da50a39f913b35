"""SqliteStore: the durable revisioned key-value store behind the apiserver (layer L4, storage).

Why: Kubernetes needs etcd semantics (one global revision, compare-and-swap writes, ordered
watch from a revision, 410 below the compaction floor). This module provides them on SQLite the
way kine does, minus kine's polling: the process that commits a write publishes the event.

Data flow:

    create/update/delete --(request queue)--> writer task
        writer: take everything queued (<= batch_max), check each op IN ORDER against the
        in-memory state plus a per-batch overlay, assign consecutive revisions, serialise with
        orjson, write kv + log + meta in ONE transaction - one SQL statement for up to 1,024
        rows (schema.CREATE_BATCH_VIEW) - committed with synchronous=FULL (on disk),
        then apply the overlay to memory, append the events to the history ring, resolve the
        callers' futures and publish the events to the broadcaster.
    get/list  -> served synchronously from memory (dict + a sortedcontainers.SortedList of keys;
                 a page starting at a continue key is found by bisection, O(log n)); next to
                 each object the store keeps its committed encoding (`encoded`: the bytes the
                 writer already made for SQLite, or the row read at start), so a JSON LIST is
                 written from those bytes without encoding any object again.
    start     -> every kv row and the history's log rows in one job on SQLite's thread, kept as
                 bytes: nothing is decoded before the server is ready. An object is decoded on
                 first read (a LIST decodes the next chunk of keys with it, GC paused and frozen),
                 the rest by `decode_in_background` once the server is up; a watch replaying the
                 history read at start decodes the entries it replays.
    watch     -> replay from the history ring, then live events from the broadcaster; both happen
                 synchronously on the loop, so nothing can slip in between (no gap, no dup).
    compaction-> a background task (and `compact()`) trims the ring, deletes old log rows in
                 small transactions queued through the same writer, then incremental_vacuum and
                 wal_checkpoint(TRUNCATE) so the files do not grow under steady churn.
    checkpoint-> NOT on the commit path. SQLite's automatic checkpoint runs inside the COMMIT that
                 crosses `wal_autocheckpoint` pages (it copies the WAL into the database file and
                 fsyncs it), so the writer - and every watcher waiting for that batch's events -
                 sat behind it whenever a commit crossed the threshold. (The multi-second stalls
                 measured during scheduling bursts had a second, larger cause, the GIL: see
                 schema.CREATE_BATCH_VIEW.) The writer connection runs with wal_autocheckpoint=0; after
                 each commit the writer adds the batch's estimated WAL pages to a counter, and
                 once ~1000 pages (SQLite's default threshold) are due a checkpointer task runs
                 wal_checkpoint(PASSIVE) on a second connection with its own thread. PASSIVE takes
                 no writer lock, so commits continue meanwhile. Durability is unchanged: a write is
                 acknowledged after its COMMIT fsynced the WAL (synchronous=FULL); the checkpoint
                 only moves already-durable pages into the main file (the checkpointer connection
                 is synchronous=FULL too, so the database file is fsynced before the WAL is reused).
                 If a long burst keeps the WAL from being fully checkpointed and it passes
                 `_WAL_HARD_LIMIT_PAGES`, one TRUNCATE checkpoint is queued through the writer
                 (a bounded, rare stall) so the WAL cannot grow without bound.

Group commit, worked example: 64 coroutines each await a create. While the writer's COMMIT of
batch N is in SQLite's thread, the callers of batch N-1 are already queueing again, so batch N+1
holds ~64 ops and costs one fsync: 64 durable writes per fsync instead of 1.

Ownership of objects (the fast option): `create`/`update` KEEP the dict they are given (no deep
copy) and set its `metadata.resourceVersion`; the caller must not mutate it after the call. The
returned dict, `get`/`list` results and event objects are shared with the store: never mutate
them, copy first. On a failed commit the dict's previous resourceVersion is restored.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import functools
import gc
import itertools
import logging
import os
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite
import orjson
from sortedcontainers import SortedList

from apiserver.storage import schema
from apiserver.storage.broadcaster import Broadcaster, StoreWatcher
from apiserver.storage.interface import (
    MAX_OBJECT_BYTES,
    SERVE_WRAP_LEVELS,
    KeyExistsError,
    KeyNotFoundError,
    ObjectTooLargeError,
    RevisionMismatchError,
    StorageError,
    StoreEvent,
    TooOldError,
    UnencodableObjectError,
    wrapped,
)
from minik3s.api.field_order import order_fields
from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock

logger = logging.getLogger(__name__)

_CREATE = 0
_UPDATE = 1
_DELETE = 2
_MISSING = object()
_COMPACT_BATCH = 500
# Free-page reclaim after compaction: 512 pages of 16 KiB = 8 MiB per step; a little free space
# is kept for reuse by the next writes.
_VACUUM_STEP_PAGES = 512
_VACUUM_KEEP_FREE_PAGES = 64
_MAX_VACUUM_STEPS = 10_000
# Background checkpoint: start one once this many WAL pages are estimated to be un-checkpointed
# (SQLite's default wal_autocheckpoint); force a blocking TRUNCATE through the writer when a
# PASSIVE one leaves more than the hard limit behind (16 KiB pages: 16 MiB and 1 GiB).
_CHECKPOINT_PAGES = 1000
_WAL_HARD_LIMIT_PAGES = 65_536
_PAGE_SIZE = 16384
# Rows per batch statement at most (1,024 x 6 parameters = 6,144 variables, inside SQLite's default
# limit of 32,766 since 3.32; a build with a lower limit gets fewer, see _rows_per_statement).
_MAX_ROWS_PER_STATEMENT = 1024
# Once a batch has been in SQLite's thread this long, the loop releases the GIL at most every
# _HAND_OVER_INTERVAL seconds until it is back (see _hand_over_gil). 10 ms: a burst's watch lag
# p99 ~45 ms (100 ms gave ~240 ms) at the same throughput; from 5 ms down the extra wake-ups
# cost throughput (docs/performance.md, "Session 24").
_HAND_OVER_AFTER = 0.01
_HAND_OVER_INTERVAL = 0.001
# A load of at least this many objects is frozen out of the cyclic GC (see start); smaller ones
# (tests, small clusters) are left to it, so a process that opens many small stores (a test
# session) does not freeze each one's garbage for good.
_FREEZE_MIN_OBJECTS = 10_000
# Objects loaded at start are decoded on first read, and the rest by `decode_in_background` in
# chunks of this many, with a pause between chunks so requests are served in between.
_DECODE_CHUNK = 500
_DECODE_PAUSE = 0.001

_dumps = orjson.dumps
_loads = orjson.loads


@dataclass(slots=True)
class StoreStats:
    """Counters for metrics and tests: committed batches (transactions) and operations."""

    batches: int = 0
    ops: int = 0
    failed_batches: int = 0
    # background PASSIVE checkpoints run (off the commit path) and the forced TRUNCATE ones
    checkpoints: int = 0
    forced_checkpoints: int = 0
    # the longest transaction (BEGIN..COMMIT, fsync included) on the writer's connection, seconds
    commit_max_seconds: float = 0.0


@dataclass(slots=True)
class _Op:
    kind: int
    key: str
    obj: JsonDict | None
    expected_rv: int | None
    fut: asyncio.Future[JsonDict]


@dataclass(slots=True)
class _LoadedEvent:
    """A history entry read at start, not decoded yet: the object's and the previous state's
    committed bytes (`obj` None for DELETED: the event's object is `prev` with the delete's
    revision) and the previous state's revision. `StoreWatcher` replays only `StoreEvent`s:
    `watch` decodes what it replays, `decode_in_background` the rest."""

    type: str
    key: str
    obj: bytes | None
    revision: int
    prev: bytes | None
    prev_revision: int


@dataclass(slots=True)
class _Call:
    """A maintenance job run by the writer between batches (never inside another transaction)."""

    fn: Callable[[aiosqlite.Connection], Awaitable[Any]]
    fut: asyncio.Future[Any]


class SqliteStore:
    """The `Store` protocol on SQLite: single writer with group commit, memory reads, watches."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        history_window: int = 100_000,
        compact_interval: float = 60.0,
        batch_max: int = 1000,
        clock: Clock | None = None,
        max_object_bytes: int = MAX_OBJECT_BYTES,
        fsync: bool = True,
    ) -> None:
        """`fsync=False` (etcd's --unsafe-no-fsync) commits with synchronous=OFF: a write
        survives the server process dying (the OS has it) but not the machine crashing before the
        OS flushed it. For throwaway clusters (test suites); the default is durable."""
        if history_window < 1:
            raise ValueError("history_window must be >= 1")
        self._path = os.fspath(path)
        self._window = history_window
        # Trim the ring in chunks so the O(n) `del list[:k]` is amortised.
        self._slack = max(1, min(4096, history_window // 8))
        self._compact_interval = compact_interval
        self._batch_max = max(1, batch_max)
        self._max_object = max_object_bytes
        self._clock = clock or Clock()
        self._synchronous = "FULL" if fsync else "OFF"

        self._db: aiosqlite.Connection | None = None
        # each current object's JSON as committed (the bytes written to SQLite or read at start):
        # a LIST answers with these instead of encoding the objects again, an update's undo image
        # is these, and an object loaded at start is decoded from them on first read
        self._encoded: dict[str, bytes] = {}
        # the decoded current objects: every key written since start, and those loaded at start
        # that were read (or decoded by `decode_in_background`); `_revs` holds every current key
        self._objects: dict[str, JsonDict] = {}
        self._revs: dict[str, int] = {}
        # every current key, sorted (etcd order): insert/remove O(log n), a prefix range by bisection
        self._keys: SortedList = SortedList()
        self._rev = 0
        # History ring: _hist[i].revision == _hist_floor + 1 + i (revisions are consecutive).
        # Entries below _hist_loaded are the ones read at start and may still be undecoded.
        self._hist: builtins.list[StoreEvent | _LoadedEvent] = []
        self._hist_loaded = 0
        # while some are: the states decoded so far by revision, so that an update's `prev` and
        # the previous entry's object stay one dict whichever of the two is decoded first
        self._hist_states: dict[int, JsonDict] = {}
        self._hist_floor = 0
        self._db_compacted = 0
        self._broadcaster = Broadcaster()
        self.stats = StoreStats()

        self._pending: deque[_Op | _Call] = deque()
        self._wake: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._decoder: asyncio.Task[None] | None = None
        self._freeze_decoded = False  # a large load: objects decoded later are frozen (_decode_keys)
        self._compactor: asyncio.Task[None] | None = None
        self._started = False
        self._closed = False
        self._compact_lock = asyncio.Lock()
        # background checkpointer (file databases in WAL mode only)
        self._ckpt_db: aiosqlite.Connection | None = None
        self._ckpt_task: asyncio.Task[None] | None = None
        self._ckpt_wake: asyncio.Event = asyncio.Event()
        self._wal_pages_due = 0
        self._rows_per_statement = 1
        self._in_thread = False
        self._hand_over_timer: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ properties

    @property
    def revision(self) -> int:
        """The newest committed revision."""
        return self._rev

    @property
    def compacted_revision(self) -> int:
        """Watches from a revision below this get TooOldError (the history ring's floor)."""
        return self._hist_floor

    @property
    def persisted_compacted_revision(self) -> int:
        """The change log in SQLite holds every revision above this one."""
        return self._db_compacted

    @property
    def path(self) -> str:
        return self._path

    @property
    def watcher_count(self) -> int:
        return len(self._broadcaster)

    def __len__(self) -> int:
        return len(self._revs)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Open the database, rebuild the in-memory state and history, start the writer."""
        if self._started:
            raise StorageError("store already started")
        self._started = True
        db = await aiosqlite.connect(self._path, isolation_level=None, iter_chunk_size=1024)
        self._db = db
        try:
            wal = await self._open_schema(db)
            with _gc_paused():
                await self._load(db)
                if len(self._revs) >= _FREEZE_MIN_OBJECTS:
                    # Everything just loaded lives as long as the store holds it and has no
                    # reference cycles: frozen out of the cyclic GC before collection resumes,
                    # the first automatic collection (its young generation held every loaded
                    # object) and the server's full collection before its own freeze no longer
                    # walk them (55,000 objects: 0.5 s + 1.4 s of a 2.7 s start, when the load
                    # decoded every object; now it holds their bytes, see decode_in_background).
                    gc.freeze()
            if wal:
                self._ckpt_db = await _open_checkpointer(self._path, self._synchronous)
        except BaseException:
            await db.close()
            self._db = None
            raise
        self._writer = asyncio.create_task(self._writer_loop(), name="storage-writer")
        if self._ckpt_db is not None:
            self._ckpt_task = asyncio.create_task(self._checkpointer_loop(), name="storage-checkpointer")
        if self._compact_interval > 0:
            self._compactor = asyncio.create_task(self._compactor_loop(), name="storage-compactor")
        logger.info(
            "store opened path=%s keys=%d revision=%d history_floor=%d",
            self._path,
            len(self._revs),
            self._rev,
            self._hist_floor,
        )

    async def close(self) -> None:
        """Finish queued writes, stop the writer and compactor, close watchers and SQLite."""
        if self._closed:
            return
        self._closed = True
        if self._decoder is not None:
            self._decoder.cancel()
            await asyncio.wait([self._decoder])
            self._decoder = None
        if self._compactor is not None:
            self._compactor.cancel()
            await asyncio.wait([self._compactor])
            self._compactor = None
        if self._writer is not None:
            self._wake_writer()
            await asyncio.wait([self._writer])
            self._writer = None
        if self._ckpt_task is not None:
            self._ckpt_task.cancel()
            await asyncio.wait([self._ckpt_task])
            self._ckpt_task = None
        if self._ckpt_db is not None:
            # closed before the writer's connection: the last connection to close checkpoints
            # the WAL into the database file and removes it
            await self._ckpt_db.close()
            self._ckpt_db = None
        self._broadcaster.close_all()
        if self._db is not None:
            await self._db.close()
            self._db = None
        logger.info("store closed path=%s revision=%d", self._path, self._rev)

    async def _open_schema(self, db: aiosqlite.Connection) -> bool:
        """Create/open the schema; True when the database runs in WAL mode (a file, not :memory:)."""
        async with db.execute("SELECT count(*) FROM sqlite_master") as cur:
            row = await cur.fetchone()
        if row is not None and row[0] == 0:
            for stmt in schema.CREATE_PRAGMAS:
                await db.execute(stmt)
        for stmt in schema.OPEN_PRAGMAS:
            await db.execute(stmt)
        await db.execute(f"PRAGMA synchronous={self._synchronous}")
        await db.execute("BEGIN IMMEDIATE")
        for stmt in schema.CREATE_TABLES:
            await db.execute(stmt)
        await db.execute("COMMIT")
        for stmt in schema.CREATE_BATCH_VIEW:
            await db.execute(stmt)
        self._rows_per_statement = await db._execute(_rows_per_statement, db._conn)  # type: ignore[no-untyped-call]
        async with db.execute("PRAGMA journal_mode") as cur:
            mode = await cur.fetchone()
        return mode is not None and str(mode[0]).lower() == "wal"

    async def _load(self, db: aiosqlite.Connection) -> None:
        async with db.execute(schema.GET_META) as cur:
            meta = {name: value for name, value in await cur.fetchall()}
        version = int(meta.get("schema_version", schema.SCHEMA_VERSION))
        if version != schema.SCHEMA_VERSION:
            raise StorageError(
                f"{self._path}: schema version {version}, this build reads {schema.SCHEMA_VERSION}"
            )
        rev = int(meta.get("revision", 0))
        compacted = int(meta.get("compacted", 0))

        # every row in one job on the connection's thread (not ~50 hops of 1,024-row chunks, each
        # a wait for the loop and the GIL). Nothing is decoded here: the store keeps each row's
        # bytes (what a JSON LIST sends) and decodes an object when it is first read
        # (`_decode`), or in the background once the server is up (`decode_in_background`).
        kv_rows: builtins.list[tuple[str, int, bytes]] = await db._execute(  # type: ignore[no-untyped-call]
            _fetch_all, db._conn, schema.SELECT_KV)
        self._encoded = encoded = {key: value for key, _r, value in kv_rows}
        self._revs = revs = {key: r for key, r, _value in kv_rows}
        self._objects = {}
        self._freeze_decoded = len(revs) >= _FREEZE_MIN_OBJECTS
        if kv_rows:
            rev = max(rev, max(revs.values()))
        del kv_rows
        self._keys = SortedList(encoded)

        async with db.execute(schema.MAX_LOG_REVISION) as cur:
            row = await cur.fetchone()
        if row is not None and row[0] is not None and row[0] > rev:
            rev = row[0]
        async with db.execute(schema.MIN_LOG_REVISION) as cur:
            row = await cur.fetchone()
        min_log = row[0] if row is not None and row[0] is not None else rev + 1
        self._db_compacted = max(compacted, min_log - 1)

        floor = max(compacted, rev - self._window)
        async with db.execute(schema.SELECT_LOG_AFTER, (floor,)) as cur:
            rows = list(await cur.fetchall())
        # Keep only the contiguous tail (revisions are consecutive unless the file was edited).
        for i in range(len(rows) - 1, 0, -1):
            if rows[i - 1][0] != rows[i][0] - 1:
                logger.warning("history gap before revision=%d; dropping older history", rows[i][0])
                rows = rows[i:]
                break
        if rows:
            floor = rows[0][0] - 1
        # The log holds undo images: the state after revision r of a key is the prev_value of the
        # key's next row (or the current kv value when r is the key's latest write). The ring
        # keeps those bytes; `watch` decodes the entries it replays.
        state_at: dict[int, bytes] = {}
        for _r, _key, _typ, prev_rev, prev_value in rows:
            if prev_rev > floor and prev_value is not None:
                state_at[prev_rev] = prev_value
        hist: builtins.list[StoreEvent | _LoadedEvent] = []
        for r, key, typ, prev_rev, prev_value in rows:
            prev: bytes | None = None
            if typ != schema.TYPE_ADDED:
                if prev_rev > floor:
                    prev = state_at.get(prev_rev)
                elif prev_value is not None:
                    prev = prev_value
            obj: bytes | None
            if typ == schema.TYPE_DELETED:
                obj = None
            elif revs.get(key) == r:
                obj = encoded[key]
            else:
                obj = state_at.get(r)
                if obj is None:
                    logger.warning("missing state for revision=%d key=%s; dropping older history", r, key)
                    hist.clear()
                    floor = r
                    continue
            hist.append(_LoadedEvent(schema.TYPE_NAMES[typ], key, obj, r, prev, prev_rev))
        if floor + len(hist) != rev:
            hist.clear()
            floor = rev
        self._rev = rev
        self._hist = hist
        self._hist_loaded = len(hist)
        self._hist_states = {}
        self._hist_floor = floor

    def decode_in_background(self) -> None:
        """Decode the objects loaded at start that nothing has read yet, then the history read
        at start (newest entries first), in chunks of `_DECODE_CHUNK` on the loop with a pause
        between them (so requests are answered in between), freezing a large load's decoded
        objects out of the cyclic GC as the load did before it kept bytes only. The server
        calls this once it is ready: the restart does not wait for 55,000 `orjson.loads`, and
        afterwards the process is as if it had decoded at start. Idempotent; `wait_decoded`
        awaits the end."""
        if self._decoder is None and not self._closed:
            self._decoder = asyncio.create_task(self._decode_rest(), name="storage-decoder")

    async def wait_decoded(self) -> None:
        """Until every object loaded at start is decoded (starts the background decoding)."""
        self.decode_in_background()
        if self._decoder is not None:
            await asyncio.shield(self._decoder)

    async def _decode_rest(self) -> None:
        objects = self._objects
        todo = [key for key in self._encoded if key not in objects]
        for i in range(0, len(todo), _DECODE_CHUNK):
            self._decode_keys(todo[i:i + _DECODE_CHUNK])
            await asyncio.sleep(_DECODE_PAUSE)
        entries = self._hist_loaded
        while self._hist_loaded > 0:  # then the history read at start, from its newest entries back
            self._decode_history(max(0, self._hist_loaded - _DECODE_CHUNK))
            await asyncio.sleep(_DECODE_PAUSE)
        logger.debug("store decoded objects=%d history=%d", len(todo), entries)

    def _decode_keys(self, keys: Iterable[str]) -> None:
        """Decode those of `keys` not decoded yet, with the cyclic GC paused, and freeze a large
        load's decoded objects out of it as the load did before it kept bytes only: decoding
        50,000 pods makes ~1.5 million containers, and without this the collections that follow
        walk them again and again (a first full LIST after a restart took 4.8 s instead of 1)."""
        objects = self._objects
        encoded = self._encoded
        with _gc_paused():
            for key in keys:
                if key not in objects:
                    data = encoded.get(key)
                    if data is not None:  # else deleted since the load
                        objects[key] = _loads(data)
            if self._freeze_decoded:
                gc.freeze()

    def _decode(self, key: str) -> JsonDict | None:
        """The current object under `key`, decoded from its committed bytes on first read."""
        data = self._encoded.get(key)
        if data is None:
            return None
        obj: JsonDict = _loads(data)
        self._objects[key] = obj
        return obj

    def _decode_from(self, key: str) -> JsonDict:
        """For a LIST reaching an undecoded object: it and the next keys, a chunk at a time
        (`_decode_keys`), as a LIST reads on. `key` is a current key."""
        self._decode_keys(itertools.islice(self._keys.irange(minimum=key), _DECODE_CHUNK))
        return self._objects[key]

    # ------------------------------------------------------------------ reads

    def get(self, key: str) -> JsonDict | None:
        """The current object (shared; never mutate) or None."""
        obj = self._objects.get(key)
        return obj if obj is not None else self._decode(key)

    def encoded(self, key: str) -> bytes | None:
        """The current object's JSON exactly as committed (orjson's encoding of what `get`
        returns), or None. Shared and immutable, as bytes are."""
        return self._encoded.get(key)

    def list(self, prefix: str) -> tuple[builtins.list[JsonDict], int]:
        """Current objects whose key starts with `prefix`, sorted by key; and the revision."""
        objects = self._objects
        decode = self._decode_from
        return [objects.get(k) or decode(k) for k in self._key_range(prefix, "")], self._rev

    def keys(self, prefix: str) -> builtins.list[str]:
        """Current keys under `prefix`, sorted."""
        return list(self._key_range(prefix, ""))

    def iter_after(self, prefix: str, start_after: str = "") -> Iterator[tuple[str, JsonDict]]:
        """(key, object) under `prefix` with key > `start_after`, sorted, lazily. The start is one
        bisection, so a page deep into a large list costs O(log n + page). Do not await while
        iterating (a commit between steps would change the key set)."""
        objects = self._objects
        for k in self._key_range(prefix, start_after):
            obj = objects.get(k)
            yield k, obj if obj is not None else self._decode_from(k)

    def count_after(self, prefix: str, start_after: str = "") -> int:
        """How many keys under `prefix` are > `start_after`: two bisections, O(log n)."""
        keys = self._keys
        lo = keys.bisect_right(start_after) if start_after > prefix else keys.bisect_left(prefix)
        hi = keys.bisect_left(_prefix_end(prefix)) if prefix else len(keys)
        return max(0, int(hi) - int(lo))

    def _key_range(self, prefix: str, start_after: str) -> Iterator[str]:
        if start_after > prefix:
            it = self._keys.irange(minimum=start_after, inclusive=(False, True))
        else:
            it = self._keys.irange(minimum=prefix)
        for k in it:
            if not k.startswith(prefix):
                return
            yield k

    # ------------------------------------------------------------------ writes

    async def create(self, key: str, obj: JsonDict) -> JsonDict:
        """Store a new object; sets metadata.resourceVersion. Raises KeyExistsError."""
        return await self._submit(_CREATE, key, obj, None)

    async def update(self, key: str, obj: JsonDict, *, expected_rv: int | None = None) -> JsonDict:
        """Replace the object; sets metadata.resourceVersion. Raises KeyNotFoundError,
        RevisionMismatchError (when expected_rv is given and differs)."""
        return await self._submit(_UPDATE, key, obj, expected_rv)

    async def delete(self, key: str, *, expected_rv: int | None = None) -> JsonDict:
        """Remove the object; returns its last state with the delete's resourceVersion."""
        return await self._submit(_DELETE, key, None, expected_rv)

    @property
    def running(self) -> bool:
        """Whether writes are accepted (started, not closed, the writer alive): the API's
        `etcd` health check."""
        return self._started and not self._closed and self._writer is not None and not self._writer.done()

    def _submit(
        self, kind: int, key: str, obj: JsonDict | None, expected_rv: int | None
    ) -> asyncio.Future[JsonDict]:
        if self._closed or self._writer is None or self._writer.done():
            raise StorageError("store is not running")
        fut: asyncio.Future[JsonDict] = asyncio.get_running_loop().create_future()
        self._pending.append(_Op(kind, key, obj, expected_rv, fut))
        self._wake_writer()
        return fut

    async def _call(self, fn: Callable[[aiosqlite.Connection], Awaitable[Any]]) -> Any:
        if self._closed or self._writer is None or self._writer.done():
            raise StorageError("store is not running")
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append(_Call(fn, fut))
        self._wake_writer()
        return await fut

    def _wake_writer(self) -> None:
        w = self._wake
        if w is not None and not w.done():
            w.set_result(None)

    async def _writer_loop(self) -> None:
        pending = self._pending
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not pending:
                    if self._closed:
                        return
                    self._wake = loop.create_future()
                    try:
                        await self._wake
                    finally:
                        self._wake = None
                    # One extra turn of the loop lets callers that were woken together with us
                    # queue their next write, so it joins this batch (group commit).
                    await asyncio.sleep(0)
                    continue
                item = pending[0]
                if type(item) is _Call:
                    pending.popleft()
                    await self._run_call(item)
                    continue
                batch: builtins.list[_Op] = []
                limit = self._batch_max
                while pending and len(batch) < limit:
                    item = pending[0]
                    if type(item) is not _Op:
                        break
                    pending.popleft()
                    batch.append(item)
                try:
                    await self._commit_batch(batch)
                except Exception:
                    # A bug after the commit: never leave callers hanging or the writer dead.
                    logger.exception("write batch crashed ops=%d", len(batch))
                    err = StorageError("internal error while applying a write batch")
                    for op in batch:
                        if not op.fut.done():
                            op.fut.set_exception(err)
                except asyncio.CancelledError:
                    # Cancelled mid-commit (shutdown without close()): whether the transaction
                    # landed is unknown, so the callers get an error rather than hanging.
                    err = StorageError("store stopped while the write was being committed")
                    for op in batch:
                        if not op.fut.done():
                            op.fut.set_exception(err)
                    raise
        finally:
            if pending:
                err = StorageError("store closed before the write was committed")
                while pending:
                    item = pending.popleft()
                    if not item.fut.done():
                        item.fut.set_exception(err)

    async def _run_call(self, call: _Call) -> None:
        if call.fut.done():
            return
        assert self._db is not None
        try:
            result = await call.fn(self._db)
        except Exception as e:  # handed to the caller, who decides what to do
            if not call.fut.done():
                call.fut.set_exception(e)
            return
        if not call.fut.done():
            call.fut.set_result(result)

    async def _commit_batch(self, batch: builtins.list[_Op]) -> None:
        objects = self._objects
        revs = self._revs
        encoded = self._encoded
        overlay: dict[str, tuple[int, JsonDict | None]] = {}
        final: dict[str, tuple[int, bytes | None]] = {}
        rev = self._rev
        events: builtins.list[StoreEvent] = []
        log_rows: builtins.list[tuple[int, str, int, int, bytes | None]] = []
        outcomes: builtins.list[tuple[asyncio.Future[JsonDict], JsonDict | None, Exception | None]] = []
        restore: builtins.list[tuple[JsonDict, Any]] = []

        try:
            for op in batch:
                fut = op.fut
                if fut.done():  # the caller went away before we got to it: do not apply
                    continue
                key = op.key
                staged = overlay.get(key)
                if staged is None:
                    cur_obj = objects.get(key)
                    if cur_obj is None:
                        cur_obj = self._decode(key)
                    cur_rev = revs.get(key, 0)
                    cur_data = encoded.get(key)
                else:
                    cur_rev, cur_obj = staged
                    cur_data = final[key][1]
                kind = op.kind
                if kind == _CREATE:
                    if cur_obj is not None:
                        outcomes.append((fut, None, KeyExistsError(key)))
                        continue
                    obj = op.obj
                    assert obj is not None
                    data = _stamp(obj, rev + 1, restore)
                    if data is None:
                        outcomes.append((fut, None, UnencodableObjectError(f"{key}: object is not JSON-serialisable")))
                        continue
                    if len(data) > self._max_object:
                        outcomes.append((fut, None, ObjectTooLargeError(key, len(data), self._max_object)))
                        continue
                    rev += 1
                    log_rows.append((rev, key, schema.TYPE_ADDED, 0, None))
                    final[key] = (rev, data)
                    overlay[key] = (rev, obj)
                    events.append(StoreEvent("ADDED", key, obj, rev, None))
                    outcomes.append((fut, obj, None))
                    continue
                if cur_obj is None:
                    outcomes.append((fut, None, KeyNotFoundError(key)))
                    continue
                exp = op.expected_rv
                if exp is not None and exp != cur_rev:
                    outcomes.append((fut, None, RevisionMismatchError(key, exp, cur_rev)))
                    continue
                if kind == _UPDATE:
                    obj = op.obj
                    assert obj is not None
                    if obj is cur_obj:
                        outcomes.append(
                            (
                                fut,
                                None,
                                StorageError(f"{key}: update with the stored object itself; copy it first"),
                            )
                        )
                        continue
                    data = _stamp(obj, rev + 1, restore)
                    if data is None:
                        outcomes.append((fut, None, UnencodableObjectError(f"{key}: object is not JSON-serialisable")))
                        continue
                    if len(data) > self._max_object:
                        outcomes.append((fut, None, ObjectTooLargeError(key, len(data), self._max_object)))
                        continue
                    rev += 1
                    log_rows.append((rev, key, schema.TYPE_MODIFIED, cur_rev,
                                     cur_data if cur_data is not None else _dumps(cur_obj)))
                    final[key] = (rev, data)
                    overlay[key] = (rev, obj)
                    events.append(StoreEvent("MODIFIED", key, obj, rev, cur_obj))
                    outcomes.append((fut, obj, None))
                else:
                    rev += 1
                    last = _with_rv(cur_obj, rev)
                    log_rows.append((rev, key, schema.TYPE_DELETED, cur_rev,
                                     cur_data if cur_data is not None else _dumps(cur_obj)))
                    final[key] = (rev, None)
                    overlay[key] = (rev, None)
                    events.append(StoreEvent("DELETED", key, last, rev, cur_obj))
                    outcomes.append((fut, last, None))

            if log_rows:
                await self._write(final, log_rows, rev)
        except Exception as e:
            for md, old in reversed(restore):
                if old is _MISSING:
                    md.pop("resourceVersion", None)
                else:
                    md["resourceVersion"] = old
            self.stats.failed_batches += 1
            logger.error("write batch failed ops=%d error=%s", len(batch), e)
            err = StorageError(f"commit failed: {e}")
            err.__cause__ = e
            for op in batch:
                if not op.fut.done():
                    op.fut.set_exception(err)
            return

        # Committed: apply to memory, extend history, answer callers, then publish.
        keys = self._keys
        for key, (r, obj) in overlay.items():
            if obj is None:
                if revs.pop(key, None) is not None:
                    objects.pop(key, None)
                    encoded.pop(key, None)
                    keys.discard(key)
            else:
                if key not in revs:
                    keys.add(key)
                objects[key] = obj
                revs[key] = r
                data = final[key][1]
                assert data is not None
                encoded[key] = data
        self._rev = rev
        if log_rows:
            self.stats.batches += 1
            self.stats.ops += len(log_rows)
            if self._ckpt_task is not None:
                self._note_wal_pages(final, log_rows)
        if events:
            hist = self._hist
            hist.extend(events)
            excess = len(hist) - self._window
            if excess >= self._slack:
                del hist[:excess]
                self._hist_floor += excess
                self._hist_loaded = max(0, self._hist_loaded - excess)
                if not self._hist_loaded:
                    self._hist_states = {}
        for fut, result, exc in outcomes:
            if fut.done():
                continue
            if exc is not None:
                fut.set_exception(exc)
            else:
                fut.set_result(result)  # type: ignore[arg-type]
        if events:
            self._broadcaster.publish(events)

    async def _write(
        self,
        final: dict[str, tuple[int, bytes | None]],
        log_rows: builtins.list[tuple[int, str, int, int, bytes | None]],
        rev: int,
    ) -> None:
        """One transaction: kv upserts/deletes (final state per key), log rows, meta revision.

        The whole transaction runs as ONE job on aiosqlite's connection thread (its
        `Connection._execute`, the primitive behind every aiosqlite call): one thread hop per
        batch instead of five measured ~25k vs ~11k creates/s; and inside it, one statement
        (schema.CREATE_BATCH_VIEW) for batches up to `_rows_per_statement` rows."""
        db = self._db
        assert db is not None
        rows = [
            (r, key, typ, prev_rev, prev_value, data if final_rev == r else None)
            for (r, key, typ, prev_rev, prev_value) in log_rows
            for final_rev, data in (final[key],)
        ]
        loop = asyncio.get_running_loop()
        self._in_thread = True
        timer = loop.call_later(_HAND_OVER_AFTER, self._hand_over_gil)
        try:
            took: float = await db._execute(  # type: ignore[no-untyped-call]
                _write_txn, db._conn, rows, self._rows_per_statement, self._clock.monotonic)
        finally:
            self._in_thread = False
            timer.cancel()
            if self._hand_over_timer is not None:
                self._hand_over_timer.cancel()
                self._hand_over_timer = None
        if took > self.stats.commit_max_seconds:
            self.stats.commit_max_seconds = took

    def _hand_over_gil(self) -> None:
        """While a batch has been in SQLite's thread for `_HAND_OVER_AFTER`, release the GIL
        every `_HAND_OVER_INTERVAL` until it is back.

        The thread needs the GIL back after each statement step and to hand the result to the
        loop; a busy loop otherwise lets go of it only when CPython forces a switch, which under
        load was measured at tens to hundreds of ms per take-back. `time.sleep(0)` releases it
        at once (a syscall, ~1 µs). These are timers, not a chain of `call_soon`s: an idle loop
        sleeps in its poll (the GIL released, the commit unhindered) instead of spinning, which
        had held every commit of an idle server ~100 ms whenever two requests overlapped."""
        self._hand_over_timer = None
        if not self._in_thread:
            return
        time.sleep(0)
        self._hand_over_timer = asyncio.get_running_loop().call_later(_HAND_OVER_INTERVAL, self._hand_over_gil)

    # ------------------------------------------------------------------ checkpoints

    def _note_wal_pages(
        self,
        final: dict[str, tuple[int, bytes | None]],
        log_rows: builtins.list[tuple[int, str, int, int, bytes | None]],
    ) -> None:
        """Add a committed batch's WAL pages (estimated: the bytes written in page units plus
        the b-tree pages a transaction touches at least) and wake the checkpointer when due."""
        nbytes = 0
        for _r, d in final.values():
            if d is not None:
                nbytes += len(d)
        for row in log_rows:
            pv = row[4]
            if pv is not None:
                nbytes += len(pv)
        self._wal_pages_due += 4 + len(final) // 64 + nbytes // _PAGE_SIZE
        if self._wal_pages_due >= _CHECKPOINT_PAGES:
            self._ckpt_wake.set()

    async def _checkpointer_loop(self) -> None:
        """Run PASSIVE checkpoints on the second connection whenever enough pages are due."""
        db = self._ckpt_db
        assert db is not None
        while True:
            await self._ckpt_wake.wait()
            self._ckpt_wake.clear()
            self._wal_pages_due = 0
            try:
                async with db.execute("PRAGMA wal_checkpoint(PASSIVE)") as cur:
                    row = await cur.fetchone()
            except sqlite3.Error as e:  # e.g. SQLITE_BUSY from a concurrent TRUNCATE: retry later
                logger.debug("background checkpoint failed error=%s", e)
                continue
            except Exception as e:  # noqa: BLE001 - never let the checkpointer die; retried on the next wake
                logger.warning("background checkpoint failed error=%s", e)
                continue
            self.stats.checkpoints += 1
            if row is None:
                continue
            _busy, log_frames, done_frames = (int(x) for x in row)
            left = log_frames - done_frames
            if left > 0:
                self._wal_pages_due += left
            if log_frames > _WAL_HARD_LIMIT_PAGES and left > 0:
                logger.info("WAL past its limit frames=%d left=%d; truncating through the writer", log_frames, left)
                self.stats.forced_checkpoints += 1
                try:
                    await self._call(_checkpoint_job)
                except StorageError:
                    return  # closing

    # ------------------------------------------------------------------ watch

    def watch(self, prefix: str, from_revision: int, *, queue_size: int = 1000) -> StoreWatcher:
        """Events with revision > from_revision for keys under prefix. Raises TooOldError."""
        if self._closed or self._writer is None:
            raise StorageError("store is not running")
        floor = self._hist_floor
        if from_revision < floor:
            raise TooOldError(from_revision, floor)
        hist = self._hist
        start = from_revision - floor
        replay: builtins.list[StoreEvent] = []
        if start < self._hist_loaded:
            self._decode_history(start)
        if start < len(hist):
            if prefix:
                replay = [ev for ev in hist[start:] if ev.key.startswith(prefix)]  # type: ignore[misc]
            else:
                replay = hist[start:]  # type: ignore[assignment]
        w = StoreWatcher(
            prefix,
            max(from_revision, self._rev),
            replay=replay,
            queue_size=max(1, queue_size),
            broadcaster=self._broadcaster,
        )
        self._broadcaster.subscribe(w)
        return w

    def _decode_history(self, start: int) -> None:
        """Decode the ring's entries from index `start` up to the end of those read at start,
        in place. States that were one dict before the restart are one again, in whatever order
        the pieces are decoded: an entry whose bytes are still the key's current encoding gets
        the current object, and each state (a revision) is decoded once (`_hist_states`), so an
        update's `prev` is the previous entry's object."""
        hist = self._hist
        encoded = self._encoded
        memo = self._hist_states

        def decoded(key: str, data: bytes, rev: int) -> JsonDict:
            obj = memo.get(rev)
            if obj is None:
                cur = self.get(key) if encoded.get(key) is data else None
                obj = memo[rev] = cur if cur is not None else _loads(data)
            return obj

        with _gc_paused():  # as for the objects (_decode_keys): a replay may decode 100,000 entries
            for i in range(start, self._hist_loaded):
                ev = hist[i]
                if isinstance(ev, StoreEvent):
                    continue
                prev = decoded(ev.key, ev.prev, ev.prev_revision) if ev.prev is not None else None
                if ev.obj is None:
                    obj = _with_rv(prev or {}, ev.revision)
                else:
                    obj = decoded(ev.key, ev.obj, ev.revision)
                hist[i] = StoreEvent(ev.type, ev.key, obj, ev.revision, prev)  # type: ignore[arg-type]
            if self._freeze_decoded:
                gc.freeze()
        self._hist_loaded = start
        if start == 0:
            self._hist_states = {}

    # ------------------------------------------------------------------ compaction

    async def compact(self, keep: int | None = None) -> int:
        """Drop history older than `current - keep` revisions (default: history_window).

        Trims the in-memory ring at once (watches from below the new floor get TooOldError),
        then deletes log rows in transactions of 500 revisions queued through the writer,
        reclaims free pages and truncates the WAL. Returns the new compacted revision.

        Example: revision 1200, keep=1000 -> floor 200; log rows 1..200 deleted in one batch.
        """
        keep = self._window if keep is None else max(0, keep)
        target = self._rev - keep
        if target > self._hist_floor:
            del self._hist[: target - self._hist_floor]
            self._hist_loaded = max(0, self._hist_loaded - (target - self._hist_floor))
            if not self._hist_loaded:
                self._hist_states = {}
            self._hist_floor = target
        async with self._compact_lock:
            deleted = 0
            while self._db_compacted < target:
                lo = self._db_compacted
                hi = min(lo + _COMPACT_BATCH, target)
                deleted += await self._call(_compact_range_job(lo, hi))
                self._db_compacted = hi
            if deleted:
                # Hand free pages back in small steps so queued writes run in between.
                for _ in range(_MAX_VACUUM_STEPS):
                    if await self._call(_vacuum_step_job) <= _VACUUM_KEEP_FREE_PAGES:
                        break
                await self._call(_checkpoint_job)
                logger.info("compacted revision=%d deleted_rows=%d", self._db_compacted, deleted)
        return self._hist_floor

    async def _compactor_loop(self) -> None:
        while True:
            await self._clock.sleep(self._compact_interval)
            try:
                await self.compact()
            except StorageError:
                return  # the store is closing
            except Exception:
                logger.exception("compaction failed; retrying next interval")


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause CPython's cyclic GC while loading: rebuilding 100k objects otherwise triggers
    repeated full collections (measured 3.6 s -> 1.0 s for 100k 2 KiB pods). Startup only."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _stamp(obj: JsonDict, rev: int, restore: list[tuple[JsonDict, Any]]) -> bytes | None:
    """Set metadata.resourceVersion (remembering the old value in `restore`) and serialise.
    Returns None (and undoes the stamp) when the object is not JSON-serialisable."""
    md = obj.get("metadata")
    if md is None:
        md = obj["metadata"] = {}
    old = md.get("resourceVersion", _MISSING)
    md["resourceVersion"] = str(rev)
    order_fields(obj)  # kube-apiserver's field order on the wire (minik3s.api.field_order)
    try:
        # encoded inside the levels it will be served in, so an object nested too deep to be
        # served (a watch event, a Table row) is refused here rather than failing every reader
        data = _dumps(wrapped(obj, SERVE_WRAP_LEVELS))[SERVE_WRAP_LEVELS:-SERVE_WRAP_LEVELS]
    except TypeError:
        if old is _MISSING:
            del md["resourceVersion"]
        else:
            md["resourceVersion"] = old
        return None
    restore.append((md, old))
    return data


def _with_rv(obj: JsonDict, rev: int) -> JsonDict:
    """A copy of `obj` (top level and metadata only) with metadata.resourceVersion = rev."""
    out = dict(obj)
    md = dict(obj.get("metadata") or {})
    md["resourceVersion"] = str(rev)
    out["metadata"] = md
    return out


def _write_txn(
    conn: sqlite3.Connection,
    rows: list[tuple[int, str, int, int, bytes | None, bytes | None]],
    per_statement: int,
    monotonic: Callable[[], float],
) -> float:
    """The batch's transaction on the writer's connection thread; returns its duration (s).

    Up to `per_statement` rows: one autocommit statement (atomic and durable on its own). More:
    BEGIN IMMEDIATE, statements of `per_statement` rows, COMMIT. Each statement's row count is
    padded up to a power of two with NULL rows the trigger skips (worked example: 300 rows ->
    one 512-row statement; 2,500 rows with 1,024 per statement -> 1,024 + 1,024 + 512)."""
    t = monotonic()
    if len(rows) <= per_statement:
        _execute_batch(conn, rows)
        return monotonic() - t
    conn.execute("BEGIN IMMEDIATE")
    try:
        for i in range(0, len(rows), per_statement):
            _execute_batch(conn, rows[i:i + per_statement])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return monotonic() - t


_PAD_ROW = (None,) * schema.BATCH_COLUMNS


@functools.cache
def _batch_sql(n: int) -> str:
    return schema.insert_batch_rows(n)


def _execute_batch(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    n = 1
    while n < len(rows):
        n <<= 1
    params = [v for row in rows for v in row]
    if n > len(rows):
        params.extend(_PAD_ROW * (n - len(rows)))
    conn.execute(_batch_sql(n), params)


def _fetch_all(conn: sqlite3.Connection, sql: str) -> list[Any]:
    return conn.execute(sql).fetchall()


def _rows_per_statement(conn: sqlite3.Connection) -> int:
    """Rows per batch statement: the largest power of two whose parameters fit SQLite's
    variable limit (>= 999 on every build), at most _MAX_ROWS_PER_STATEMENT."""
    limit = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    n = 1
    while n * 2 <= _MAX_ROWS_PER_STATEMENT and n * 2 * schema.BATCH_COLUMNS <= limit:
        n <<= 1
    return n


async def _rollback(db: aiosqlite.Connection) -> None:
    try:
        await db.execute("ROLLBACK")
    except Exception as e:  # no transaction left to roll back: nothing else to do
        logger.debug("rollback failed error=%s", e)


def _compact_range_job(lo: int, hi: int) -> Callable[[aiosqlite.Connection], Awaitable[int]]:
    async def job(db: aiosqlite.Connection) -> int:
        await db.execute("BEGIN IMMEDIATE")
        try:
            cur = await db.execute(schema.DELETE_LOG_RANGE, (lo, hi))
            n = cur.rowcount
            await cur.close()
            await db.execute(schema.SET_META, (hi, "compacted"))
            await db.execute("COMMIT")
        except BaseException:
            await _rollback(db)
            raise
        return max(0, n)

    return job


async def _vacuum_step_job(db: aiosqlite.Connection) -> int:
    """Release up to _VACUUM_STEP_PAGES free pages; return how many free pages remain."""
    async with db.execute(f"PRAGMA incremental_vacuum({_VACUUM_STEP_PAGES})") as cur:
        await cur.fetchall()
    async with db.execute("PRAGMA freelist_count") as cur:
        row = await cur.fetchone()
    return int(row[0]) if row is not None else 0


async def _open_checkpointer(path: str, synchronous: str = "FULL") -> aiosqlite.Connection:
    """The background checkpointer's own connection (and thread). It never writes rows; it
    checkpoints with synchronous=FULL (the database file is fsynced before the WAL is reused;
    OFF only for a store opened with fsync=False) and gives up at once when the writer holds a
    lock a checkpoint mode needs (busy_timeout=0)."""
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        for stmt in (f"PRAGMA synchronous={synchronous}", "PRAGMA busy_timeout=0", "PRAGMA wal_autocheckpoint=0"):
            await db.execute(stmt)
    except BaseException:
        await db.close()
        raise
    return db


async def _checkpoint_job(db: aiosqlite.Connection) -> None:
    async with db.execute("PRAGMA wal_checkpoint(TRUNCATE)") as cur:
        await cur.fetchall()


def _prefix_end(prefix: str) -> str:
    """The smallest string greater than every string that starts with `prefix`
    (worked example: "core/pods/ns1/" -> "core/pods/ns10": the last character + 1)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)
