"""SqliteStore CRUD, compare-and-swap, group-commit batches, failed commits, restart, compaction."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from apiserver.storage.interface import (
    KeyExistsError,
    KeyNotFoundError,
    RevisionMismatchError,
    StorageError,
    TooOldError,
)
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.utils.clock import FakeClock


def obj(name: str, namespace: str = "default", **extra: Any) -> dict[str, Any]:
    o: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
    }
    o.update(extra)
    return o


def key(name: str, namespace: str = "default") -> str:
    return f"core/pods/{namespace}/{name}"


def rv(o: dict[str, Any]) -> str:
    return str(o["metadata"]["resourceVersion"])


# ---------------------------------------------------------------------------- CRUD


async def test_create_get_update_delete_round_trip(store: SqliteStore) -> None:
    assert store.revision == 0
    created = await store.create(key("a"), obj("a", spec={"x": 1}))
    assert rv(created) == "1"
    assert store.get(key("a")) == created
    assert store.revision == 1

    updated = await store.update(key("a"), obj("a", spec={"x": 2}), expected_rv=1)
    assert rv(updated) == "2"
    assert store.get(key("a"))["spec"] == {"x": 2}  # type: ignore[index]

    deleted = await store.delete(key("a"), expected_rv=2)
    assert rv(deleted) == "3"
    assert deleted["spec"] == {"x": 2}
    assert store.get(key("a")) is None
    assert store.list("core/pods/") == ([], 3)


async def test_delete_returns_a_copy_and_leaves_the_previous_object_untouched(store: SqliteStore) -> None:
    created = await store.create(key("a"), obj("a"))
    deleted = await store.delete(key("a"))
    assert rv(deleted) == "2"
    assert rv(created) == "1", "the shared previous object must not be mutated"


@pytest.mark.parametrize(
    ("setup", "op", "error"),
    [
        pytest.param(["a"], ("create", "a", None), KeyExistsError, id="create-existing-key-already-exists"),
        pytest.param([], ("update", "a", None), KeyNotFoundError, id="update-missing-key-not-found"),
        pytest.param([], ("delete", "a", None), KeyNotFoundError, id="delete-missing-key-not-found"),
        pytest.param(["a"], ("update", "a", 7), RevisionMismatchError, id="update-with-stale-rv-conflicts"),
        pytest.param(["a"], ("delete", "a", 7), RevisionMismatchError, id="delete-with-stale-rv-conflicts"),
    ],
)
async def test_write_errors(
    store: SqliteStore, setup: list[str], op: tuple[str, str, int | None], error: type[Exception]
) -> None:
    for name in setup:
        await store.create(key(name), obj(name))
    before = store.revision
    verb, name, expected = op
    with pytest.raises(error):
        if verb == "create":
            await store.create(key(name), obj(name))
        elif verb == "update":
            await store.update(key(name), obj(name), expected_rv=expected)
        else:
            await store.delete(key(name), expected_rv=expected)
    assert store.revision == before, "a rejected write must not consume a revision"


async def test_revision_mismatch_reports_expected_and_actual(store: SqliteStore) -> None:
    await store.create(key("a"), obj("a"))
    with pytest.raises(RevisionMismatchError) as ei:
        await store.update(key("a"), obj("a"), expected_rv=5)
    assert (ei.value.expected, ei.value.actual) == (5, 1)


async def test_unconditional_update_ignores_revision(store: SqliteStore) -> None:
    await store.create(key("a"), obj("a"))
    await store.update(key("a"), obj("a", spec={"v": 1}))
    out = await store.update(key("a"), obj("a", spec={"v": 2}))
    assert rv(out) == "3"


async def test_list_is_sorted_by_key_and_scoped_by_prefix(store: SqliteStore) -> None:
    names = [("ns10", "b"), ("ns1", "z"), ("ns1", "a"), ("ns2", "m"), ("ns1", "m")]
    for ns, name in names:
        await store.create(key(name, ns), obj(name, ns))
    await store.create("core/nodes//n1", {"kind": "Node", "metadata": {"name": "n1"}})

    items, rev = store.list("core/pods/ns1/")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [
        ("ns1", "a"),
        ("ns1", "m"),
        ("ns1", "z"),
    ]
    assert rev == 6
    all_pods, _ = store.list("core/pods/")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in all_pods] == [
        ("ns1", "a"),
        ("ns1", "m"),
        ("ns1", "z"),
        ("ns10", "b"),
        ("ns2", "m"),
    ]
    assert [i["metadata"]["name"] for i in store.list("core/nodes/")[0]] == ["n1"]
    assert store.list("apps/deployments/")[0] == []


async def test_list_reflects_deletes_and_recreates(store: SqliteStore) -> None:
    # Enough keys to span several index chunks; reversed so inserts land mid-index.
    await asyncio.gather(*(store.create(key(f"p{i:05d}"), obj(f"p{i:05d}")) for i in reversed(range(3000))))
    await asyncio.gather(*(store.delete(key(f"p{i:05d}")) for i in range(0, 3000, 2)))
    await store.create(key("p00000"), obj("p00000"))
    names = [i["metadata"]["name"] for i in store.list("core/pods/default/")[0]]
    assert names == ["p00000"] + [f"p{i:05d}" for i in range(1, 3000, 2)]


# ---------------------------------------------------------------------------- batching


async def test_ops_queued_together_commit_as_one_batch_and_see_each_other(store: SqliteStore) -> None:
    batches_before = store.stats.batches
    created, updated, conflicted, deleted, recreated = await asyncio.gather(
        store.create(key("a"), obj("a", spec={"v": 1})),
        store.update(key("a"), obj("a", spec={"v": 2}), expected_rv=1),
        store.update(key("a"), obj("a", spec={"v": 3}), expected_rv=1),
        store.delete(key("a"), expected_rv=2),
        store.create(key("a"), obj("a", spec={"v": 4})),
        return_exceptions=True,
    )
    assert store.stats.batches == batches_before + 1, "all five ops should share one transaction"
    assert rv(created) == "1"  # type: ignore[arg-type]
    assert rv(updated) == "2"  # type: ignore[arg-type]
    assert isinstance(conflicted, RevisionMismatchError)
    assert (conflicted.expected, conflicted.actual) == (1, 2)
    assert rv(deleted) == "3" and deleted["spec"] == {"v": 2}  # type: ignore[index,arg-type]
    assert rv(recreated) == "4"  # type: ignore[arg-type]
    assert store.get(key("a"))["spec"] == {"v": 4}  # type: ignore[index]
    assert store.revision == 4

    # The database agrees with memory after a restart.
    path = store.path
    await store.close()
    again = SqliteStore(path, compact_interval=0)
    await again.start()
    try:
        assert again.get(key("a")) == {
            **obj("a", spec={"v": 4}),
            "metadata": {"name": "a", "namespace": "default", "resourceVersion": "4"},
        }
        assert again.revision == 4
    finally:
        await again.close()


async def test_batch_max_splits_large_bursts(open_store: Any) -> None:
    store = await open_store(batch_max=10)
    await asyncio.gather(*(store.create(key(f"p{i}"), obj(f"p{i}")) for i in range(35)))
    assert store.stats.batches >= 4
    assert store.revision == 35


async def test_failed_commit_fails_the_whole_batch_and_leaves_state_untouched(
    open_store: Any, db_path: Path
) -> None:
    store = await open_store()
    await store.create(key("keep"), obj("keep"))
    await store.close()
    conn = sqlite3.connect(db_path)
    conn.execute(
        "CREATE TRIGGER inject_failure BEFORE INSERT ON log WHEN NEW.key LIKE '%/boom' "
        "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
    )
    conn.commit()
    conn.close()

    store = await open_store()
    watcher = store.watch("", store.revision)
    a, boom, upd = obj("a"), obj("boom"), obj("keep", spec={"changed": True})
    results = await asyncio.gather(
        store.create(key("a"), a),
        store.create(key("boom"), boom),
        store.update(key("keep"), upd),
        return_exceptions=True,
    )
    assert all(isinstance(r, StorageError) for r in results), results
    assert "injected failure" in str(results[0])
    assert store.revision == 1
    assert store.get(key("a")) is None
    assert store.get(key("keep"))["metadata"]["resourceVersion"] == "1"  # type: ignore[index]
    assert "spec" not in store.get(key("keep"))  # type: ignore[operator]
    assert [i["metadata"]["name"] for i in store.list("core/pods/")[0]] == ["keep"]
    assert "resourceVersion" not in a["metadata"], "the caller's dict is restored"

    # The store keeps working, and the failed batch left no revision hole or event.
    created = await store.create(key("a"), obj("a"))
    assert rv(created) == "2"
    ev = await asyncio.wait_for(watcher.__anext__(), 5)
    assert (ev.type, ev.key, ev.revision) == ("ADDED", key("a"), 2)


async def test_unserialisable_object_fails_only_its_own_request(store: SqliteStore) -> None:
    bad = obj("bad", spec={"x": object()})
    good, err = await asyncio.gather(
        store.create(key("good"), obj("good")),
        store.create(key("bad"), bad),
        return_exceptions=True,
    )
    assert isinstance(err, StorageError)
    assert rv(good) == "1"  # type: ignore[arg-type]
    assert "resourceVersion" not in bad["metadata"]
    assert store.revision == 1


async def test_cancelled_caller_before_commit_is_not_applied(store: SqliteStore) -> None:
    task = asyncio.create_task(store.create(key("a"), obj("a")))
    await asyncio.sleep(0)  # the create is queued
    task.cancel()
    other = await store.create(key("b"), obj("b"))
    assert store.get(key("a")) is None
    assert rv(other) == "1"


async def test_writes_after_close_are_rejected(store: SqliteStore) -> None:
    await store.close()
    with pytest.raises(StorageError):
        await store.create(key("a"), obj("a"))


async def test_close_finishes_queued_writes(open_store: Any) -> None:
    store = await open_store()
    tasks = [asyncio.create_task(store.create(key(f"p{i}"), obj(f"p{i}"))) for i in range(50)]
    await asyncio.sleep(0)
    await store.close()
    assert all(rv(t.result()) for t in tasks)
    again = await open_store()
    assert len(again.list("core/pods/")[0]) == 50
    assert again.revision == 50


# ---------------------------------------------------------------------------- restart


async def test_restart_keeps_state_and_revision_continues(open_store: Any) -> None:
    store = await open_store()
    await store.create(key("a"), obj("a"))
    await store.create(key("b"), obj("b"))
    await store.update(key("a"), obj("a", spec={"v": 2}))
    await store.delete(key("b"))
    await store.close()

    store = await open_store()
    assert store.revision == 4
    assert store.get(key("a"))["spec"] == {"v": 2}  # type: ignore[index]
    assert rv(store.get(key("a"))) == "3"  # type: ignore[arg-type]
    assert store.get(key("b")) is None
    created = await store.create(key("c"), obj("c"))
    assert rv(created) == "5"


async def test_watch_resumes_after_restart_with_the_same_events(open_store: Any) -> None:
    store = await open_store(history_window=1000)
    await store.create(key("a"), obj("a"))
    await store.create(key("b"), obj("b"))
    await store.update(key("a"), obj("a", spec={"v": 2}))
    await store.delete(key("b"))
    await store.update(key("a"), obj("a", spec={"v": 3}))
    w = store.watch("core/pods/", 1)
    before = [await w.__anext__() for _ in range(4)]
    await store.close()

    store = await open_store(history_window=1000)
    w = store.watch("core/pods/", 1)
    after = [await w.__anext__() for _ in range(4)]
    assert [(e.type, e.key, e.revision, e.object, e.prev) for e in after] == [
        (e.type, e.key, e.revision, e.object, e.prev) for e in before
    ]
    # ...and continues live.
    await store.create(key("d"), obj("d"))
    live = await asyncio.wait_for(w.__anext__(), 5)
    assert (live.type, live.key, live.revision) == ("ADDED", key("d"), 6)


async def test_restart_replay_keeps_prev_when_previous_revision_is_outside_the_window(
    open_store: Any,
) -> None:
    store = await open_store(history_window=100)
    await store.create(key("old"), obj("old", spec={"v": 1}))
    for i in range(5):
        await store.create(key(f"f{i}"), obj(f"f{i}"))
    await store.update(key("old"), obj("old", spec={"v": 2}))
    await store.close()

    store = await open_store(history_window=1)  # only revision 7 is reloaded
    assert store.compacted_revision == 6
    ev = await store.watch("", 6).__anext__()
    assert ev.type == "MODIFIED" and ev.revision == 7
    assert ev.prev is not None and ev.prev["spec"] == {"v": 1} and rv(ev.prev) == "1"


async def test_restart_below_the_window_is_too_old(open_store: Any) -> None:
    store = await open_store(history_window=5)
    for i in range(20):
        await store.create(key(f"p{i}"), obj(f"p{i}"))
    await store.close()
    store = await open_store(history_window=5)
    with pytest.raises(TooOldError):
        store.watch("", 10)
    first = await store.watch("", 15).__anext__()
    assert first.revision == 16


# ---------------------------------------------------------------------------- compaction


async def test_compact_makes_older_revisions_too_old(store: SqliteStore) -> None:
    for i in range(100):
        await store.create(key(f"p{i}"), obj(f"p{i}"))
    assert await store.compact(keep=10) == 90
    assert store.compacted_revision == 90
    assert store.persisted_compacted_revision == 90
    with pytest.raises(TooOldError) as ei:
        store.watch("", 89)
    assert (ei.value.requested, ei.value.oldest) == (89, 90)
    w = store.watch("", 90)
    revs = [(await w.__anext__()).revision for _ in range(10)]
    assert revs == list(range(91, 101))
    # Current state is untouched by compaction.
    assert len(store.list("core/pods/")[0]) == 100


async def test_compaction_survives_restart(open_store: Any) -> None:
    store = await open_store(history_window=1000)
    for i in range(50):
        await store.create(key(f"p{i}"), obj(f"p{i}"))
    await store.compact(keep=5)
    await store.close()
    store = await open_store(history_window=1000)
    assert store.compacted_revision == 45
    assert store.revision == 50
    with pytest.raises(TooOldError):
        store.watch("", 44)


async def test_history_ring_is_bounded_by_the_window(open_store: Any) -> None:
    store = await open_store(history_window=100)
    for i in range(400):
        await store.create(key(f"p{i}"), obj(f"p{i}"))
    assert 400 - 100 - 16 <= store.compacted_revision <= 300
    with pytest.raises(TooOldError):
        store.watch("", 0)


async def test_background_compactor_runs_on_the_injected_clock(open_store: Any) -> None:
    clock = FakeClock()
    store = await open_store(history_window=10, compact_interval=60, clock=clock)
    for i in range(50):
        await store.create(key(f"p{i}"), obj(f"p{i}"))
    assert store.persisted_compacted_revision == 0
    async with asyncio.timeout(10):
        while clock.sleepers == 0:
            await asyncio.sleep(0.001)
        clock.advance(60)
        while store.persisted_compacted_revision != 40:
            await asyncio.sleep(0.01)


def _disk_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


async def test_file_size_stays_bounded_under_churn(open_store: Any, db_path: Path) -> None:
    store = await open_store(history_window=50)
    payload = {"data": "x" * 2000}
    sizes = []
    for rnd in range(16):
        await asyncio.gather(
            *(store.create(key(f"p{i}"), obj(f"p{i}", spec=dict(payload))) for i in range(100))
        )
        await asyncio.gather(*(store.delete(key(f"p{i}")) for i in range(100)))
        await store.compact()
        sizes.append(_disk_size(db_path))
        assert store.revision == (rnd + 1) * 200
    # 3,200 writes of ~2 KiB would be >12 MiB without compaction (two copies per write).
    assert sizes[-1] <= max(sizes[3] * 1.5, 1 << 20), sizes
    assert sizes[-1] < 4 << 20, sizes


async def test_memory_path_works(open_store: Any) -> None:
    store = await open_store(path=":memory:")
    await store.create(key("a"), obj("a"))
    await store.compact(keep=0)
    assert store.get(key("a")) is not None
    assert store.compacted_revision == 1


async def _random_writes(store: Any, *, seed: int, writes: int, keys: int, delete_share: float) -> None:
    """A seeded history: each write picks one of `keys` keys and creates it when absent, else
    deletes it (with probability `delete_share`) or updates it."""
    import random

    rng = random.Random(seed)
    for i in range(writes):
        k = key(f"p{rng.randrange(keys)}")
        if store.get(k) is None:
            await store.create(k, obj(k, spec={"i": i}))
        elif rng.random() < delete_share:
            await store.delete(k)
        else:
            await store.update(k, obj(k, spec={"i": i}))


@pytest.mark.parametrize(
    "reopen_window",
    [
        pytest.param(10_000, id="whole-history-reloaded"),
        pytest.param(37, id="only-a-tail-reloaded-prev-from-undo-images"),
    ],
)
async def test_random_history_replays_identically_after_restart(open_store: Any, reopen_window: int) -> None:
    store = await open_store(history_window=10_000)
    await _random_writes(store, seed=7, writes=400, keys=12, delete_share=0.25)
    final = store.revision
    w = store.watch("", 0, queue_size=10_000)
    before = [await w.__anext__() for _ in range(final)]
    await store.close()

    store = await open_store(history_window=reopen_window)
    floor = max(0, final - reopen_window)
    assert store.compacted_revision == floor
    w = store.watch("", floor)
    after = [await w.__anext__() for _ in range(final - floor)]
    assert [(e.type, e.key, e.revision, e.object, e.prev) for e in after] == [
        (e.type, e.key, e.revision, e.object, e.prev) for e in before[floor:]
    ]


async def test_history_read_at_start_is_decoded_in_pieces_as_watches_need_it(open_store: Any) -> None:
    """The ring read at start is decoded by the watches that replay it: a later part first, then
    an earlier one, around live writes and a compaction, with the same events as before the
    restart, and the same sharing (an update's prev is the previous event's object; the newest
    event of a key is the stored object)."""
    store = await open_store(history_window=10_000)
    await _random_writes(store, seed=11, writes=300, keys=10, delete_share=0.2)
    final = store.revision
    w = store.watch("", 0, queue_size=10_000)
    before = [await w.__anext__() for _ in range(final)]
    await store.close()

    def shape(evs: list[Any]) -> list[Any]:
        return [(e.type, e.key, e.revision, e.object, e.prev) for e in evs]

    store = await open_store(history_window=10_000)
    late = store.watch("core/pods/", 250)
    assert shape([await late.__anext__() for _ in range(final - 250)]) == shape(before[250:])
    await store.create(key("live"), obj("live"))
    await store.compact(keep=final + 1 - 40)  # drops revisions 1..40, none of them decoded yet
    assert store.compacted_revision == 40
    w = store.watch("", 40, queue_size=10_000)
    after = [await w.__anext__() for _ in range(final - 40 + 1)]
    assert shape(after[:-1]) == shape(before[40:])
    assert (after[-1].type, after[-1].key) == ("ADDED", key("live"))
    last: dict[str, Any] = {}
    for e in after:
        if e.type == "MODIFIED" and e.key in last:
            assert e.prev is last[e.key].object  # also across the two pieces (251.., then 41..250)
        last[e.key] = e
    for k, e in last.items():
        if e.type != "DELETED":
            assert e.object is store.get(k)
    with pytest.raises(TooOldError):
        store.watch("", 39)


async def test_background_decoding_decodes_the_history_too(open_store: Any) -> None:
    store = await open_store(history_window=10_000)
    for i in range(1200):
        k = key(f"p{i % 40}")
        if store.get(k) is None:
            await store.create(k, obj(k, spec={"i": i}))
        else:
            await store.update(k, obj(k, spec={"i": i}))
    w = store.watch("", 0, queue_size=10_000)
    before = [await w.__anext__() for _ in range(1200)]
    await store.close()

    store = await open_store(history_window=10_000)
    await store.wait_decoded()  # objects, then the ring in chunks of 500 from its newest entries
    w = store.watch("", 0, queue_size=10_000)
    after = [await w.__anext__() for _ in range(1200)]
    assert [(e.type, e.key, e.revision, e.object, e.prev) for e in after] == [
        (e.type, e.key, e.revision, e.object, e.prev) for e in before]
    for prev_ev, ev in zip(after, after[40:], strict=False):
        assert ev.prev is prev_ev.object  # p{i % 40}: each update's prev is 40 revisions back
    assert all(after[-40 + j].object is store.get(key(f"p{(1160 + j) % 40}")) for j in range(40))


async def test_update_with_the_stored_object_itself_is_rejected(store: SqliteStore) -> None:
    created = await store.create(key("a"), obj("a"))
    with pytest.raises(StorageError, match="copy it first"):
        await store.update(key("a"), created)
    assert store.revision == 1


async def test_database_file_settings(open_store: Any, db_path: Path) -> None:
    store = await open_store()
    await store.create(key("a"), obj("a"))
    await store.close()
    conn = sqlite3.connect(db_path)
    try:
        settings = {
            name: conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "page_size", "auto_vacuum")
        }
    finally:
        conn.close()
    assert settings == {"journal_mode": "wal", "page_size": 16384, "auto_vacuum": 2}


async def test_unknown_schema_version_is_refused(open_store: Any, db_path: Path) -> None:
    store = await open_store()
    await store.close()
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE meta SET value = 99 WHERE name = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="schema version 99"):
        await open_store()
