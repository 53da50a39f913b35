"""DefaultPreemption against upstream's own tables (kubernetes v1.33):
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go (TestPostFilter,
TestDryRunPreemption, TestSelectBestCandidate, TestPodEligibleToPreemptOthers, TestPreempt,
TestPreEnqueue) and pkg/scheduler/framework/preemption/preemption_test.go
(TestNodesWherePreemptionMightHelp, TestDryRunPreemption, TestPrepareCandidate).

Everything runs through the real scheduler (tests/scheduler/plugins/conftest.py): the profile's
plugins come from the registry, which here also holds upstream's small test plugins (the
"test-plugin" PreFilter whose AddPod/RemovePod fail on nodes labelled error=true, FakeFilter
counting its Filter calls, TrueFilter/FalseFilter/MatchFilter), as upstream registers them into
its framework. Translation notes:
- upstream's epochTimeN = time.Unix(0, N) (nanoseconds) become N seconds after the epoch (our
  start times are RFC 3339 strings; the order is what matters);
- upstream draws the dry run's offset from rand.New(rand.NewSource(4)) (4, 1, 3 for 5 nodes);
  those offsets are passed explicitly;
- preemption is always asynchronous here (no SchedulerAsyncPreemption gate), so the
  "async disabled" variants are not ported; the API calls run in the task the plugin spawns,
  which the tests drain.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

import scheduler.scheduler as sched_mod
from minik3s.api.errors import NotFoundError
from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code, FilterPlugin, PostFilterResult, PreFilterPlugin, Status
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins.default_preemption import (
    Candidate,
    DefaultPreemption,
    _potential_nodes,
    pick_one_node_for_preemption,
)
from scheduler.plugins.inter_pod_affinity import InterPodAffinity
from scheduler.plugins.node_resources.fit import NodeResourcesFit
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from scheduler.plugins.registry import in_tree_registry

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
MAX_INT32 = 2**31 - 1


def epoch(n: int) -> str:
    return f"1970-01-01T00:00:{n:02d}Z"


# --- upstream's test plugins, registered like in-tree ones -----------------------------------


class ErrorOnLabelPlugin(PreFilterPlugin):
    """Upstream TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    NAME = "test-plugin"

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        return None, Status()

    def has_pre_filter_extensions(self) -> bool:
        return True

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status:
        if node.labels.get("error") == "true":
            return Status.as_error(f"failed to add pod: {pod_to_schedule.name}")
        return Status()

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo,
                   node: NodeInfo) -> Status:
        if node.labels.get("error") == "true":
            return Status.as_error(f"failed to remove pod: {pod_to_schedule.name}")
        return Status()


class FakeFilter(FilterPlugin):
    """Upstream tf.FakeFilterPlugin: counts Filter calls, returns the code mapped to the node."""

    NAME = "FakeFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.calls = 0
        self.codes: dict[str, Code] = {}

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        self.calls += 1
        code = self.codes.get(node.name, Code.SUCCESS)
        if code == Code.SUCCESS:
            return Status()
        return Status(code, [f"injecting failure for pod {pod.name}"])


class TrueFilter(FilterPlugin):
    NAME = "TrueFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status()


class FalseFilter(FilterPlugin):
    NAME = "FalseFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status.unschedulable("Nodes failed the fake plugin")


class MatchFilter(FilterPlugin):
    NAME = "MatchFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status() if pod.name == node.name else Status.unschedulable("Nodes failed the fake plugin")


TEST_PLUGINS = (ErrorOnLabelPlugin, FakeFilter, TrueFilter, FalseFilter, MatchFilter)


@pytest.fixture(autouse=True)
def _test_plugins_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    reg = {**in_tree_registry(), **{p.NAME: p for p in TEST_PLUGINS}}
    monkeypatch.setattr(sched_mod, "_in_tree_registry", lambda: dict(reg))


# --- builders in upstream's shape ------------------------------------------------------------


def pod(name: str, *, node: str | None = None, prio: int | None = None, req: dict[str, str] | None = None,
        labels: dict[str, str] | None = None, start: str | None = None, policy: str | None = None,
        nominated: str | None = None) -> dict[str, Any]:
    b = make_pod(name).uid(name)
    if req:
        b.req(req)
    if prio is not None:
        b.priority(prio)
    if node:
        b.node(node)
    if labels:
        b.labels(labels)
    if start:
        b.start_time(start)
    if policy:
        b.preemption_policy(policy)
    if nominated:
        b.nominated(nominated)
    return b.obj()


def node(name: str, capacity: dict[str, str], labels: dict[str, str] | None = None) -> dict[str, Any]:
    b = make_node(name).capacity(capacity)
    if labels:
        b.labels(labels)
    return b.obj()


def topo_node(spec: str, capacity: dict[str, str]) -> dict[str, Any]:
    """Upstream's "name/zone/region" node names: the parts become hostname/zone/region labels."""
    parts = spec.split("/")
    return node(parts[0], capacity, dict(zip(("hostname", "zone", "region"), parts, strict=False)))


def pdb(selector: dict[str, str], allowed: int, disrupted: Sequence[str] = (), name: str = "pdb") -> dict[str, Any]:
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = dict.fromkeys(disrupted, "2026-01-01T00:00:00Z")
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": selector}}, "status": status}


async def drain_preemptions() -> None:
    while pending := [t for t in asyncio.all_tasks() if t.get_name().startswith("preemption:")]:
        await asyncio.gather(*pending, return_exceptions=True)


def unschedulable_everywhere(nodes: Sequence[dict[str, Any]]) -> dict[str, Status]:
    return {n["metadata"]["name"]: Status(Code.UNSCHEDULABLE) for n in nodes}


def pre_filter(run: Any, p: dict[str, Any]) -> CycleState:
    state = CycleState()
    _, st, _ = run.framework.run_pre_filter(state, PodInfo(p), run.scheduler.snapshot.node_info_list)
    assert st.is_success(), st
    return state


def deleted(calls: Sequence[tuple[Any, ...]]) -> list[str]:
    return sorted(c[3] for c in calls if c[0] == "delete")


# ============================================================================================
# TestPostFilter
# ============================================================================================

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE

POST_FILTER_CASES = [
    pytest.param(
        pod("p", prio=HIGH), [pod("p1", node="node1")], [], [node("node1", ONE_POD)], {"node1": U},
        "node1", (Code.SUCCESS, []), id="pod with higher priority can be made schedulable"),
    pytest.param(
        pod("p"), [pod("p1", node="node1")], [], [node("node1", ONE_POD)], {"node1": U},
        "", (U, ["preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."]),
        id="pod with tied priority is still unschedulable"),
    pytest.param(
        pod("p", prio=HIGH), [pod("p1", node="node1")], [], [node("node1", ONE_POD)], {"node1": UU},
        "", (U, ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]),
        id="preemption should respect filteredNodesStatuses"),
    pytest.param(
        pod("p", prio=HIGH), [pod("p1", node="node1")], [], [node("node1", ONE_POD)], {},
        "", (U, ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]),
        id="preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable"),
    pytest.param(
        pod("p", prio=MID), [pod("p1", node="node1", prio=HIGH), pod("p2", node="node2", prio=LOW)], [],
        [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U},
        "node2", (Code.SUCCESS, []), id="pod can be made schedulable on one node"),
    pytest.param(
        pod("p", prio=VERY_HIGH),
        [pod("p1", node="node1", prio=HIGH, labels={"test.kubernetes.io/is-violating-pdb": "non-violating"}),
         pod("p2", node="node1", prio=LOW, labels={"test.kubernetes.io/is-violating-pdb": "violating"}),
         pod("p3", node="node2", prio=MID, labels={"test.kubernetes.io/is-violating-pdb": "violating"})],
        [pdb({"test.kubernetes.io/is-violating-pdb": "violating"}, 0, name="violating-pdb"),
         pdb({"test.kubernetes.io/is-violating-pdb": "non-violating"}, MAX_INT32, name="non-violating-pdb")],
        [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U},
        "node2", (Code.SUCCESS, []), id="pod can be made schedulable on minHighestPriority node"),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2")], [],
        [node("node1", NODE_RES), node("node2", NODE_RES)], {"node1": U, "node2": U},
        "", (U, ["preemption: 0/2 nodes are available: 2 Insufficient cpu."]),
        id="no candidate nodes found, no enough resource after removing low priority pods"),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", node="node1", prio=HIGH), pod("p2", node="node2"), pod("p3", node="node3", prio=HIGH)], [],
        [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        {"node1": U, "node2": U, "node3": U},
        "", (U, ["preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                 "2 No preemption victims found for incoming pod."]),
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource"),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2")], [],
        [node(f"node{i}", NODE_RES) for i in (1, 2, 3, 4)], {"node1": U, "node2": U, "node4": UU},
        "", (U, ["preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                 "2 Preemption is not helpful for scheduling."]),
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
           "don't have enough CPU resource"),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE), [pod("p1", node="node1")], [],
        [node("node1", LARGE, {"error": "true"})], {"node1": U},
        None, (Code.ERROR, ['preemption: running RemovePod on PreFilter plugin "test-plugin": '
                            "failed to remove pod: p"]),
        id="only one node but failed with TestPlugin"),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2", req=MEDIUM)], [],
        [node("node1", LARGE, {"error": "true"}), node("node2", LARGE)], {"node1": U, "node2": U},
        "node2", (Code.SUCCESS, []), id="one failed with TestPlugin and the other pass"),
]


@pytest.mark.parametrize(("preemptor", "pods", "pdbs", "nodes", "codes", "want_node", "want_status"),
                         POST_FILTER_CASES)
async def test_post_filter(fw, preemptor, pods, pdbs, nodes, codes, want_node, want_status):
    run = fw.Run([NodeResourcesFit, ErrorOnLabelPlugin, DefaultPreemption],
                 fw.Snapshot(nodes, pods, informers={"poddisruptionbudgets": pdbs}))
    state = pre_filter(run, preemptor)
    statuses = {name: Status(code) for name, code in codes.items()}
    result, st = await run.plugin("DefaultPreemption").post_filter(state, PodInfo(preemptor), statuses)
    await drain_preemptions()
    assert (st.code, st.reasons) == want_status
    if want_node is None:
        assert result is None
    else:
        assert result == PostFilterResult(want_node)


async def test_post_filter_same_error_on_several_nodes_is_reported_once(fw):
    """Derived from "only one node but failed with TestPlugin" with two such nodes: upstream
    aggregates the dry run's errors (utilerrors.NewAggregate), which reports a repeated message once."""
    nodes = [node("node1", LARGE, {"error": "true"}), node("node2", LARGE, {"error": "true"})]
    run = fw.Run([NodeResourcesFit, ErrorOnLabelPlugin, DefaultPreemption],
                 fw.Snapshot(nodes, [pod("p1", node="node1"), pod("p2", node="node2")]))
    preemptor = pod("p", prio=HIGH, req=LARGE)
    result, st = await run.plugin("DefaultPreemption").post_filter(
        pre_filter(run, preemptor), PodInfo(preemptor), {"node1": Status(U), "node2": Status(U)})
    assert result is None
    assert (st.code, st.reasons) == (
        Code.ERROR, ['preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'])


# ============================================================================================
# TestDryRunPreemption (defaultpreemption)
# ============================================================================================


def _c(node_name: str, *victims: str, pdb_violations: int = 0) -> tuple[str, list[str], int]:
    return (node_name, sorted(victims), pdb_violations)


DEFAULT_ARGS = None
ARGS_40_1 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
ARGS_40_2 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}
FIVE = ["node1", "node2", "node3", "node4", "node5"]

DRY_RUN_CASES = [
    pytest.param(
        [FalseFilter], None, ["node1", "node2"], [pod("p", prio=HIGH)],
        [pod("p1", node="node1", prio=MID), pod("p2", node="node2", prio=MID)], [], Code.SUCCESS, [0],
        [[]], [2], id="a pod that does not fit on any node"),
    pytest.param(
        [TrueFilter], None, ["node1", "node2"], [pod("p", prio=HIGH)],
        [pod("p1", node="node1", prio=MID), pod("p2", node="node2", prio=MID)], [], Code.UNSCHEDULABLE, [0],
        [[]], [2], id="a pod that fits with no preemption"),
    pytest.param(
        [MatchFilter], None, ["node1", "node2"], [pod("node1", prio=HIGH)],
        [pod("p1", node="node1", prio=MID), pod("p2", node="node2", prio=MID)], [], Code.UNSCHEDULABLE, [0],
        [[]], [2], id="a pod that fits on one node with no preemption"),
    pytest.param(
        [NodeResourcesFit], None, ["node1", "node2"], [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1", node="node1", prio=MID, req=LARGE), pod("p2", node="node2", prio=MID, req=LARGE)], [],
        Code.SUCCESS, [0], [[_c("node1", "p1"), _c("node2", "p2")]], [4],
        id="a pod that fits on both nodes when lower priority pods are preempted"),
    pytest.param(
        [NodeResourcesFit], None, ["node1", "node2"], [pod("p", prio=LOW, req=LARGE)],
        [pod("p1", node="node1", prio=MID, req=LARGE), pod("p2", node="node2", prio=MID, req=LARGE)], [],
        Code.SUCCESS, [0], [[]], [0],
        id="a pod that would fit on the nodes, but other pods running are higher priority, no preemption "
           "would happen"),
    pytest.param(
        [NodeResourcesFit], None, ["node1", "node2"], [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1.1", node="node1", prio=LOW, req=SMALL), pod("p1.2", node="node1", prio=MID, req=LARGE),
         pod("p2", node="node2", prio=MID, req=LARGE)], [],
        Code.SUCCESS, [0], [[_c("node1", "p1.2"), _c("node2", "p2")]], [5],
        id="medium priority pod is preempted, but lower priority one stays as it is small"),
    pytest.param(
        [NodeResourcesFit], None, ["node1", "node2"], [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1.1", node="node1", prio=MID, req=SMALL), pod("p1.2", node="node1", prio=LOW, req=SMALL),
         pod("p1.3", node="node1", prio=MID, req=MEDIUM), pod("p1.4", node="node1", prio=HIGH, req=SMALL),
         pod("p2", node="node2", prio=HIGH, req=LARGE)], [],
        Code.SUCCESS, [0], [[_c("node1", "p1.2", "p1.3")]], [4], id="mixed priority pods are preempted"),
    pytest.param(
        [NodeResourcesFit], None, ["node1", "node2"], [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1.1", node="node1", prio=LOW, req=SMALL, start=epoch(5)),
         pod("p1.2", node="node1", prio=LOW, req=SMALL, start=epoch(4)),
         pod("p1.3", node="node1", prio=MID, req=MEDIUM, start=epoch(3)),
         pod("p1.4", node="node1", prio=HIGH, req=SMALL, start=epoch(2)),
         pod("p2", node="node2", prio=HIGH, req=LARGE, start=epoch(1))], [],
        Code.SUCCESS, [0], [[_c("node1", "p1.1", "p1.3")]], [4],
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal"),
    pytest.param(
        [NodeResourcesFit, InterPodAffinity], None, ["node1", "node2"],
        [make_pod("p").uid("p").labels(foo="").priority(HIGH).req(SMALL).obj()],
        [make_pod("p1.1").uid("p1.1").node("node1").labels(foo="").priority(LOW).req(SMALL)
         .pod_anti_affinity("hostname", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}).obj(),
         pod("p1.2", node="node1", prio=MID, req=SMALL), pod("p1.3", node="node1", prio=HIGH, req=SMALL),
         pod("p2", node="node2", prio=HIGH, req=SMALL)], [],
        Code.SUCCESS, [0], [[_c("node1", "p1.1")]], [3], id="pod with anti-affinity is preempted"),
    pytest.param(
        [PodTopologySpread], None, ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [make_pod("p").uid("p").labels(foo="").priority(HIGH)
         .spread_constraint(1, "zone", "DoNotSchedule", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]})
         .spread_constraint(1, "hostname", "DoNotSchedule",
                            {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}).obj()],
        [pod("pod-a1", node="node-a", prio=MID, labels={"foo": ""}),
         pod("pod-a2", node="node-a", prio=LOW, labels={"foo": ""}),
         pod("pod-b1", node="node-b", prio=LOW, labels={"foo": ""}),
         pod("pod-x1", node="node-x", prio=HIGH, labels={"foo": ""}),
         pod("pod-x2", node="node-x", prio=HIGH, labels={"foo": ""})], [],
        Code.SUCCESS, [0], [[_c("node-a", "pod-a2"), _c("node-b", "pod-b1")]], [5],
        id="preemption to resolve pod topology spread filter failure"),
    pytest.param(
        [NodeResourcesFit], None, ["node1", "node2"], [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1", node="node1", prio=MID, req=LARGE), pod("p2", node="node2", prio=MID, req=LARGE)], [],
        Code.UNSCHEDULABLE, [0], [[]], [2],
        id="get Unschedulable in the preemption phase when the filter plugins filtering the nodes"),
    pytest.param(
        [NodeResourcesFit], None, ["node1"], [pod("p", prio=HIGH, req=VERY_LARGE)],
        [pod("p1.1", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM),
         pod("p1.2", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM)],
        [pdb({"app": "foo"}, 1)], Code.SUCCESS, [0], [[_c("node1", "p1.1", "p1.2", pdb_violations=1)]], [3],
        id="preemption with violation of same pdb"),
    pytest.param(
        [NodeResourcesFit], None, ["node1"], [pod("p", prio=HIGH, req=VERY_LARGE)],
        [pod("p1.1", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM),
         pod("p1.2", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM)],
        [pdb({"app": "foo"}, 1, disrupted=["p2"])], Code.SUCCESS, [0],
        [[_c("node1", "p1.1", "p1.2", pdb_violations=1)]], [3],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't "
           "belong to DisruptedPods"),
    pytest.param(
        [NodeResourcesFit], None, ["node1"], [pod("p", prio=HIGH, req=VERY_LARGE)],
        [pod("p1.1", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM),
         pod("p1.2", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM)],
        [pdb({"app": "foo"}, 1, disrupted=["p1.2"])], Code.SUCCESS, [0],
        [[_c("node1", "p1.1", "p1.2", pdb_violations=0)]], [3],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim belongs "
           "to DisruptedPods"),
    pytest.param(
        [NodeResourcesFit], None, ["node1"], [pod("p", prio=HIGH, req=VERY_LARGE)],
        [pod("p1.1", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM),
         pod("p1.2", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM),
         pod("p1.3", node="node1", labels={"app": "foo"}, prio=MID, req=MEDIUM)],
        [pdb({"app": "foo"}, 1, disrupted=["p1.3"])], Code.SUCCESS, [0],
        [[_c("node1", "p1.1", "p1.2", "p1.3", pdb_violations=1)]], [4],
        id="preemption with violation of the pdb with pod whose eviction was processed, the victim which "
           "belongs to DisruptedPods is treated as 'nonViolating'"),
    pytest.param(
        [NodeResourcesFit], ARGS_40_1, FIVE, [pod("p", prio=HIGH, req=LARGE)],
        [pod(f"p{i}", node=f"node{i}", prio=MID, req=LARGE) for i in range(1, 6)], [],
        Code.SUCCESS, [4], [[_c("node1", "p1"), _c("node5", "p5")]], [4],
        id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2"),
    pytest.param(
        [NodeResourcesFit], ARGS_40_1, FIVE, [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1", node="node1", prio=MID, req=LARGE), pod("p2", node="node2", prio=VERY_HIGH, req=LARGE),
         pod("p3", node="node3", prio=MID, req=LARGE), pod("p4", node="node4", prio=MID, req=LARGE),
         pod("p5", node="node5", prio=VERY_HIGH, req=LARGE)], [],
        Code.SUCCESS, [4], [[_c("node1", "p1"), _c("node3", "p3")]], [4],
        id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2"),
    pytest.param(
        [NodeResourcesFit], ARGS_40_1, FIVE,
        [pod("tp1", prio=HIGH, req=LARGE), pod("tp2", prio=HIGH, req=LARGE), pod("tp3", prio=HIGH, req=LARGE)],
        [pod(f"p{i}", node=f"node{i}", prio=MID, req=LARGE) for i in range(1, 6)], [],
        Code.SUCCESS, [4, 1, 3],
        [[_c("node1", "p1"), _c("node5", "p5")], [_c("node2", "p2"), _c("node3", "p3")],
         [_c("node4", "p4"), _c("node5", "p5")]], [4, 4, 4],
        id="preemption offset across multiple scheduling cycles and wrap around"),
    pytest.param(
        [NodeResourcesFit], ARGS_40_2, FIVE, [pod("p", prio=HIGH, req=LARGE)],
        [pod("p1", node="node1", labels={"app": "foo"}, prio=MID, req=LARGE),
         pod("p2", node="node2", labels={"app": "foo"}, prio=MID, req=LARGE),
         pod("p3", node="node3", prio=MID, req=LARGE), pod("p4", node="node4", prio=MID, req=LARGE),
         pod("p5", node="node5", labels={"app": "foo"}, prio=MID, req=LARGE)],
        [pdb({"app": "foo"}, 0)], Code.SUCCESS, [4],
        [[_c("node1", "p1", pdb_violations=1), _c("node3", "p3"), _c("node5", "p5", pdb_violations=1)]], [8],
        id="preemption looks past numCandidates until a non-PDB violating node is found"),
]


@pytest.mark.parametrize(("plugins", "args", "node_names", "test_pods", "init_pods", "pdbs", "fake_rc", "offsets",
                          "expected", "filter_calls"), DRY_RUN_CASES)
def test_dry_run_preemption(fw, plugins, args, node_names, test_pods, init_pods, pdbs, fake_rc, offsets,
                            expected, filter_calls):
    nodes = [topo_node(n, VERY_LARGE) for n in node_names]
    run = fw.Run([FakeFilter, *plugins, (DefaultPreemption, args)], fw.Snapshot(nodes, init_pods))
    fake = run.plugin("FakeFilter")
    fake.codes = {n["metadata"]["name"]: fake_rc for n in nodes}
    pl = run.plugin("DefaultPreemption")
    node_infos = sorted(run.scheduler.snapshot.node_info_list, key=lambda ni: ni.name)
    for cycle, p in enumerate(test_pods):
        state = pre_filter(run, p)
        before = fake.calls
        cands, _ = pl.dry_run_preemption(state, PodInfo(p), node_infos, pdbs, offsets[cycle],
                                         pl.calculate_num_candidates(len(node_infos)))
        got = sorted((c.name, sorted(v.name for v in c.victims), c.num_pdb_violations) for c in cands)
        assert got == expected[cycle], f"cycle {cycle}"
        assert fake.calls - before == filter_calls[cycle], f"cycle {cycle}: Filter calls"


# ============================================================================================
# TestSelectBestCandidate (pickOneNodeForPreemption through the dry run, and through PostFilter)
# ============================================================================================


def _pods(*specs: tuple[str, str, int, dict[str, str], str]) -> list[dict[str, Any]]:
    return [pod(n, node=nd, prio=pr, req=rq, start=st) for n, nd, pr, rq, st in specs]


E0 = epoch(0)
SELECT_BEST_CASES = [
    pytest.param(["node1", "node2"], pod("p", prio=HIGH, req=LARGE),
                 _pods(("p1", "node1", MID, LARGE, E0), ("p2", "node2", MID, LARGE, E0)),
                 {"node1", "node2"}, id="a pod that fits on both nodes when lower priority pods are preempted"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 _pods(("p1.1", "node1", MID, MEDIUM, E0), ("p1.2", "node1", MID, LARGE, E0),
                       ("p2.1", "node2", MID, MEDIUM, E0), ("p2.2", "node2", LOW, MEDIUM, E0),
                       ("p3.1", "node3", LOW, MEDIUM, E0), ("p3.2", "node3", LOW, MEDIUM, E0)),
                 {"node3"}, id="node with min highest priority pod is picked"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 _pods(("p1.1", "node1", MID, MEDIUM, E0), ("p1.2", "node1", MID, LARGE, E0),
                       ("p2.1", "node2", MID, LARGE, E0), ("p2.2", "node2", LOW, MEDIUM, E0),
                       ("p3.1", "node3", MID, MEDIUM, E0), ("p3.2", "node3", MID, MEDIUM, E0)),
                 {"node2"}, id="when highest priorities are the same, minimum sum of priorities is picked"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 _pods(("p1.1", "node1", MID, SMALL, E0), ("p1.2", "node1", NEG, SMALL, E0),
                       ("p1.3", "node1", MID, SMALL, E0), ("p1.4", "node1", NEG, SMALL, E0),
                       ("p2.1", "node2", MID, LARGE, E0), ("p2.2", "node2", NEG, MEDIUM, E0),
                       ("p3.1", "node3", MID, MEDIUM, E0), ("p3.2", "node3", NEG, SMALL, E0),
                       ("p3.3", "node3", LOW, SMALL, E0)),
                 {"node2"}, id="when highest priority and sum are the same, minimum number of pods is picked"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 _pods(("p1.1", "node1", MID, SMALL, E0), ("p1.2", "node1", NEG, SMALL, E0),
                       ("p1.3", "node1", NEG, SMALL, E0),
                       ("p2.1", "node2", MID, LARGE, E0), ("p2.2", "node2", NEG, MEDIUM, E0),
                       ("p3.1", "node3", MID, MEDIUM, E0), ("p3.2", "node3", NEG, SMALL, E0),
                       ("p3.3", "node3", LOW, SMALL, E0)),
                 {"node2"}, id="sum of adjusted priorities is considered"),
    pytest.param(["node1", "node2", "node3", "node4"], pod("p", prio=VERY_HIGH, req=VERY_LARGE),
                 _pods(("p1.1", "node1", MID, SMALL, E0), ("p1.2", "node1", LOW, SMALL, E0),
                       ("p1.3", "node1", LOW, SMALL, E0),
                       ("p2.1", "node2", HIGH, LARGE, E0),
                       ("p3.1", "node3", MID, MEDIUM, E0), ("p3.2", "node3", LOW, SMALL, E0),
                       ("p3.3", "node3", LOW, SMALL, E0), ("p3.4", "node3", LOW, MEDIUM, E0),
                       ("p4.1", "node4", MID, MEDIUM, E0), ("p4.2", "node4", MID, SMALL, E0),
                       ("p4.3", "node4", MID, SMALL, E0), ("p4.4", "node4", NEG, SMALL, E0)),
                 {"node1"}, id="non-overlapping lowest high priority, sum priorities, and number of pods"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 _pods(("p1.1", "node1", MID, MEDIUM, epoch(2)), ("p1.2", "node1", MID, MEDIUM, epoch(2)),
                       ("p2.1", "node2", MID, MEDIUM, epoch(3)), ("p2.2", "node2", MID, MEDIUM, epoch(3)),
                       ("p3.1", "node3", MID, MEDIUM, epoch(1)), ("p3.2", "node3", MID, MEDIUM, epoch(1))),
                 {"node2"}, id="same priority, same number of victims, different start time for each node's pod"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 _pods(("p1.1", "node1", MID, MEDIUM, epoch(4)), ("p1.2", "node1", MID, MEDIUM, epoch(2)),
                       ("p2.1", "node2", MID, MEDIUM, epoch(5)), ("p2.2", "node2", MID, MEDIUM, epoch(1)),
                       ("p3.1", "node3", MID, MEDIUM, epoch(3)), ("p3.2", "node3", MID, MEDIUM, epoch(6))),
                 {"node3"}, id="same priority, same number of victims, different start time for all pods"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 _pods(("p1.1", "node1", LOW, MEDIUM, epoch(4)), ("p1.2", "node1", MID, MEDIUM, epoch(2)),
                       ("p2.1", "node2", MID, MEDIUM, epoch(6)), ("p2.2", "node2", LOW, MEDIUM, epoch(1)),
                       ("p3.1", "node3", LOW, MEDIUM, epoch(3)), ("p3.2", "node3", MID, MEDIUM, epoch(5))),
                 {"node2"}, id="different priority, same number of victims, different start time for all pods"),
]


@pytest.mark.parametrize(("node_names", "preemptor", "pods", "expected"), SELECT_BEST_CASES)
async def test_select_best_candidate(fw, node_names, preemptor, pods, expected):
    nodes = [node(n, VERY_LARGE) for n in node_names]
    run = fw.Run([NodeResourcesFit, DefaultPreemption], fw.Snapshot(nodes, pods))
    pl = run.plugin("DefaultPreemption")
    # upstream's path: the dry run over every node, then SelectCandidate
    state = pre_filter(run, preemptor)
    node_infos = run.scheduler.snapshot.node_info_list
    cands, _ = pl.dry_run_preemption(state, PodInfo(preemptor), node_infos, [], 0,
                                     pl.calculate_num_candidates(len(node_infos)))
    best = pick_one_node_for_preemption(cands)
    assert best is not None and best.name in expected
    # and the scheduler's own path: Filter, then PostFilter with its statuses
    statuses, _, _, state = run.filter(preemptor)
    assert not any(s.is_success() for s in statuses.values())
    result, st = await run.framework.run_post_filter(state, PodInfo(preemptor), statuses)
    await drain_preemptions()
    assert st.is_success(), st
    assert result.nominated_node_name in expected


# ============================================================================================
# TestPodEligibleToPreemptOthers
# ============================================================================================

TERMINATING_LOW = make_pod("p1").uid("p1").priority(LOW).node("node1").terminating().obj()
TERMINATING_BY_PREEMPTION = (make_pod("p1").uid("p1").priority(LOW).node("node1").terminating()
                             .condition("DisruptionTarget", "True", reason="PreemptionByScheduler").obj())

ELIGIBLE_CASES = [
    pytest.param(pod("p_with_nominated_node", prio=HIGH, nominated="node1"), [TERMINATING_LOW], ["node1"],
                 Status.unresolvable("node(s) had untolerated taint"),
                 True, id="Pod with nominated node"),
    pytest.param(pod("p_without_nominated_node", prio=HIGH), [], [], None, True,
                 id="Pod without nominated node"),
    pytest.param(pod("p_with_preempt_never_policy", prio=HIGH, policy="Never"), [], [], None, False,
                 id="Pod with 'PreemptNever' preemption policy"),
    pytest.param(pod("p_with_nominated_node", prio=HIGH, nominated="node1"), [TERMINATING_BY_PREEMPTION],
                 ["node1"], None, False,
                 id="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition"),
    pytest.param(pod("p_with_nominated_node", prio=HIGH, nominated="node1"), [TERMINATING_LOW], ["node1"], None,
                 True, id="non-victim Pods terminating"),
]


@pytest.mark.parametrize(("preemptor", "pods", "node_names", "nominated_status", "expected"), ELIGIBLE_CASES)
def test_pod_eligible_to_preempt_others(fw, preemptor, pods, node_names, nominated_status, expected):
    for p in pods:  # upstream's pods all carry uid "p1"; ours must differ from the preemptor's
        assert p["metadata"]["uid"] != preemptor["metadata"]["uid"]
    run = fw.Run([DefaultPreemption], fw.Snapshot([make_node(n).obj() for n in node_names], pods))
    got, _ = run.plugin("DefaultPreemption").pod_eligible_to_preempt_others(PodInfo(preemptor), nominated_status)
    assert got is expected


# ============================================================================================
# TestPreempt (the extender cases are not ported: minik3s has no scheduler extenders)
# ============================================================================================

PREEMPT_CASES = [
    pytest.param(
        pod("p", prio=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"),
        [pod("p1.1", node="node1", prio=LOW, req=SMALL), pod("p1.2", node="node1", prio=LOW, req=SMALL),
         pod("p2.1", node="node2", prio=HIGH, req=LARGE), pod("p3.1", node="node3", prio=MID, req=MEDIUM)],
        ["node1", "node2", "node3"], NodeResourcesFit, "node1", ["p1.1", "p1.2"], id="basic preemption logic"),
    pytest.param(
        make_pod("p").uid("p").labels(foo="").priority(HIGH)
        .spread_constraint(1, "zone", "DoNotSchedule", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]})
        .spread_constraint(1, "hostname", "DoNotSchedule",
                           {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}).obj(),
        [pod("p-a1", node="node-a", prio=HIGH, labels={"foo": ""}),
         pod("p-a2", node="node-a", prio=HIGH, labels={"foo": ""}),
         pod("p-b1", node="node-b", prio=LOW, labels={"foo": ""}),
         pod("p-x1", node="node-x", prio=HIGH, labels={"foo": ""}),
         pod("p-x2", node="node-x", prio=HIGH, labels={"foo": ""})],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"], PodTopologySpread, "node-b", ["p-b1"],
        id="preemption for topology spread constraints"),
    pytest.param(
        pod("p", prio=HIGH, req=VERY_LARGE, policy="Never"),
        [pod("p1.1", node="node1", prio=LOW, req=SMALL), pod("p1.2", node="node1", prio=LOW, req=SMALL),
         pod("p2.1", node="node2", prio=HIGH, req=LARGE), pod("p3.1", node="node3", prio=MID, req=MEDIUM)],
        ["node1", "node2", "node3"], NodeResourcesFit, None, [], id="no preempting in pod"),
    pytest.param(
        pod("p", prio=HIGH, req=VERY_LARGE),
        [pod("p1.1", node="node1", prio=LOW, req=SMALL), pod("p1.2", node="node1", prio=LOW, req=SMALL),
         pod("p2.1", node="node2", prio=HIGH, req=LARGE), pod("p3.1", node="node3", prio=MID, req=MEDIUM)],
        ["node1", "node2", "node3"], NodeResourcesFit, "node1", ["p1.1", "p1.2"], id="PreemptionPolicy is nil"),
]


@pytest.mark.parametrize(("preemptor", "pods", "node_names", "plugin", "want", "victims"), PREEMPT_CASES)
async def test_preempt(fw, preemptor, pods, node_names, plugin, want, victims):
    nodes = [topo_node(n, VERY_LARGE) for n in node_names]
    run = fw.Run([plugin, DefaultPreemption], fw.Snapshot(nodes, pods))
    pl = run.plugin("DefaultPreemption")
    state = pre_filter(run, preemptor)
    result, st = await pl.preempt(state, PodInfo(preemptor), unschedulable_everywhere(nodes))
    assert st.is_success() or st.is_rejected(), st
    assert (result.nominated_node_name if result is not None else None) == want
    await drain_preemptions()
    calls = run.client.calls
    assert deleted(calls) == sorted(victims)
    patched = sorted(c[3] for c in calls if c[0] == "patch" and c[5] == "status" and "conditions" in c[4]["status"])
    assert patched == deleted(calls)
    for c in calls:
        if c[0] == "patch" and "conditions" in c[4]["status"]:
            (cond,) = c[4]["status"]["conditions"]
            assert {k: cond[k] for k in ("type", "status", "reason", "message")} == {
                "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                "message": "default-scheduler: preempting to accommodate a higher priority pod"}
    # preempting again (nothing reported schedulable-by-preemption) preempts nothing more
    n = len(calls)
    result, st = await pl.preempt(state, PodInfo(preemptor), {})
    await drain_preemptions()
    assert result is None or result.nominated_node_name == ""
    assert [c for c in run.client.calls[n:] if c[0] == "delete"] == []


async def test_preempt_nominated_node_without_status_counts_as_unresolvable(fw):
    """Derived from TestPreempt's second Preempt call (an empty NodeToStatus for a pod nominated
    to a node): upstream reads the nominated node's status through NodeToStatus.Get, so a node
    without an entry is UnschedulableAndUnresolvable and the pod stays eligible, even with a
    preemption victim still terminating there; nothing is preempted and its nomination is cleared."""
    preemptor = pod("p", prio=HIGH, req=VERY_LARGE, nominated="node1")
    run = fw.Run([NodeResourcesFit, DefaultPreemption],
                 fw.Snapshot([node("node1", VERY_LARGE)], [TERMINATING_BY_PREEMPTION]))
    pl = run.plugin("DefaultPreemption")
    result, st = await pl.post_filter(pre_filter(run, preemptor), PodInfo(preemptor), {})
    await drain_preemptions()
    assert (st.code, st.reasons) == (
        U, ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."])
    assert result == PostFilterResult("")
    assert [c[:4] for c in run.client.calls] == [("patch", "pods", "default", "p")]


# ============================================================================================
# TestPreEnqueue (async preemption enabled; the "disabled" case has no counterpart here)
# ============================================================================================


@pytest.mark.parametrize(("to_check", "want"), [
    pytest.param("p", (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                       ["waiting for the preemption for this pod to be finished"]),
                 id="AsyncPreemption enabled, same pod, returns UnschedulableAndUnresolvable"),
    pytest.param("p_other", (Code.SUCCESS, []), id="AsyncPreemption enabled, different pod, returns nil"),
])
async def test_pre_enqueue(fw, to_check, want):
    preemptor = pod("p", prio=HIGH)
    run = fw.Run([NodeResourcesFit, DefaultPreemption],
                 fw.Snapshot([node("node1", ONE_POD)], [pod("p1", node="node1")]))
    pl = run.plugin("DefaultPreemption")
    state = pre_filter(run, preemptor)
    result, st = await pl.post_filter(state, PodInfo(preemptor), {"node1": Status(Code.UNSCHEDULABLE)})
    assert st.is_success() and result == PostFilterResult("node1")
    # the preemption task has not run yet (upstream blocks its PreemptPod until the check is done)
    got = pl.pre_enqueue(pod(to_check, prio=HIGH))
    await drain_preemptions()
    assert (got.code, got.reasons) == want
    assert pl.pre_enqueue(pod("p", prio=HIGH)).is_success()  # released once the task finished


# ============================================================================================
# preemption_test.go: TestNodesWherePreemptionMightHelp
# ============================================================================================

AFFINITY = "node(s) didn't match Pod's node affinity/selector"
NODE_NAME = "node(s) didn't match the requested node name"
TAINT = "node(s) had untolerated taint"
IPA_AFFINITY = "node(s) didn't match pod affinity rules"
IPA_ANTI = "node(s) didn't match pod anti-affinity rules"
UNSCHED_NODE = "node(s) were unschedulable"
UNKNOWN_COND = "node(s) had unknown conditions"
DISK = "node(s) had no available disk"
VZ = "node(s) had no available volume zone"
VB_NODE = "node(s) had volume node affinity conflict"
VB_BIND = "node(s) didn't find available persistent volumes to bind"
PTS = "node(s) didn't match pod topology spread constraints"
PTS_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"


def _st(code: Code, reason: str) -> Status:
    return Status(code, [reason] if reason else [])


MIGHT_HELP_CASES = [
    pytest.param({"node1": _st(UU, AFFINITY), "node2": _st(UU, NODE_NAME), "node3": _st(UU, TAINT),
                  "node4": _st(UU, IPA_AFFINITY)}, set(), id="No node should be attempted"),
    pytest.param({"node1": _st(U, IPA_ANTI), "node2": _st(UU, NODE_NAME), "node3": _st(UU, UNSCHED_NODE),
                  "node4": _st(U, "Unschedulable")}, {"node1", "node4"},
                 id="ErrReasonAntiAffinityRulesNotMatch should be tried as it indicates that the pod is "
                    "unschedulable due to inter-pod anti-affinity"),
    pytest.param({"node1": _st(UU, IPA_AFFINITY), "node2": _st(U, IPA_ANTI), "node3": _st(U, "Unschedulable"),
                  "node4": _st(U, "Unschedulable")}, {"node2", "node3", "node4"},
                 id="ErrReasonAffinityRulesNotMatch should not be tried as it indicates that the pod is "
                    "unschedulable due to inter-pod affinity, but ErrReasonAntiAffinityRulesNotMatch should be "
                    "tried as it indicates that the pod is unschedulable due to inter-pod anti-affinity"),
    pytest.param({"node1": _st(UU, DISK), "node2": _st(U, "Insufficient memory"), "node3": _st(U, "Unschedulable"),
                  "node4": _st(U, "Unschedulable")}, {"node2", "node3", "node4"},
                 id="Mix of failed predicates works fine"),
    pytest.param({"node1": _st(UU, UNKNOWN_COND), "node2": _st(U, "Unschedulable"),
                  "node3": _st(U, "Unschedulable"), "node4": _st(U, "Unschedulable")}, {"node2", "node3", "node4"},
                 id="Node condition errors should be considered unresolvable"),
    pytest.param({"node1": _st(UU, VZ), "node2": _st(UU, VB_NODE), "node3": _st(UU, VB_BIND),
                  "node4": _st(U, "Unschedulable")}, {"node4"},
                 id="ErrVolume... errors should not be tried as it indicates that the pod is unschedulable due to "
                    "no matching volumes for pod on node"),
    pytest.param({"node1": _st(U, PTS), "node2": _st(UU, NODE_NAME), "node3": _st(U, PTS),
                  "node4": _st(U, "Unschedulable")}, {"node1", "node3", "node4"},
                 id="ErrReasonConstraintsNotMatch should be tried as it indicates that the pod is unschedulable "
                    "due to topology spread constraints"),
    pytest.param({"node1": _st(U, ""), "node2": _st(UU, ""), "node3": _st(U, ""), "node4": _st(UU, "")},
                 {"node1", "node3"},
                 id="UnschedulableAndUnresolvable status should be skipped but Unschedulable should be tried"),
    pytest.param({"node1": _st(U, ""), "node2": _st(UU, PTS_LABEL), "node3": _st(U, ""), "node4": _st(UU, "")},
                 {"node1", "node3"},
                 id="ErrReasonNodeLabelNotMatch should not be tried as it indicates that the pod is unschedulable "
                    "due to node doesn't have the required label"),
]


@pytest.mark.parametrize(("statuses", "expected"), MIGHT_HELP_CASES)
async def test_nodes_where_preemption_might_help(fw, statuses, expected):
    nodes = [make_node(f"node{i}").obj() for i in (1, 2, 3, 4)]
    run = fw.Run([DefaultPreemption], fw.Snapshot(nodes))
    potential, _, _ = _potential_nodes(run.scheduler.snapshot.node_info_list, statuses)
    assert {ni.name for ni in potential} == expected
    # observable through PostFilter: the nodes tried have no victims, the others are not helped
    preemptor = pod("p", prio=HIGH)
    result, st = await run.plugin("DefaultPreemption").post_filter(CycleState(), PodInfo(preemptor), statuses)
    counts = []
    if expected:
        counts.append(f"{len(expected)} No preemption victims found for incoming pod")
    if len(expected) < 4:
        counts.append(f"{4 - len(expected)} Preemption is not helpful for scheduling")
    assert (st.code, st.reasons) == (U, [f"preemption: 0/4 nodes are available: {', '.join(sorted(counts))}."])
    assert result == PostFilterResult("")


# ============================================================================================
# preemption_test.go: TestDryRunPreemption (a PostFilter plugin whose SelectVictimsOnNode
# returns the node's first pod and a fixed number of PDB violations)
# ============================================================================================


@pytest.mark.parametrize(("num_violating", "expected"), [
    pytest.param(0, [("node1", ["p1"], 0), ("node2", ["p2"], 0)], id="no pdb violation"),
    pytest.param(1, [("node1", ["p1"], 1), ("node2", ["p2"], 1)], id="pdb violation on each node"),
])
def test_evaluator_dry_run_preemption(fw, monkeypatch, num_violating, expected):
    nodes = [node("node1", VERY_LARGE), node("node2", VERY_LARGE)]
    init = [pod("p1", node="node1", prio=MID), pod("p2", node="node2", prio=MID)]
    run = fw.Run([DefaultPreemption], fw.Snapshot(nodes, init))
    pl = run.plugin("DefaultPreemption")

    def first_pod(state, p, ni, pdbs, *, protected=frozenset()):
        return [ni.pods[0]], num_violating, Status()

    monkeypatch.setattr(pl, "select_victims_on_node", first_pod)
    preemptor = pod("p", prio=HIGH)
    node_infos = sorted(run.scheduler.snapshot.node_info_list, key=lambda ni: ni.name)
    cands, _ = pl.dry_run_preemption(CycleState(), PodInfo(preemptor), node_infos, [], 0, len(node_infos))
    got = sorted((c.name, [v.name for v in c.victims], c.num_pdb_violations) for c in cands)
    assert got == expected


# ============================================================================================
# preemption_test.go: TestPrepareCandidate (async preemption; v1.33's table)
# ============================================================================================

COND_MSG = "default-scheduler: preempting to accommodate a higher priority pod"


def _victim(name: str, uid: str, prio: int = MID, with_condition: bool = False) -> dict[str, Any]:
    b = make_pod(name).uid(uid).node("node1").priority(prio)
    if with_condition:
        b.condition("DisruptionTarget", "True", reason="PreemptionByScheduler", message=COND_MSG)
    return b.obj()


VICTIM1 = _victim("victim1", "victim1")
FAIL_VICTIM = _victim("fail-victim", "victim1")
VICTIM2 = _victim("victim2", "victim2", prio=50000)
VICTIM1_COND = _victim("victim1", "victim1", with_condition=True)
FAIL_VICTIM_COND = _victim("fail-victim", "victim1", with_condition=True)
PREEMPTOR = make_pod("preemptor").uid("preemptor").priority(HIGH).obj()


class FailingClient:
    """Upstream's fake clientset reactors: patch and delete of "fail-victim" fail, the rest succeed
    (recorded); "not-found-victim" answers NotFound."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.patch_failed = False
        self.delete_failed = False

    async def patch(self, res: Any, name: str, patch: Any, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        if name == "fail-victim":
            self.patch_failed = True
            raise RuntimeError("patch pod status failed")
        if name == "not-found-victim":
            raise NotFoundError(f'pods "{name}" not found')
        self.calls.append(("patch", res.resource, namespace, name, patch, kw.get("subresource")))
        return {}

    async def delete(self, res: Any, name: str, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        if name == "fail-victim":
            self.delete_failed = True
            raise RuntimeError("delete pod failed")
        if name == "not-found-victim":
            raise NotFoundError(f'pods "{name}" not found')
        self.calls.append(("delete", res.resource, namespace, name))
        return {}


PREPARE_CASES = [
    pytest.param("", [], [VICTIM1], [""], False, False, False, id="no victims"),
    pytest.param("node1", [VICTIM1], [VICTIM1], ["victim1"], False, False, False,
                 id="one victim without condition"),
    pytest.param("node1", [VICTIM1_COND], [VICTIM1_COND], ["victim1"], False, False, False,
                 id="one victim with same condition"),
    pytest.param("node1", [VICTIM1_COND], [], ["victim1"], False, False, False,
                 id="one victim, not-found victim error is ignored when patching"),
    pytest.param("node1", [FAIL_VICTIM_COND], [], [""], True, False, True, id="one victim, but pod deletion failed"),
    pytest.param("node1", [VICTIM1], [], ["victim1"], False, False, False,
                 id="one victim, not-found victim error is ignored when deleting"),
    pytest.param("node1", [FAIL_VICTIM], [], [""], False, True, True, id="one victim, but patch pod failed"),
    pytest.param("node1", [FAIL_VICTIM, VICTIM2], [VICTIM1], ["victim2", ""], False, True, True,
                 id="two victims without condition, one passes successfully and the second fails"),
]


@pytest.mark.parametrize(("cand_node", "victims", "pods", "want_deleted", "delete_err", "patch_err", "activated"),
                         PREPARE_CASES)
async def test_prepare_candidate_async(fw, cand_node, victims, pods, want_deleted, delete_err, patch_err,
                                       activated):
    client = FailingClient()
    run = fw.Run([DefaultPreemption], fw.Snapshot([node("node1", VERY_LARGE)], pods), client=client)
    activations: list[tuple[list[str], str | None]] = []
    real_activate = run.framework.pod_activator

    def recording_activate(ps: list[dict[str, Any]], *, gated_by: str | None = None) -> None:
        activations.append(([p["metadata"]["name"] for p in ps], gated_by))
        real_activate(ps, gated_by=gated_by)

    run.framework.pod_activator = recording_activate
    pl = run.plugin("DefaultPreemption")
    preemptor = PodInfo(PREEMPTOR)
    pl.prepare_candidate_async(Candidate(cand_node, [PodInfo(v) for v in victims], 0), preemptor)
    # registered synchronously, before the task makes any call
    assert pl.is_pod_running_preemption("preemptor")
    await drain_preemptions()
    assert not pl.is_pod_running_preemption("preemptor")
    assert (client.delete_failed, client.patch_failed) == (delete_err, patch_err)
    got = deleted(client.calls)
    assert len(got) <= 1
    assert (got[0] if got else "") in want_deleted
    # upstream activates the preemptor (its fake activator records any Activate) only when a call
    # failed; minik3s also releases a preemptor still held at PreEnqueue (gated_by) on success
    forced = [names for names, gated in activations if gated is None]
    assert forced == ([["preemptor"]] if activated else [])
