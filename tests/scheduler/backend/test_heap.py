"""The activeQ heap pops in exactly the same order whether it compares the QueueSort plugin's
precomputed sort keys or calls its `less`: randomized add / update / delete / pop streams with
many ties (few priorities and timestamps), for PrioritySort and Coscheduling (pods in and
outside gangs), compared step by step against a heap that only calls `less`."""

from __future__ import annotations

import random
from typing import Any

import pytest

from minik3s.testing.builders import make_pod
from scheduler.backend.heap import KeyedHeap
from scheduler.backend.queue import QueuedPodInfo
from scheduler.framework.types import PodInfo
from scheduler.plugins.coscheduling import Coscheduling
from scheduler.plugins.priority_sort import PrioritySort


def _uid(q: QueuedPodInfo) -> str:
    return q.pod_info.uid


def _item(rng: random.Random, uid: str, gangs: bool) -> QueuedPodInfo:
    b = make_pod(f"p-{uid}").priority(rng.choice([0, 0, 10, 1000]))
    if gangs and rng.random() < 0.4:
        b = b.labels({"scheduling.x-k8s.io/pod-group": rng.choice(["g1", "g2", "g3"])})
    pod = b.obj()
    pod["metadata"]["uid"] = uid
    return QueuedPodInfo(PodInfo(pod), timestamp=float(rng.choice([1, 2, 2, 3, 5])))


@pytest.mark.parametrize("plugin", ["PrioritySort", "Coscheduling"])
@pytest.mark.parametrize("seed", range(6))
def test_sort_keys_pop_as_less_does(plugin: str, seed: int) -> None:
    pl: Any = PrioritySort(None, None) if plugin == "PrioritySort" else Coscheduling(None, None)
    gangs = plugin == "Coscheduling"
    rng = random.Random(seed)
    keyed: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, pl.less, sort_key=pl.sort_key)
    plain: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, pl.less)
    live: list[str] = []
    used_keys = 0
    for step in range(1500):
        r = rng.random()
        if r < 0.45 or not live:
            uid = f"u{step}"
            q = _item(rng, uid, gangs)
            used_keys += pl.sort_key(q) is not None
            keyed.add_or_update(q)
            plain.add_or_update(q)
            live.append(uid)
        elif r < 0.6:  # an update: new pod object, maybe a new priority / gang, new timestamp
            uid = rng.choice(live)
            q = _item(rng, uid, gangs)
            keyed.add_or_update(q)
            plain.add_or_update(q)
        elif r < 0.7:
            uid = live.pop(rng.randrange(len(live)))
            assert keyed.delete(uid) is plain.delete(uid) is not None
        else:
            a, b = keyed.pop(), plain.pop()
            assert a is b and a is not None, step
            live.remove(a.pod_info.uid)
        assert [_uid(x) for x in keyed] == [_uid(x) for x in plain], step
    assert used_keys > 100  # the keys were actually compared


@pytest.mark.parametrize("plugin", ["PrioritySort", "Coscheduling"])
def test_sort_key_order_is_less_order_for_every_pair(plugin: str) -> None:
    pl: Any = PrioritySort(None, None) if plugin == "PrioritySort" else Coscheduling(None, None)
    rng = random.Random(5)
    items = [_item(rng, f"u{i}", plugin == "Coscheduling") for i in range(120)]
    keyed = [q for q in items if pl.sort_key(q) is not None]
    assert len(keyed) > 50
    for a in keyed:
        for b in keyed:
            assert (pl.sort_key(a) < pl.sort_key(b)) is pl.less(a, b)
    if plugin == "Coscheduling":  # gang members are compared live (their PodGroup may appear later)
        assert any(pl.sort_key(q) is None for q in items)
