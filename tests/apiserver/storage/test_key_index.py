"""The store's sorted key index: prefix lists, pages from a continue key, counts (against a model)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

import pytest

from apiserver.storage.sqlite_store import SqliteStore


def model_after(keys: set[str], prefix: str, after: str) -> list[str]:
    return sorted(k for k in keys if k.startswith(prefix) and k > after)


def pod(key: str) -> dict[str, object]:
    _, _, ns, name = key.split("/")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}}


@pytest.mark.parametrize("seed", [pytest.param(1, id="random-churn-a"), pytest.param(2, id="random-churn-b")])
async def test_pages_and_counts_match_a_sorted_set_model_through_churn_and_restart(
        open_store: Callable[..., Awaitable[SqliteStore]], seed: int) -> None:
    rng = random.Random(seed)
    store = await open_store()
    model: set[str] = set()
    namespaces = ["a", "b", "b1", "kube-system"]
    for _ in range(600):
        k = f"core/pods/{rng.choice(namespaces)}/p{rng.randrange(200)}"
        if k in model and rng.random() < 0.4:
            await store.delete(k)
            model.discard(k)
        elif k not in model:
            await store.create(k, pod(k))
            model.add(k)
    await store.close()
    store = await open_store()  # the index is rebuilt from the table at start
    probes = ["", "core/pods/a/p1", "core/pods/b/", "core/pods/b/p99", "core/pods/b1/p5", "core/pods/zz"]
    for prefix in ("core/pods/", "core/pods/b/", "core/pods/b1/", "core/pods/none/", ""):
        assert [o["metadata"]["name"] for o in store.list(prefix)[0]] == \
            [k.rsplit("/", 1)[1] for k in model_after(model, prefix, "")]
        for after in probes:
            want = model_after(model, prefix, after)
            assert [k for k, _ in store.iter_after(prefix, after)] == want, (prefix, after)
            assert store.count_after(prefix, after) == len(want), (prefix, after)


async def test_iter_after_yields_the_stored_objects_lazily(store: SqliteStore) -> None:
    for i in range(5):
        await store.create(f"core/pods/ns/p{i}", pod(f"core/pods/ns/p{i}"))
    it = store.iter_after("core/pods/ns/", "core/pods/ns/p1")
    k, obj = next(it)
    assert (k, obj["metadata"]["name"]) == ("core/pods/ns/p2", "p2")
    assert obj is store.get(k)
    assert [k for k, _ in it] == ["core/pods/ns/p3", "core/pods/ns/p4"]
