"""Framework runtime orchestration (upstream framework/runtime/framework_test.go style):
multiPoint expansion, PreFilter merging/skip, Filter first-failure, Score normalize/weight,
Permit wait/allow/reject/timeout, Bind skip fall-through, plugin faults as Errors."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

from minik3s.testing.builders import make_node, make_pod
from minik3s.utils.clock import FakeClock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    BindPlugin,
    Code,
    FilterPlugin,
    PermitPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
)
from scheduler.framework.runtime import (
    Framework,
    FrameworkError,
    PluginEntry,
    PluginSetSpec,
    ProfileSpec,
    expand_plugins,
)
from scheduler.framework.types import NodeInfo, PodInfo

CALLS: list[str] = []


class Sort(QueueSortPlugin):
    NAME = "Sort"

    def less(self, a: Any, b: Any) -> bool:
        return bool(a.timestamp < b.timestamp)


class A(PreFilterPlugin, FilterPlugin, ScorePlugin, ReservePlugin):
    NAME = "A"

    def pre_filter(self, state, pod, nodes):
        CALLS.append("A.pre_filter")
        return None, Status.success()

    def filter(self, state, pod, node):
        CALLS.append(f"A.filter:{node.name}")
        return Status.unschedulable("A says no") if node.name == "bad" else Status.success()

    def score(self, state, pod, node):
        return 10, Status.success()

    def reserve(self, state, pod, node_name):
        CALLS.append("A.reserve")
        return Status.success()

    def unreserve(self, state, pod, node_name):
        CALLS.append("A.unreserve")


class B(FilterPlugin, ScorePlugin, ReservePlugin):
    NAME = "B"

    def filter(self, state, pod, node):
        CALLS.append(f"B.filter:{node.name}")
        return Status.unresolvable("B says never")

    def score(self, state, pod, node):
        return 50, Status.success()

    def normalize_score(self, state, pod, scores):
        for s in scores:
            s.score = s.score * 2
        return Status.success()

    def reserve(self, state, pod, node_name):
        CALLS.append("B.reserve")
        return Status.unschedulable("B cannot reserve")

    def unreserve(self, state, pod, node_name):
        CALLS.append("B.unreserve")


class SkipPF(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    NAME = "SkipPF"

    def pre_filter(self, state, pod, nodes):
        return None, Status.skip()

    def filter(self, state, pod, node):
        raise AssertionError("filter must be skipped")

    def pre_score(self, state, pod, nodes):
        return Status.skip()

    def score(self, state, pod, node):
        raise AssertionError("score must be skipped")


class Narrow(PreFilterPlugin):
    NAME = "Narrow"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.names = {"n1", "n2"}

    def pre_filter(self, state, pod, nodes):
        return PreFilterResult(set(self.names)), Status.success()


class Narrow2(PreFilterPlugin):
    NAME = "Narrow2"

    def pre_filter(self, state, pod, nodes):
        return PreFilterResult({"n3"}), Status.success()


class Boom(FilterPlugin, ScorePlugin):
    NAME = "Boom"

    def filter(self, state, pod, node):
        raise RuntimeError("kaboom")

    def score(self, state, pod, node):
        return None  # a bug: no status


class NoneFilter(FilterPlugin):
    NAME = "NoneFilter"

    def filter(self, state, pod, node):
        return None


SHARED_REJECTION = Status.unschedulable("shared no")


class SharedReject(FilterPlugin):
    """Returns one module-level rejection without a plugin name for every node."""

    NAME = "SharedReject"

    def filter(self, state, pod, node):
        return SHARED_REJECTION


class NoneArithmetic(ScorePlugin):
    """A bug inside the plugin whose message mentions NoneType: a fault, not a missing status."""

    NAME = "NoneArithmetic"

    def score(self, state, pod, node):
        missing: Any = None
        return missing + 1, Status.success()


class BadScore(ScorePlugin):
    NAME = "BadScore"

    def score(self, state, pod, node):
        return 500, Status.success()


class VectorScore(ScorePlugin):
    """Scores as a vector (score_rows): the per-row values come from VECTOR_SCORES."""
    NAME = "VectorScore"

    def score(self, state, pod, node):
        raise AssertionError("the vector form is used")

    def score_rows(self, state, pod, arrays, rows, nodes):
        return np.array(VECTOR_SCORES[:len(rows)], dtype=np.int64)


VECTOR_SCORES: list[int] = []


class Waiter(PermitPlugin):
    NAME = "Waiter"

    def permit(self, state, pod, node_name):
        return Status.wait(), 30.0


class Waiter2(PermitPlugin):
    NAME = "Waiter2"

    def permit(self, state, pod, node_name):
        return Status.wait(), 10.0


class Denier(PermitPlugin):
    NAME = "Denier"

    def permit(self, state, pod, node_name):
        return Status.unschedulable("not now"), 0


class SkipBinder(BindPlugin):
    NAME = "SkipBinder"

    async def bind(self, state, pod, node_name):
        CALLS.append("SkipBinder")
        return Status.skip()


class RealBinder(BindPlugin):
    NAME = "RealBinder"

    async def bind(self, state, pod, node_name):
        CALLS.append(f"RealBinder:{node_name}")
        return Status.success()


class WithArgs(FilterPlugin):
    NAME = "WithArgs"

    class Args(BaseModel):
        limit: int = 3

    def filter(self, state, pod, node):
        return Status.success() if len(node.pods) < self.args.limit else Status.unschedulable("full")


REGISTRY = {p.NAME: p for p in (Sort, A, B, SkipPF, Narrow, Narrow2, Boom, NoneFilter, BadScore, VectorScore, Waiter, Waiter2,
                                 Denier, SkipBinder, RealBinder, WithArgs, SharedReject, NoneArithmetic)}


def spec(multi: list[tuple[str, int]] | None = None, **points: Any) -> ProfileSpec:
    plugins = {"multiPoint": PluginSetSpec([PluginEntry(n, w) for n, w in (multi or [])])}
    args = points.pop("args", {})
    for ep, (enabled, disabled) in points.items():
        plugins[ep] = PluginSetSpec([PluginEntry(n, w) for n, w in enabled], [PluginEntry(n) for n in disabled])
    return ProfileSpec(plugins=plugins, plugin_args=args)


def fw(s: ProfileSpec, **kw: Any) -> Framework:
    return Framework(s, REGISTRY, **kw)


def names(lst: list[Any]) -> list[str]:
    return [p.name() for p in lst]


@pytest.mark.parametrize(("profile", "point", "want"), [
    pytest.param(spec([("A", 0), ("B", 0)]), "filter", [("A", 0), ("B", 0)], id="multipoint-expands-in-order"),
    pytest.param(spec([("A", 0), ("B", 0)]), "preFilter", [("A", 0)], id="only-points-the-plugin-implements"),
    pytest.param(spec([("A", 2), ("B", 0)]), "score", [("A", 2), ("B", 1)], id="multipoint-weight-default-1"),
    pytest.param(spec([("A", 2), ("B", 0)], score=([("B", 7)], [])), "score", [("B", 7), ("A", 2)],
                 id="explicit-override-comes-first-with-its-weight"),
    pytest.param(spec([("A", 2), ("B", 0)], score=([], ["A"])), "score", [("B", 1)],
                 id="disabled-at-one-point-only"),
    pytest.param(spec([("A", 2), ("B", 0)], score=([], ["A"])), "filter", [("A", 0), ("B", 0)],
                 id="disabled-elsewhere-still-filters"),
    pytest.param(spec([("A", 0), ("B", 0)], filter=([("Boom", 0)], ["*"])), "filter", [("Boom", 0)],
                 id="star-disables-multipoint-keeps-explicit"),
    pytest.param(spec([("A", 0)], filter=([("Boom", 0)], [])), "filter", [("A", 0), ("Boom", 0)],
                 id="explicit-non-multipoint-appended"),
])
def test_expand_plugins(profile, point, want):
    got = expand_plugins(profile, REGISTRY)[point]
    assert [(e.name, e.weight) for e in got] == want


@pytest.mark.parametrize(("profile", "err"), [
    pytest.param(spec([("Nope", 0)]), 'multiPoint plugin "Nope" does not exist', id="unknown-multipoint"),
    pytest.param(spec(filter=([("A", 0), ("A", 0)], [])), "already registered", id="duplicate-explicit"),
    pytest.param(spec([("A", 0), ("A", 0)]), "already registered", id="duplicate-multipoint"),
    pytest.param(spec(filter=([("Sort", 0)], [])), "does not extend filter", id="wrong-extension-point"),
])
def test_expand_plugins_errors(profile, err):
    with pytest.raises(FrameworkError, match=err):
        expand_plugins(profile, REGISTRY)


def test_plugins_instantiated_once_with_args_and_handle():
    f = fw(spec([("A", 0), ("WithArgs", 0)], args={"WithArgs": {"limit": 1}}))
    assert f.filter_plugins[0] is f.score_plugins[0] is f.pre_filter_plugins[0]
    assert f.plugins["WithArgs"].args.limit == 1
    assert f.plugins["A"].handle is f


def node(name: str) -> NodeInfo:
    return NodeInfo(make_node(name).capacity(cpu="4").obj())


POD = PodInfo(make_pod("p").obj())


def test_filter_stops_at_first_failure_and_names_plugin():
    CALLS.clear()
    f = fw(spec([("A", 0), ("B", 0)]))
    st = f.run_filter(CycleState(), POD, node("bad"))
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, ["A says no"], "A")
    assert CALLS == ["A.filter:bad"]
    st = f.run_filter(CycleState(), POD, node("ok"))
    assert (st.code, st.plugin) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "B")
    assert CALLS == ["A.filter:bad", "A.filter:ok", "B.filter:ok"]


@pytest.mark.parametrize(("plugin", "want"), [
    pytest.param("Boom", 'running "Boom" filter plugin: kaboom', id="exception-becomes-error"),
    pytest.param("NoneFilter", 'plugin "NoneFilter" returned no status from Filter', id="none-is-a-bug"),
])
def test_filter_faults_become_errors(plugin, want):
    f = fw(spec([(plugin, 0)]))
    st = f.run_filter(CycleState(), POD, node("n"))
    assert (st.code, st.plugin, st.message()) == (Code.ERROR, plugin, want)


def test_prefilter_skip_skips_filter_and_score():
    f = fw(spec([("SkipPF", 0), ("A", 0)]))
    state = CycleState()
    res, st, _ = f.run_pre_filter(state, POD, [])
    assert st.is_success() and res is None
    assert state.skip_filter_plugins == {"SkipPF"}
    assert f.run_filter(state, POD, node("ok")) is None
    assert f.run_pre_score(state, POD, []).is_success()
    totals, st = f.run_score(state, POD, [node("x")])
    assert st.is_success() and totals == [10]


def test_prefilter_results_intersect_and_empty_intersection_is_unresolvable():
    f = fw(spec([("Narrow", 0)]))
    res, st, narrowing = f.run_pre_filter(CycleState(), POD, [])
    assert res.node_names == {"n1", "n2"} and narrowing == {"Narrow"}
    f = fw(spec([("Narrow", 0), ("Narrow2", 0)]))
    res, st, narrowing = f.run_pre_filter(CycleState(), POD, [])
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message() == "node(s) didn't satisfy plugin(s) [Narrow Narrow2] simultaneously"


def test_score_normalizes_weights_and_sums():
    f = fw(spec([("A", 3), ("B", 2)]))
    rec: dict[str, Any] = {}
    totals, st = f.run_score(CycleState(), POD, [node("x"), node("y")], record=rec)
    # A: 10 x 3 = 30; B: 50 normalized to 100 x 2 = 200
    assert st.is_success() and totals == [230, 230]
    assert rec["B"] == {"raw": [50, 50], "normalized": [100, 100], "weight": 2}


@pytest.mark.parametrize(("plugin", "want"), [
    pytest.param("BadScore", 'applying score defaultWeights on Score plugins: plugin "BadScore" returns an invalid score 500, '
                             "it should in the range of [0, 100] "
                             "after normalizing", id="out-of-range-score"),
    pytest.param("Boom", 'plugin "Boom" returned no status from Score', id="none-from-score"),
])
def test_score_errors(plugin, want):
    f = fw(spec([(plugin, 1)], filter=([], ["*"])))
    _, st = f.run_score(CycleState(), POD, [node("x")])
    assert (st.code, st.message()) == (Code.ERROR, want)


@pytest.mark.parametrize(("scores", "want"), [
    pytest.param([0, 100, 7], None, id="in-range"),
    pytest.param([3, 101, 7], 101, id="above-the-range"),
    pytest.param([3, -1, 7], -1, id="below-the-range"),
    pytest.param([-(2**62), 2**62, 7], 2**62, id="both-sides: the high one is named"),
])
def test_vector_scores_out_of_range_are_an_error_naming_the_value(scores, want):
    from scheduler.backend.snapshot import Snapshot
    nodes = [node(f"v{i}") for i in range(3)]
    snap = Snapshot.from_objects([n.node for n in nodes])
    arrays = snap.node_arrays()
    VECTOR_SCORES[:] = scores
    f = fw(spec([("VectorScore", 1)], filter=([], ["*"])))
    totals, st = f.run_score(CycleState(), POD, snap.node_info_list, arrays=arrays,
                             rows=np.arange(3, dtype=np.int64))
    if want is None:
        assert st.is_success() and totals.tolist() == scores
    else:
        assert (st.code, st.message()) == (Code.ERROR, "applying score defaultWeights on Score plugins: "
                                                       f'plugin "VectorScore" returns an invalid score {want}, '
                                                       "it should in the range of [0, 100] after normalizing")


def test_score_exception_mentioning_nonetype_is_a_fault_not_a_missing_status():
    f = fw(spec([("NoneArithmetic", 1)], filter=([], ["*"])))
    _, st = f.run_score(CycleState(), POD, [node("x")])
    assert st.code == Code.ERROR and st.plugin == "NoneArithmetic"
    assert st.message().startswith('running Score plugins: plugin "NoneArithmetic" failed with: unsupported operand type(s)')


def test_status_is_immutable_and_runtime_names_a_shared_status_without_changing_it():
    with pytest.raises(AttributeError):
        SHARED_REJECTION.plugin = "X"  # type: ignore[misc]
    f = fw(spec([("SharedReject", 0)]))
    st = f.run_filter(CycleState(), POD, node("n1"))
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, ["shared no"], "SharedReject")
    assert SHARED_REJECTION.plugin == ""
    named = Status.unschedulable("x", plugin="P")
    assert named.with_plugin("P") is named
    # immutable, so one rejection is shared by every node it rejects
    assert Status.unschedulable("x", plugin="P") is named
    assert Status.unresolvable("x", plugin="P") == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["x"], "P")


def test_reserve_failure_and_unreserve_in_reverse_order():
    CALLS.clear()
    f = fw(spec([("A", 0), ("B", 0)]))
    st = f.run_reserve(CycleState(), POD, "n")
    assert (st.code, st.plugin) == (Code.UNSCHEDULABLE, "B")
    f.run_unreserve(CycleState(), POD, "n")
    assert CALLS == ["A.reserve", "B.reserve", "B.unreserve", "A.unreserve"]


async def test_permit_wait_then_allow_by_every_plugin():
    f = fw(spec([("Waiter", 0), ("Waiter2", 0)]), clock=FakeClock())
    st = f.run_permit(CycleState(), POD, "n")
    assert st.code == Code.WAIT
    wp = f.get_waiting_pod(POD.uid)
    assert wp.pending_plugins() == ["Waiter", "Waiter2"]
    waiter = asyncio.create_task(f.wait_on_permit(POD))
    wp.allow("Waiter")
    await asyncio.sleep(0)
    assert not waiter.done()
    wp.allow("Waiter2")
    assert (await waiter).is_success()
    assert f.get_waiting_pod(POD.uid) is None


async def test_permit_timeout_rejects_with_upstream_message():
    clock = FakeClock()
    f = fw(spec([("Waiter", 0), ("Waiter2", 0)]), clock=clock)
    f.run_permit(CycleState(), POD, "n")
    waiter = asyncio.create_task(f.wait_on_permit(POD))
    async with asyncio.timeout(5):  # both permit timers are armed on the fake clock before time moves
        while clock.sleepers < 2:
            await asyncio.sleep(0)
    clock.advance(10)
    st = await waiter
    assert (st.code, st.plugin, st.message()) == (
        Code.UNSCHEDULABLE, "Waiter2", "rejected due to timeout after waiting 10s at plugin Waiter2")


def test_permit_rejection_wins():
    f = fw(spec([("Waiter", 0), ("Denier", 0)]))
    st = f.run_permit(CycleState(), POD, "n")
    assert (st.code, st.plugin, st.message()) == (Code.UNSCHEDULABLE, "Denier", "not now")
    assert f.get_waiting_pod(POD.uid) is None


async def test_bind_skip_falls_through_to_next_binder():
    CALLS.clear()
    f = fw(spec([("SkipBinder", 0), ("RealBinder", 0)]))
    st = await f.run_bind(CycleState(), POD, "n9")
    assert st.is_success() and CALLS == ["SkipBinder", "RealBinder:n9"]
    f = fw(spec([("SkipBinder", 0)]))
    assert (await f.run_bind(CycleState(), POD, "n9")).code == Code.SKIP


def test_nominated_pods_of_higher_priority_count_in_filter():
    class Nom:
        def __init__(self, pods: list[PodInfo]) -> None:
            self.pods = pods

        def nominated_pods_for_node(self, name: str) -> list[PodInfo]:
            return self.pods

        def __len__(self) -> int:
            return len(self.pods)

    f = fw(spec([("WithArgs", 0)], args={"WithArgs": {"limit": 1}}))
    n = node("n")
    hi = PodInfo(make_pod("hi").priority(10).obj())
    lo = PodInfo(make_pod("lo").priority(-1).obj())
    f.nominator = Nom([lo])
    assert f.run_filter_with_nominated_pods(CycleState(), POD, n) is None
    f.nominator = Nom([hi])
    st = f.run_filter_with_nominated_pods(CycleState(), POD, n)
    assert st is not None and st.reasons == ["full"]
    assert n.pods == []  # the snapshot NodeInfo itself is untouched


class Batch(ScorePlugin):
    NAME = "Batch"
    per_node_calls = 0

    def score(self, state, pod, node):
        Batch.per_node_calls += 1
        return 1, Status.success()

    def score_nodes(self, state, pod, nodes):
        return [len(n.name) * 10 for n in nodes], Status.success()


def test_score_nodes_batch_form_replaces_per_node_calls():
    REGISTRY["Batch"] = Batch
    try:
        f = Framework(spec([("Batch", 2)]), REGISTRY)
        rec: dict[str, Any] = {}
        totals, st = f.run_score(CycleState(), POD, [node("ab"), node("abcd")], record=rec)
    finally:
        del REGISTRY["Batch"]
    assert st.is_success() and totals == [40, 80] and Batch.per_node_calls == 0
    assert rec["Batch"]["raw"] == [20, 40]


def test_handle_filter_helpers_return_success_status():
    f = fw(spec([("A", 0)]))
    assert f.run_filter_plugins(CycleState(), POD, node("ok")).is_success()
    assert f.run_filter_plugins_with_nominated_pods(CycleState(), POD, node("bad")).reasons == ["A says no"]
    assert f.nominated_pods_for_node("x") == [] and f.scheduler_name == "default-scheduler"
