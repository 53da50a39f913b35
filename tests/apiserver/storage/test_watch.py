"""Store watches: replay + live without gaps or duplicates, prefix filtering, overflow, close."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from apiserver.storage.interface import StoreEvent, TooOldError, WatchOverflowError
from apiserver.storage.sqlite_store import SqliteStore


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


async def collect_until(w: Any, revision: int, *, timeout: float = 20) -> list[StoreEvent]:
    """Read events until one at `revision` arrives (or fail after `timeout`)."""
    out: list[StoreEvent] = []
    async with asyncio.timeout(timeout):
        async for ev in w:
            out.append(ev)
            if ev.revision >= revision:
                break
    return out


async def test_replay_then_live_in_order(store: SqliteStore) -> None:
    await store.create(key("a"), obj("a"))
    await store.update(key("a"), obj("a", spec={"v": 2}))
    w = store.watch("core/pods/", 0)
    await store.delete(key("a"))
    await store.create(key("b"), obj("b"))
    events = await collect_until(w, 4)
    assert [(e.type, e.key, e.revision) for e in events] == [
        ("ADDED", key("a"), 1),
        ("MODIFIED", key("a"), 2),
        ("DELETED", key("a"), 3),
        ("ADDED", key("b"), 4),
    ]
    assert [e.object["metadata"]["resourceVersion"] for e in events] == ["1", "2", "3", "4"]
    assert events[0].prev is None
    assert events[1].prev is events[0].object
    assert events[2].prev is events[1].object
    assert events[2].object["spec"] == {"v": 2}, "DELETED carries the last state"


@pytest.mark.parametrize(
    ("prefix", "expected_keys"),
    [
        pytest.param("core/pods/", ["core/pods/ns1/a", "core/pods/ns10/b", "core/pods/ns1/c"], id="all-pods"),
        pytest.param(
            "core/pods/ns1/", ["core/pods/ns1/a", "core/pods/ns1/c"], id="one-namespace-not-its-lookalike"
        ),
        pytest.param(
            "core/pods/ns1",
            ["core/pods/ns1/a", "core/pods/ns10/b", "core/pods/ns1/c"],
            id="raw-prefix-without-slash",
        ),
        pytest.param("core/nodes/", ["core/nodes//n1"], id="cluster-scoped-resource"),
        pytest.param("core/pods/ns1/c", ["core/pods/ns1/c"], id="single-object-key"),
        pytest.param(
            "", ["core/pods/ns1/a", "core/pods/ns10/b", "core/nodes//n1", "core/pods/ns1/c"], id="everything"
        ),
        pytest.param("apps/", [], id="other-group"),
    ],
)
async def test_prefix_filtering_for_replay_and_live(
    store: SqliteStore, prefix: str, expected_keys: list[str]
) -> None:
    replayed = store.watch(prefix, 0)
    await store.create("core/pods/ns1/a", obj("a", "ns1"))
    await store.create("core/pods/ns10/b", obj("b", "ns10"))
    live = store.watch(prefix, store.revision)
    await store.create("core/nodes//n1", {"kind": "Node", "metadata": {"name": "n1"}})
    await store.create("core/pods/ns1/c", obj("c", "ns1"))
    # A sentinel under the prefix marks the end: everything before it must be exactly expected.
    sentinel = prefix + "~sentinel"
    await store.create(sentinel, {"metadata": {"name": "sentinel"}})
    for w, expected in (
        (replayed, expected_keys),
        (live, [k for k in expected_keys if "/ns1/a" not in k and "/ns10/b" not in k]),
    ):
        got = []
        async with asyncio.timeout(5):
            async for ev in w:
                if ev.key == sentinel:
                    break
                got.append(ev.key)
        assert got == expected


async def test_watch_from_a_future_revision_skips_until_then(store: SqliteStore) -> None:
    w = store.watch("", 2)
    for name in "abc":
        await store.create(key(name), obj(name))
    ev = await asyncio.wait_for(w.__anext__(), 5)
    assert ev.revision == 3


async def test_no_gaps_or_duplicates_under_concurrent_writes(store: SqliteStore) -> None:
    rng = random.Random(42)
    n_writers, per_writer = 8, 150
    big = 100_000  # nobody reads until the end: no overflow wanted here
    watchers: list[tuple[int, str, Any]] = [(0, "", store.watch("", 0, queue_size=big))]
    stop = asyncio.Event()

    async def writer(wid: int) -> None:
        for i in range(per_writer):
            k = key(f"p{rng.randrange(20)}", f"ns{wid % 3}")
            current = store.get(k)
            try:
                if current is None:
                    await store.create(k, obj(k))
                elif rng.random() < 0.3:
                    await store.delete(k, expected_rv=int(current["metadata"]["resourceVersion"]))
                else:
                    await store.update(
                        k, obj(k, spec={"i": i}), expected_rv=int(current["metadata"]["resourceVersion"])
                    )
            except Exception as e:  # races between writers are expected: KeyExists, conflicts
                assert type(e).__name__ in {"KeyExistsError", "KeyNotFoundError", "RevisionMismatchError"}

    async def watch_opener() -> None:
        # Open watches mid-stream from a slightly older revision: replay and live must join up.
        last = -1
        while not stop.is_set() and len(watchers) < 80:
            if store.revision == last:
                await asyncio.sleep(0)
                continue
            last = store.revision
            frm = max(0, store.revision - rng.randrange(0, 30))
            prefix = rng.choice(["", "core/pods/", "core/pods/ns1/", "core/pods/ns2/"])
            watchers.append((frm, prefix, store.watch(prefix, frm, queue_size=big)))
            await asyncio.sleep(0)

    opener = asyncio.create_task(watch_opener())
    await asyncio.gather(*(writer(i) for i in range(n_writers)))
    stop.set()
    await opener
    final = store.revision
    await store.create("zz/end", {"metadata": {"name": "end"}})  # a marker every watcher of "" sees

    full = await collect_until(watchers[0][2], final)
    assert [e.revision for e in full] == list(range(1, final + 1)), "full watch must have every revision"
    assert len(watchers) > 10
    for frm, prefix, w in watchers[1:]:
        expected = [e.revision for e in full if e.revision > frm and e.key.startswith(prefix)]
        got: list[int] = []
        async with asyncio.timeout(10):
            while len(got) < len(expected):
                got.append((await w.__anext__()).revision)
        assert got == expected, f"watch prefix={prefix!r} from={frm}"
        w.close()


async def test_too_old_revision_is_rejected(store: SqliteStore) -> None:
    for i in range(20):
        await store.create(key(f"p{i}"), obj(f"p{i}"))
    await store.compact(keep=5)
    with pytest.raises(TooOldError) as ei:
        store.watch("core/pods/", 3)
    assert "too old resource version: 3 (15)" in str(ei.value)


async def test_overflow_closes_only_the_slow_watcher_and_never_blocks_writers(store: SqliteStore) -> None:
    slow = store.watch("core/pods/", 0, queue_size=5)
    fast = store.watch("core/pods/", 0, queue_size=50)
    fast_seen: list[int] = []

    async def consume_fast() -> None:
        async for ev in fast:
            fast_seen.append(ev.revision)
            if ev.revision == 200:
                return

    consumer = asyncio.create_task(consume_fast())
    async with asyncio.timeout(20):
        for i in range(0, 200, 20):
            # Bursts of 20 writes: the fast watcher keeps up between bursts, the slow one never reads.
            await asyncio.gather(*(store.create(key(f"p{j}"), obj(f"p{j}")) for j in range(i, i + 20)))
            await asyncio.sleep(0)
        await consumer
    assert store.revision == 200
    assert fast_seen == list(range(1, 201))
    assert slow.overflowed
    drained = []
    with pytest.raises(WatchOverflowError):
        async for ev in slow:
            drained.append(ev.revision)
    assert drained == [1, 2, 3, 4, 5], "buffered events are delivered in order before the error"


async def test_close_of_a_watcher_ends_its_pending_iteration(store: SqliteStore) -> None:
    w = store.watch("", 0)
    task = asyncio.create_task(w.__anext__())
    await asyncio.sleep(0)
    w.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(task, 5)
    assert store.watcher_count == 0
    await store.create(key("a"), obj("a"))  # publishing to nobody is fine


async def test_store_close_ends_all_watchers(store: SqliteStore) -> None:
    await store.create(key("a"), obj("a"))
    watchers = [store.watch("core/pods/", 1) for _ in range(3)] + [store.watch("", 0)]
    seen: list[list[int]] = [[] for _ in watchers]

    async def run(i: int) -> None:
        async for ev in watchers[i]:
            seen[i].append(ev.revision)

    tasks = [asyncio.create_task(run(i)) for i in range(len(watchers))]
    async with asyncio.timeout(5):
        while not seen[-1]:
            await asyncio.sleep(0.001)
    await store.close()
    async with asyncio.timeout(5):
        await asyncio.gather(*tasks)  # each `async for` ended normally
    assert seen[-1] == [1]


async def test_hundreds_of_watchers_on_different_namespaces_each_get_their_own(store: SqliteStore) -> None:
    watchers = {ns: store.watch(f"core/pods/ns{ns}/", 0) for ns in range(300)}
    await asyncio.gather(*(store.create(key("p", f"ns{ns}"), obj("p", f"ns{ns}")) for ns in range(300)))
    for ns, w in watchers.items():
        ev = await asyncio.wait_for(w.__anext__(), 5)
        assert ev.key == key("p", f"ns{ns}")
        w.close()
    assert store.watcher_count == 0
