"""SortedKeys against a plain sorted-set model, across chunk splits and merges."""

from __future__ import annotations

import random

import pytest

from apiserver.storage.sorted_keys import SortedKeys


def model_prefix(keys: set[str], prefix: str) -> list[str]:
    return sorted(k for k in keys if k.startswith(prefix))


@pytest.mark.parametrize(
    "seed",
    [pytest.param(1, id="random-churn-a"), pytest.param(2, id="random-churn-b")],
)
def test_random_adds_and_discards_match_a_sorted_set(seed: int) -> None:
    rng = random.Random(seed)
    sk = SortedKeys()
    model: set[str] = set()
    namespaces = ["a", "b", "b1", "kube-system", "z"]
    for step in range(30_000):
        k = f"core/pods/{rng.choice(namespaces)}/p{rng.randrange(3000)}"
        if rng.random() < 0.6 or step < 5000:
            sk.add(k)
            model.add(k)
        else:
            sk.discard(k)
            model.discard(k)
    assert len(sk) == len(model)
    assert list(sk) == sorted(model)
    for prefix in [
        "",
        "core/",
        "core/pods/",
        "core/pods/b/",
        "core/pods/b",
        "core/pods/z/p1",
        "core/nodes/",
        "zzz",
    ]:
        assert list(sk.iter_prefix(prefix)) == model_prefix(model, prefix), prefix
    for k in list(model)[:100]:
        assert k in sk
    assert "core/pods/none/x" not in sk


def test_bulk_build_equals_incremental() -> None:
    keys = [f"core/pods/ns{i % 7}/p{i}" for i in range(5000)]
    bulk = SortedKeys.from_keys(list(keys))
    inc = SortedKeys()
    for k in keys:
        inc.add(k)
    assert list(bulk) == list(inc) == sorted(keys)
    bulk.add("core/pods/ns3/zz")
    bulk.discard(keys[0])
    assert list(bulk.iter_prefix("core/pods/ns3/"))[-1] == "core/pods/ns3/zz"
    assert keys[0] not in bulk


def test_removing_everything_leaves_an_empty_set() -> None:
    sk = SortedKeys()
    keys = [f"k{i:05d}" for i in range(4500)]
    for k in keys:
        sk.add(k)
    for k in reversed(keys):
        sk.discard(k)
    assert len(sk) == 0 and list(sk) == [] and list(sk.iter_prefix("")) == []
    sk.add("again")
    assert list(sk) == ["again"]
