"""The activeQ heap takes exactly Go's container/heap steps (upstream's backend/heap) whether
it compares the QueueSort plugin's precomputed sort keys (in C through heapq when they are
distinct, in Python otherwise) or calls its `less`: randomized add / update / delete / pop
streams, with many ties (few priorities and timestamps), with distinct keys, and with ties
that come and go, for PrioritySort and Coscheduling (pods in and outside gangs), compared
step by step (popped item and the whole array) against a plain port of container/heap."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest

from minik3s.testing.builders import make_pod
from scheduler.backend.heap import KeyedHeap
from scheduler.backend.queue import QueuedPodInfo
from scheduler.framework.types import PodInfo
from scheduler.plugins.coscheduling import Coscheduling
from scheduler.plugins.priority_sort import PrioritySort


class GoHeap:
    """The oracle: container/heap's Push / Pop / Remove / Fix over a list, `less` only,
    positions found by scanning."""

    def __init__(self, less: Callable[[Any, Any], bool]) -> None:
        self.items: list[QueuedPodInfo] = []
        self.less = less

    def _index(self, uid: str) -> int:
        return next((i for i, x in enumerate(self.items) if _uid(x) == uid), -1)

    def add_or_update(self, item: QueuedPodInfo) -> None:
        i = self._index(_uid(item))
        if i >= 0:
            self.items[i] = item
            self._fix(i)
            return
        self.items.append(item)
        self._up(len(self.items) - 1)

    def delete(self, uid: str) -> QueuedPodInfo | None:
        i = self._index(uid)
        return None if i < 0 else self._remove(i)

    def pop(self) -> QueuedPodInfo | None:
        return self._remove(0) if self.items else None

    def _remove(self, i: int) -> QueuedPodInfo:
        h = self.items
        n = len(h) - 1
        if n != i:
            h[i], h[n] = h[n], h[i]
            if not self._down(i, n):
                self._up(i)
        return h.pop()

    def _fix(self, i: int) -> None:
        if not self._down(i, len(self.items)):
            self._up(i)

    def _up(self, j: int) -> None:
        h = self.items
        while j > 0:
            i = (j - 1) // 2
            if i == j or not self.less(h[j], h[i]):
                break
            h[i], h[j] = h[j], h[i]
            j = i

    def _down(self, i0: int, n: int) -> bool:
        h = self.items
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            if j1 + 1 < n and self.less(h[j1 + 1], h[j1]):
                j = j1 + 1
            if not self.less(h[j], h[i]):
                break
            h[i], h[j] = h[j], h[i]
            i = j
        return i > i0


def _uid(q: QueuedPodInfo) -> str:
    return q.pod_info.uid


def _plugin(name: str) -> Any:
    return PrioritySort(None, None) if name == "PrioritySort" else Coscheduling(None, None)


class Items:
    """Pods with few priorities; timestamps drawn from `times`: a handful of values (ties
    everywhere), a fresh one each time (distinct), or fresh with bursts of repeats."""

    def __init__(self, rng: random.Random, *, gangs: bool, times: str) -> None:
        self.rng, self.gangs, self.times = rng, gangs, times
        self.clock = itertools.count(1)
        self.last = 0.0

    def _time(self) -> float:
        rng = self.rng
        if self.times == "ties":
            return float(rng.choice([1, 2, 2, 3, 5]))
        if self.times == "some-ties" and self.last and rng.random() < 0.08:
            return self.last  # an equal key (same priority half the time) enters
        self.last = float(next(self.clock)) + rng.random()
        return self.last

    def make(self, uid: str) -> QueuedPodInfo:
        rng = self.rng
        b = make_pod(f"p-{uid}").priority(rng.choice([0, 0, 10, 1000]))
        if self.gangs and rng.random() < 0.4:
            b = b.labels({"scheduling.x-k8s.io/pod-group": rng.choice(["g1", "g2", "g3"])})
        pod = b.obj()
        pod["metadata"]["uid"] = uid
        return QueuedPodInfo(PodInfo(pod), timestamp=self._time())


def _run(plugin: str, seed: int, times: str, *, steps: int, p_add: float = 0.45,
         p_update: float = 0.15, p_delete: float = 0.1) -> tuple[int, int]:
    """Drive the keyed heap, the less-only heap and the oracle with one stream; returns how
    many steps ran with positions dropped (the heapq path) and how many sort keys were used."""
    pl = _plugin(plugin)
    rng = random.Random(seed)
    items = Items(rng, gangs=plugin == "Coscheduling", times=times)
    keyed: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, pl.less, sort_key=pl.sort_key)
    plain: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, pl.less)
    oracle = GoHeap(pl.less)
    live: list[str] = []
    fast_steps = used_keys = 0
    for step in range(steps):
        r = rng.random()
        if r < p_add or not live:
            uid = f"u{step}"
            q = items.make(uid)
            used_keys += pl.sort_key(q) is not None
            for h in (keyed, plain, oracle):
                h.add_or_update(q)
            live.append(uid)
        elif r < p_add + p_update:  # a new pod object, maybe a new priority / gang / timestamp
            q = items.make(rng.choice(live))
            for h in (keyed, plain, oracle):
                h.add_or_update(q)
        elif r < p_add + p_update + p_delete:
            uid = live.pop(rng.randrange(len(live)))
            assert keyed.delete(uid) is plain.delete(uid) is oracle.delete(uid) is not None
            assert keyed.delete(uid) is None and uid not in keyed
        else:
            a, b, c = keyed.pop(), plain.pop(), oracle.pop()
            assert a is b is c and a is not None, step
            live.remove(_uid(a))
        want = [_uid(x) for x in oracle.items]
        assert [_uid(x) for x in keyed] == want, step
        assert [_uid(x) for x in plain] == want, step
        assert len(keyed) == len(want) and all(keyed.get(u) is oracle.items[i]
                                               for i, u in enumerate(want[:3]))
        fast_steps += keyed._pos is None
    return fast_steps, used_keys


@pytest.mark.parametrize("plugin", ["PrioritySort", "Coscheduling"])
@pytest.mark.parametrize("seed", range(6))
def test_sort_keys_pop_as_less_does(plugin: str, seed: int) -> None:
    _, used_keys = _run(plugin, seed, "ties", steps=1500)
    assert used_keys > 100  # the keys were actually compared


@pytest.mark.parametrize("times", ["distinct", "some-ties"])
@pytest.mark.parametrize("seed", range(4))
def test_heapq_path_takes_go_steps(times: str, seed: int) -> None:
    """Distinct keys run through heapq (positions dropped) and equal keys that come and go
    switch between the paths; the array stays container/heap's at every step."""
    fast, _ = _run("PrioritySort", seed, times, steps=2500, p_update=0.03, p_delete=0.02)
    assert fast > 300, fast  # the heapq path really ran


@pytest.mark.parametrize("seed", range(3))
def test_mostly_adds_and_pops_then_updates(seed: int) -> None:
    """A burst (add then pop, as a pre-filled queue is drained), then updates between pops:
    the rebuilt positions are kept while updates keep coming."""
    _run("PrioritySort", seed, "distinct", steps=1200, p_add=0.5, p_update=0.0, p_delete=0.0)
    _run("PrioritySort", seed, "some-ties", steps=1200, p_add=0.3, p_update=0.4, p_delete=0.05)
    _run("Coscheduling", seed, "distinct", steps=1200, p_add=0.4, p_update=0.2, p_delete=0.1)


def test_equal_keys_pop_in_container_heap_order_not_fifo() -> None:
    """Four equal keys: container/heap pops A, D, C, B (the last element moves to the root
    and stays there, as nothing is strictly less); the C path must not change that."""
    pl = PrioritySort(None, None)
    h: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, pl.less, sort_key=pl.sort_key)
    for name in "ABCD":
        pod = make_pod(name).obj()
        pod["metadata"]["uid"] = name
        h.add_or_update(QueuedPodInfo(PodInfo(pod), timestamp=1.0))
    assert [_uid(h.pop()) for _ in range(4)] == ["A", "D", "C", "B"]  # type: ignore[arg-type]
    assert h.pop() is None and len(h) == 0


@pytest.mark.parametrize("plugin", ["PrioritySort", "Coscheduling"])
def test_sort_key_order_is_less_order_for_every_pair(plugin: str) -> None:
    pl = _plugin(plugin)
    rng = random.Random(5)
    items = Items(rng, gangs=plugin == "Coscheduling", times="ties")
    made = [items.make(f"u{i}") for i in range(120)]
    keyed = [q for q in made if pl.sort_key(q) is not None]
    assert len(keyed) > 50
    for a in keyed:
        for b in keyed:
            assert (pl.sort_key(a) < pl.sort_key(b)) is pl.less(a, b)
    if plugin == "Coscheduling":  # gang members are compared live (their PodGroup may appear later)
        assert any(pl.sort_key(q) is None for q in made)


def test_unhashable_sort_keys_are_compared_in_python() -> None:
    """A plugin's key that cannot be hashed (a list inside) cannot be counted for ties: such
    items take the Python path, and the order is still container/heap's."""
    rng = random.Random(3)

    def key(q: QueuedPodInfo) -> tuple[Any, ...]:
        return ([q.pod_info.priority], q.timestamp)

    def less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return key(a) < key(b)

    h: KeyedHeap[QueuedPodInfo] = KeyedHeap(_uid, less, sort_key=key)
    oracle = GoHeap(less)
    items = Items(rng, gangs=False, times="some-ties")
    for step in range(400):
        if rng.random() < 0.6 or not oracle.items:
            q = items.make(f"u{rng.randrange(300)}")
            h.add_or_update(q)
            oracle.add_or_update(q)
        else:
            a = h.pop()
            assert a is not None and a is oracle.pop(), step
        assert [_uid(x) for x in h] == [_uid(x) for x in oracle.items], step
