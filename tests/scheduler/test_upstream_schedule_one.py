"""Upstream pkg/scheduler/schedule_one_test.go (generic scheduling) and
framework/types_test.go TestFitError_Error, ported.

Tables: TestSchedulerSchedulePod, TestFindFitAllError, TestFindFitSomeError,
TestFindFitPredicateCallCounts, TestZeroRequest, TestNumFeasibleNodesToFind,
TestFairEvaluationForNodes, TestPreferNominatedNodeFilterCallCounts, TestSelectHost and
TestFitError_Error. Upstream's fake plugins (TrueFilter, FalseFilter, MatchFilter, NoPodsFilter,
FakeFilter, FakePreFilter, NumericMap, ReverseNumericMap, TrueMap, FalseMap,
EqualPrioritizerPlugin, FakePreScoreAndScorePlugin) are tiny plugins defined here and handed to
a real `Scheduler` through its `registry` (what `pluginRegistry` / an out-of-tree registry
produces); each case enables them per extension point as upstream's `tf.Register*Plugin` calls
do, next to the in-tree PrioritySort, DefaultBinder, VolumeBinding, PodTopologySpread and
NodeResources plugins. Nodes and pods go into the scheduler's real Cache and Snapshot;
`Scheduler.schedule_pod` / `_find_nodes_that_fit` are upstream's schedulePod /
findNodesThatFitPod. Every SchedulePod case runs on both Filter paths (the NumPy NodeArrays walk
and the batched scalar walk), which must agree.

Not ported (no minik3s counterpart): the extender cases of TestSchedulerSchedulePod ("test with
extender which filters out some Nodes"; minik3s has no scheduler extenders).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from minik3s.client.store import Store, object_key
from minik3s.testing.builders import make_node, make_pod
from minik3s.utils.clock import FakeClock
from scheduler.config import parse_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    Code,
    FilterPlugin,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins.registry import in_tree_registry
from scheduler.scheduler import (
    Diagnosis,
    FitError,
    Scheduler,
    SchedulingError,
    num_feasible_nodes_to_find,
)

ERR_REASON_FAKE = "Nodes failed the fake plugin"
HOSTNAME = "kubernetes.io/hostname"
UNSCHED = Code.UNSCHEDULABLE
UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
PROFILE = "default-scheduler"


# ---------------------------------------------------------------------------------------------- listers
class _Lister:
    """An informer's read side over fixed objects (upstream's fake listers / informer stores)."""

    def __init__(self, objs: Iterable[dict[str, Any]] = ()) -> None:
        self.store = Store()
        for o in objs:
            self.store.put(object_key(o), o)
        self.has_synced = True

    def add_handler(self, **_: Any) -> None:
        return None

    async def wait_for_sync(self) -> None:
        return None


class _Listers:
    def __init__(self, objects: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.objects = objects or {}

    def informer(self, res: Any, namespace: str | None = None, **_: Any) -> _Lister:
        return _Lister(self.objects.get(res.resource, []))


# ---------------------------------------------------------------------------------------------- fake plugins
class TrueFilter(FilterPlugin):
    NAME = "TrueFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status.success()


class FalseFilter(FilterPlugin):
    NAME = "FalseFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status.unschedulable(ERR_REASON_FAKE)


class MatchFilter(FilterPlugin):
    """Success when the pod and the node have the same name."""

    NAME = "MatchFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status.success() if pod.name == node.name else Status.unschedulable(ERR_REASON_FAKE)


class NoPodsFilter(FilterPlugin):
    """Success on a node without pods."""

    NAME = "NoPodsFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status.success() if not node.pods else Status.unschedulable(ERR_REASON_FAKE)


def fake_filter(codes: dict[str, Code] | None = None, name: str = "FakeFilter") -> type[FilterPlugin]:
    """Upstream FakeFilterPlugin: counts its calls; the nodes in `codes` get that code with
    "injecting failure for pod <pod>"."""
    failing = dict(codes or {})

    class FakeFilter(FilterPlugin):
        NAME = name

        def __init__(self, args: Any = None, handle: Any = None) -> None:
            super().__init__(args, handle)
            self.num_filter_called = 0

        def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
            self.num_filter_called += 1
            code = failing.get(node.name)
            if code is None:
                return Status.success()
            msg = f"injecting failure for pod {pod.name}"
            if code == Code.ERROR:
                return Status.as_error(msg)
            return Status(code, [msg])

    return FakeFilter


def fake_prefilter(name: str, nodes: set[str] | None = None, status: Status | None = None) -> type[PreFilterPlugin]:
    """Upstream FakePreFilterPlugin: returns PreFilterResult(nodes) (None: all nodes) and `status`."""

    class FakePreFilter(PreFilterPlugin):
        NAME = name

        def pre_filter(self, state: CycleState, pod: PodInfo,
                       all_nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
            result = None if nodes is None else PreFilterResult(set(nodes))
            return result, status or Status.success()

    return FakePreFilter


class FakeFilter2(PreFilterPlugin, FilterPlugin):
    """PreFilter Skip; its Filter (Error on every node) must then never run."""

    NAME = "FakeFilter2"

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        return None, Status.skip()

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status.as_error(f"injecting failure for pod {pod.name}")


class NumericMap(ScorePlugin):
    """Score = the node name as an integer."""

    NAME = "NumericMap"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        try:
            return int(node.name), Status.success()
        except ValueError:
            return 0, Status.as_error(f"Error converting nodename to int: {node.name}")


class ReverseNumericMap(NumericMap):
    """NumericMap normalized to max + min - score."""

    NAME = "ReverseNumericMap"

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        hi = max(s.score for s in scores)
        lo = min(s.score for s in scores)
        for s in scores:
            s.score = hi + lo - s.score
        return Status.success()


class TrueMap(ScorePlugin):
    NAME = "TrueMap"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 1, Status.success()

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        if any(not s.name for s in scores):
            return Status.as_error("unexpected empty host name")
        return Status.success()


class FalseMap(ScorePlugin):
    NAME = "FalseMap"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 0, Status.as_error("priority map encounters an error")


class EqualPrioritizerPlugin(ScorePlugin):
    NAME = "EqualPrioritizerPlugin"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 1, Status.success()


class FakePreScoreAndScorePlugin(PreScorePlugin, ScorePlugin):
    """PreScore Skip; its Score (an Error) must then never run."""

    NAME = "FakePreScoreAndScorePlugin"

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        return Status.skip()

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 0, Status.as_error("this score function shouldn't be executed because this plugin returned Skip "
                                  "in the PreScore")


# ---------------------------------------------------------------------------------------------- harness
Entry = str | tuple[str, int]


def build(points: dict[str, list[Entry]], extra: Iterable[type[Any]] = (), *,
          nodes: Iterable[dict[str, Any]] = (), pods: Iterable[dict[str, Any]] = (),
          objects: dict[str, list[dict[str, Any]]] | None = None, percentage: int | None = None,
          profile_percentage: int | None = None) -> Scheduler:
    """A real Scheduler with one profile: PrioritySort, DefaultBinder and the `points` given
    (extension point -> plugin names, score entries with weights), the test plugins added to the
    in-tree registry; the nodes and assigned pods in its cache and snapshot."""
    registry: dict[str, type[Any]] = {**in_tree_registry(), **{c.NAME: c for c in extra}}
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]},
                               "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                               "bind": {"enabled": [{"name": "DefaultBinder"}]}}
    for point, entries in points.items():
        plugins[point] = {"enabled": [{"name": e} if isinstance(e, str) else {"name": e[0], "weight": e[1]}
                                      for e in entries]}
    profile: dict[str, Any] = {"schedulerName": PROFILE, "plugins": plugins}
    if profile_percentage is not None:
        profile["percentageOfNodesToScore"] = profile_percentage
    data: dict[str, Any] = {"profiles": [profile]}
    if percentage is not None:
        data["percentageOfNodesToScore"] = percentage
    s = Scheduler(parse_config(data), client=None, informers=_Listers(objects), clock=FakeClock(),
                  rng=random.Random(0), registry=registry)
    for n in nodes:
        s.cache.add_node(n)
    for p in pods:
        s.cache.add_pod(p)
    s.cache.update_snapshot(s.snapshot)
    return s


def fw_of(s: Scheduler) -> Any:
    return s.frameworks[PROFILE]


def node(name: str, hostname: str | None = None) -> dict[str, Any]:
    return make_node(name).labels({HOSTNAME: hostname or name}).obj()


def bare_nodes(*names: str) -> list[dict[str, Any]]:
    """Upstream makeNodeList: nodes with only a name."""
    out = []
    for n in names:
        obj = make_node(n).obj()
        obj["metadata"]["labels"] = {}
        out.append(obj)
    return out


def pod(name: str, uid: str | None = None) -> dict[str, Any]:
    return make_pod(name).uid(uid if uid is not None else name).obj()


def running(name: str, on: str, **labels: str) -> dict[str, Any]:
    return make_pod(name).uid(name).labels(labels).node(on).phase("Running").obj()


def with_pvc(p: dict[str, Any], claim: str) -> dict[str, Any]:
    p["spec"]["volumes"] = [{"name": claim, "persistentVolumeClaim": {"claimName": claim}}]
    return p


def claim(name: str, volume: str = "", *, deleting: bool = False) -> dict[str, Any]:
    """A claim as upstream's test stores it (AnnBindCompleted set on every claim)."""
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name,
                            "annotations": {"pv.kubernetes.io/bind-completed": "true"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": {}}


def volume(name: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "uid": name},
            "spec": spec or {}, "status": {}}


@pytest.fixture(params=["vector", "batched"])
def filter_path(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def on_path(s: Scheduler, path: str) -> Scheduler:
    s.vector_paths = path == "vector"
    return s


# ---------------------------------------------------------------------------------------------- FitError view
@dataclass
class Fit:
    """What upstream's cmp.Diff of the FitError compares (absent status: code and reasons)."""

    num_all_nodes: int
    statuses: dict[str, tuple[Code, list[str], str]] = field(default_factory=dict)
    absent: tuple[Code, list[str]] = (UNRES, [])
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    message: str = ""


def fit_view(fe: FitError) -> Fit:
    d = fe.diagnosis
    absent = d.absent_status or Status(UNRES)
    return Fit(fe.num_all_nodes,
               {n: (st.code, list(st.reasons), st.plugin) for n, st in d.node_to_status.items()},
               (absent.code, list(absent.reasons)), set(d.unschedulable_plugins), d.pre_filter_msg, str(fe))


def fake_all(names: Iterable[str], plugin: str, reason: str = ERR_REASON_FAKE,
             code: Code = UNSCHED) -> dict[str, tuple[Code, list[str], str]]:
    return {n: (code, [reason], plugin) for n in names}


# ---------------------------------------------------------------------------------------------- TestSchedulerSchedulePod
@dataclass
class Case:
    name: str
    points: dict[str, list[Entry]]
    extra: list[type[Any]]
    nodes: list[dict[str, Any]]
    pod: dict[str, Any]
    pods: list[dict[str, Any]] = field(default_factory=list)
    pvcs: list[dict[str, Any]] = field(default_factory=list)
    pvs: list[dict[str, Any]] = field(default_factory=list)
    want_nodes: set[str] | None = None
    want_evaluated: int | None = None
    want_fit: Fit | None = None
    want_error: str | None = None


N12 = ["node1", "node2"]
N123 = ["node1", "node2", "node3"]
SPREAD_SEL = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
PV1_AFFINITY = {"nodeAffinity": {"required": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": ["host1"]}]}]}}}

SCHEDULE_POD_CASES: list[Case] = [
    Case("test 1", {"filter": ["FalseFilter"]}, [FalseFilter], [node(n) for n in N12], pod("2"),
         want_fit=Fit(2, fake_all(N12, "FalseFilter"), unschedulable_plugins={"FalseFilter"},
                      message=f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.")),
    Case("test 2", {"filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
         [TrueFilter, EqualPrioritizerPlugin], [node(n) for n in N12], pod("ignore"), want_nodes={"node1", "node2"}),
    # fits on the node whose name is the pod's
    Case("test 3", {"filter": ["MatchFilter"]}, [MatchFilter], [node(n) for n in N12], pod("node2"),
         want_nodes={"node2"}),
    Case("test 4", {"filter": ["TrueFilter"], "score": [("NumericMap", 1)]}, [TrueFilter, NumericMap],
         [node(n) for n in "321"], pod("ignore"), want_nodes={"3"}),
    Case("test 5", {"filter": ["MatchFilter"], "score": [("NumericMap", 1)]}, [MatchFilter, NumericMap],
         [node(n) for n in "321"], pod("2"), want_nodes={"2"}),
    Case("test 6", {"filter": ["TrueFilter"], "score": [("NumericMap", 1), ("ReverseNumericMap", 2)]},
         [TrueFilter, NumericMap, ReverseNumericMap], [node(n) for n in "321"], pod("2"), want_nodes={"1"}),
    Case("test 7", {"filter": ["TrueFilter", "FalseFilter"], "score": [("NumericMap", 1)]},
         [TrueFilter, FalseFilter, NumericMap], [node(n) for n in "321"], pod("2"),
         want_fit=Fit(3, fake_all("321", "FalseFilter"), unschedulable_plugins={"FalseFilter"},
                      message=f"0/3 nodes are available: 3 {ERR_REASON_FAKE}.")),
    Case("test 8", {"filter": ["NoPodsFilter", "MatchFilter"], "score": [("NumericMap", 1)]},
         [NoPodsFilter, MatchFilter, NumericMap], [node("1"), node("2")], pod("2"), pods=[running("2", "2")],
         want_fit=Fit(2, {**fake_all("1", "MatchFilter"), **fake_all("2", "NoPodsFilter")},
                      unschedulable_plugins={"MatchFilter", "NoPodsFilter"},
                      message=f"0/2 nodes are available: 2 {ERR_REASON_FAKE}.")),
    # pod with an existing (bound) claim
    Case("existing PVC", {"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"],
                          "score": [("EqualPrioritizerPlugin", 1)]},
         [TrueFilter, EqualPrioritizerPlugin], [node(n) for n in N12], with_pvc(pod("ignore"), "existingPVC"),
         pvcs=[claim("existingPVC", "existingPV")], pvs=[volume("existingPV")], want_nodes={"node1", "node2"}),
    Case("unknown PVC", {"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"]}, [TrueFilter],
         [node(n) for n in N12], with_pvc(pod("ignore"), "unknownPVC"),
         want_fit=Fit(2, absent=(UNRES, ['persistentvolumeclaim "unknownPVC" not found']),
                      unschedulable_plugins={"VolumeBinding"},
                      pre_filter_msg='persistentvolumeclaim "unknownPVC" not found',
                      message='0/2 nodes are available: persistentvolumeclaim "unknownPVC" not found.')),
    Case("deleted PVC", {"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"]}, [TrueFilter],
         [node(n) for n in N12], with_pvc(pod("ignore"), "existingPVC"),
         pvcs=[claim("existingPVC", deleting=True)],
         want_fit=Fit(2, absent=(UNRES, ['persistentvolumeclaim "existingPVC" is being deleted']),
                      unschedulable_plugins={"VolumeBinding"},
                      pre_filter_msg='persistentvolumeclaim "existingPVC" is being deleted',
                      message='0/2 nodes are available: persistentvolumeclaim "existingPVC" is being deleted.')),
    Case("test error with priority map", {"filter": ["TrueFilter"], "score": [("FalseMap", 1), ("TrueMap", 2)]},
         [TrueFilter, FalseMap, TrueMap], [node("2"), node("1")], pod("2", uid=""),
         want_error='running Score plugins: plugin "FalseMap" failed with: priority map encounters an error'),
    Case("test podtopologyspread plugin - 2 nodes with maxskew=1",
         {"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"]}, [], [node(n) for n in N12],
         make_pod("p").uid("p").labels(foo="").spread_constraint(1, HOSTNAME, "DoNotSchedule", SPREAD_SEL).obj(),
         pods=[running("pod1", "node1", foo="")], want_nodes={"node2"}),
    Case("test podtopologyspread plugin - 3 nodes with maxskew=2",
         {"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"],
          "score": [("EqualPrioritizerPlugin", 1)]}, [EqualPrioritizerPlugin], [node(n) for n in N123],
         make_pod("p").uid("p").labels(foo="").spread_constraint(2, HOSTNAME, "DoNotSchedule", SPREAD_SEL).obj(),
         pods=[running("pod1a", "node1", foo=""), running("pod1b", "node1", foo=""), running("pod2", "node2", foo="")],
         want_nodes={"node2", "node3"}),
    Case("test with filter plugin returning Unschedulable status",
         {"filter": ["FakeFilter"], "score": [("NumericMap", 1)]}, [fake_filter({"3": UNSCHED}), NumericMap],
         [node("3")], pod("test-filter"),
         want_fit=Fit(1, fake_all("3", "FakeFilter", "injecting failure for pod test-filter"),
                      unschedulable_plugins={"FakeFilter"},
                      message="0/1 nodes are available: 1 injecting failure for pod test-filter.")),
    Case("test with filter plugin returning UnschedulableAndUnresolvable status",
         {"filter": ["FakeFilter"], "score": [("NumericMap", 1)]}, [fake_filter({"3": UNRES}), NumericMap],
         [node("3")], pod("test-filter"),
         want_fit=Fit(1, fake_all("3", "FakeFilter", "injecting failure for pod test-filter", UNRES),
                      unschedulable_plugins={"FakeFilter"},
                      message="0/1 nodes are available: 1 injecting failure for pod test-filter.")),
    Case("test with partial failed filter plugin", {"filter": ["FakeFilter"], "score": [("NumericMap", 1)]},
         [fake_filter({"1": UNSCHED}), NumericMap], [node("1"), node("2")], pod("test-filter")),
    Case("test prefilter plugin returning Unschedulable status", {"preFilter": ["FakePreFilter"]},
         [fake_prefilter("FakePreFilter", status=Status.unresolvable("injected unschedulable status"))],
         [node("1"), node("2")], pod("test-prefilter"),
         want_fit=Fit(2, absent=(UNRES, ["injected unschedulable status"]), unschedulable_plugins={"FakePreFilter"},
                      pre_filter_msg="injected unschedulable status",
                      message="0/2 nodes are available: injected unschedulable status.")),
    Case("test prefilter plugin returning error status", {"preFilter": ["FakePreFilter"]},
         [fake_prefilter("FakePreFilter", status=Status.as_error("injected error status"))],
         [node("1"), node("2")], pod("test-prefilter"),
         want_error='running PreFilter plugin "FakePreFilter": injected error status'),
    # no score plugin: Filter looks for one node only
    Case("test prefilter plugin returning node",
         {"preFilter": ["FakePreFilter1", "FakePreFilter2", "FakePreFilter3"]},
         [fake_prefilter("FakePreFilter1"), fake_prefilter("FakePreFilter2", {"node2"}),
          fake_prefilter("FakePreFilter3", {"node1", "node2"})], [node(n) for n in N123], pod("test-prefilter"),
         want_nodes={"node2"}, want_evaluated=1),
    Case("test prefilter plugin returning non-intersecting nodes",
         {"preFilter": ["FakePreFilter1", "FakePreFilter2", "FakePreFilter3"]},
         [fake_prefilter("FakePreFilter1"), fake_prefilter("FakePreFilter2", {"node2"}),
          fake_prefilter("FakePreFilter3", {"node1"})], [node(n) for n in N123], pod("test-prefilter"),
         want_fit=Fit(3, absent=(UNRES, ["node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] "
                                         "simultaneously"]),
                      unschedulable_plugins={"FakePreFilter2", "FakePreFilter3"},
                      pre_filter_msg="node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3] simultaneously",
                      message="0/3 nodes are available: node(s) didn't satisfy plugin(s) "
                              "[FakePreFilter2 FakePreFilter3] simultaneously.")),
    Case("test prefilter plugin returning empty node set", {"preFilter": ["FakePreFilter1", "FakePreFilter2"]},
         [fake_prefilter("FakePreFilter1"), fake_prefilter("FakePreFilter2", set())], [node("node1")],
         pod("test-prefilter"),
         want_fit=Fit(1, absent=(UNRES, ["node(s) didn't satisfy plugin FakePreFilter2"]),
                      unschedulable_plugins={"FakePreFilter2"},
                      pre_filter_msg="node(s) didn't satisfy plugin FakePreFilter2",
                      message="0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2.")),
    Case("test some nodes are filtered out by prefilter plugin and other are filtered out by filter plugin",
         {"preFilter": ["FakePreFilter"], "filter": ["FakeFilter"]},
         [fake_prefilter("FakePreFilter", {"node2"}), fake_filter({"node2": UNSCHED})], [node(n) for n in N12],
         pod("test-prefilter"),
         want_fit=Fit(2, fake_all(["node2"], "FakeFilter", "injecting failure for pod test-prefilter"),
                      absent=(UNRES, ["node(s) didn't satisfy plugin(s) [FakePreFilter]"]),
                      unschedulable_plugins={"FakePreFilter", "FakeFilter"},
                      message="0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
                              "1 node(s) didn't satisfy plugin(s) [FakePreFilter].")),
    Case("test prefilter plugin returning skip",
         {"preFilter": ["FakePreFilter1", "FakeFilter2"], "filter": ["FakeFilter1", "FakeFilter2"],
          "score": [("EqualPrioritizerPlugin", 1)]},
         [fake_prefilter("FakePreFilter1"), fake_filter({"node1": UNSCHED}, name="FakeFilter1"), FakeFilter2,
          EqualPrioritizerPlugin], [node(n) for n in N123], pod("test-prefilter"),
         want_nodes={"node2", "node3"}, want_evaluated=3),
    Case("test all prescore plugins return skip",
         {"filter": ["TrueFilter"], "preScore": ["FakePreScoreAndScorePlugin"],
          "score": [("FakePreScoreAndScorePlugin", 1)]}, [TrueFilter, FakePreScoreAndScorePlugin],
         [node(n) for n in N12], pod("ignore"), want_nodes={"node1", "node2"}),
    Case("test without score plugin no extra nodes are evaluated", {"filter": ["TrueFilter"]}, [TrueFilter],
         [node(n) for n in N123], pod("pod1"), want_nodes=set(N123), want_evaluated=1),
    Case("test no score plugin, prefilter plugin returning 2 nodes", {"preFilter": ["FakePreFilter"]},
         [fake_prefilter("FakePreFilter", {"node1", "node2"})], [node(n) for n in N123], pod("test-prefilter"),
         want_nodes={"node1", "node2"}, want_evaluated=1),
    Case("test prefilter plugin returned an invalid node", {"preFilter": ["FakePreFilter"], "filter": ["TrueFilter"]},
         [fake_prefilter("FakePreFilter", {"invalid-node"}), TrueFilter], [node("1"), node("2")],
         pod("test-prefilter"),
         want_fit=Fit(2, absent=(UNRES, ["node(s) didn't satisfy plugin(s) [FakePreFilter]"]),
                      unschedulable_plugins={"FakePreFilter"},
                      message="0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter].")),
    Case("hostname and nodename of the node do not match",
         {"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
         [TrueFilter, EqualPrioritizerPlugin], [node("node1", "host1")], with_pvc(pod("pod1"), "PVC1"),
         pvcs=[claim("PVC1", "PV1")], pvs=[volume("PV1", PV1_AFFINITY)], want_nodes={"node1"}),
]

def _case_params() -> list[Any]:
    out = []
    for c in SCHEDULE_POD_CASES:
        out.append(pytest.param(c, id=c.name))
    return out


def run_schedule_pod(c: Case, path: str) -> tuple[Scheduler, Any]:
    s = on_path(build(c.points, c.extra, nodes=c.nodes, pods=c.pods,
                      objects={"persistentvolumeclaims": c.pvcs, "persistentvolumes": c.pvs}), path)
    try:
        return s, s.schedule_pod(fw_of(s), CycleState(), PodInfo(c.pod))
    except (FitError, SchedulingError) as e:
        return s, e


@pytest.mark.parametrize("case", _case_params())
def test_scheduler_schedule_pod(case: Case, filter_path: str) -> None:
    _, got = run_schedule_pod(case, filter_path)
    if case.want_fit is not None:
        assert isinstance(got, FitError), got
        assert fit_view(got) == case.want_fit
        return
    if case.want_error is not None:
        assert isinstance(got, SchedulingError), got
        assert got.status.code == Code.ERROR
        assert got.status.message() == case.want_error
        return
    assert not isinstance(got, Exception), got
    if case.want_nodes is not None:
        assert got.suggested_host in case.want_nodes
    want_evaluated = case.want_evaluated if case.want_evaluated is not None else len(case.nodes)
    assert got.evaluated_nodes == want_evaluated


@pytest.mark.parametrize(("name", "plugin"), [
    ("test error with priority map", "FalseMap"),
    ("test prefilter plugin returning error status", "FakePreFilter"),
])
def test_scheduler_schedule_pod_errors_are_scheduling_errors(name: str, plugin: str, filter_path: str) -> None:
    """The error cases' kind: an Error status naming the plugin and carrying the plugin's
    message, no FitError."""
    [case] = [c for c in SCHEDULE_POD_CASES if c.name == name]
    _, got = run_schedule_pod(case, filter_path)
    assert isinstance(got, SchedulingError), got
    assert got.status.code == Code.ERROR and got.status.plugin == plugin
    assert got.status.message().endswith(case.want_error.rsplit(": ", 1)[1])  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------------- TestFindFit*
def test_find_fit_all_error() -> None:
    s = build({"filter": ["TrueFilter", "MatchFilter"]}, [TrueFilter, MatchFilter], nodes=bare_nodes("3", "2", "1"))
    pi = PodInfo(make_pod("").uid("").obj())
    feasible, diag = s._find_nodes_that_fit(fw_of(s), CycleState(), pi, s.snapshot.node_info_list, None)
    assert feasible == []
    assert {n: (st.code, st.reasons, st.plugin) for n, st in diag.node_to_status.items()} == \
        fake_all("123", "MatchFilter")
    assert diag.absent_status is None or (diag.absent_status.code, diag.absent_status.reasons) == (UNRES, [])
    assert diag.unschedulable_plugins == {"MatchFilter"}
    assert diag.pre_filter_msg == ""


def test_find_fit_some_error() -> None:
    nodes = bare_nodes("3", "2", "1")
    s = build({"filter": ["TrueFilter", "MatchFilter"]}, [TrueFilter, MatchFilter], nodes=nodes)
    pi = PodInfo(pod("1"))
    feasible, diag = s._find_nodes_that_fit(fw_of(s), CycleState(), pi, s.snapshot.node_info_list, None)
    assert [n.name for n in feasible] == ["1"]
    assert len(diag.node_to_status) == len(nodes) - 1
    assert diag.unschedulable_plugins == {"MatchFilter"}
    for name in ("3", "2"):
        assert diag.node_to_status[name].reasons == [ERR_REASON_FAKE]


LOW, MID, HIGH = 0, 100, 1000


@pytest.mark.parametrize(("prio", "want"), [
    pytest.param(HIGH, 1, id="nominated pods have lower priority, predicate is called once"),
    pytest.param(LOW, 2, id="nominated pods have higher priority, predicate is called twice"),
])
def test_find_fit_predicate_call_counts(prio: int, want: int) -> None:
    s = build({"filter": ["FakeFilter"]}, [fake_filter()], nodes=bare_nodes("1"))
    s.queue.nominator.pod_lister = None  # upstream's test nominator has no pod lister (NewPodNominator(nil))
    nominated = make_pod("").uid("nominated").priority(MID).obj()
    s.queue.nominator.add(PodInfo(nominated), "1")
    the_pod = make_pod("1").uid("1").priority(prio).obj()
    s.schedule_pod(fw_of(s), CycleState(), PodInfo(the_pod))
    assert fw_of(s).plugins["FakeFilter"].num_filter_called == want


@pytest.mark.parametrize(("the_pod", "codes", "want"), [
    pytest.param(make_pod("p_with_nominated_node").uid("p").priority(HIGH).nominated("node1").obj(), None, 1,
                 id="pod has the nominated node set, filter is called only once"),
    pytest.param(make_pod("p_without_nominated_node").uid("p").priority(HIGH).obj(), None, 3,
                 id="pod without the nominated pod, filter is called for each node"),
    pytest.param(make_pod("p_with_nominated_node").uid("p").priority(HIGH).nominated("node1").obj(),
                 {"node1": UNSCHED}, 4, id="nominated pod cannot pass the filter, filter is called for each node"),
])
def test_prefer_nominated_node_filter_call_counts(the_pod: dict[str, Any], codes: dict[str, Code] | None,
                                                  want: int, filter_path: str) -> None:
    s = on_path(build({"filter": ["FakeFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
                      [fake_filter(codes), EqualPrioritizerPlugin], nodes=bare_nodes(*N123)), filter_path)
    s.schedule_pod(fw_of(s), CycleState(), PodInfo(the_pod))
    assert fw_of(s).plugins["FakeFilter"].num_filter_called == want


# ---------------------------------------------------------------------------------------------- TestZeroRequest
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024


def _zr_pod(name: str, on: str = "", factor: int = 0) -> dict[str, Any]:
    b = make_pod(name)
    if factor:
        b = b.req(cpu=f"{DEFAULT_MILLI_CPU * factor}m", memory=str(DEFAULT_MEMORY * factor))
    if on:
        b = b.node(on)
    return b.obj()


def _zr_node(name: str) -> dict[str, Any]:
    return make_node(name).capacity(cpu="1000m", memory=str(DEFAULT_MEMORY * 10), pods="100").obj()


# upstream v1.33 scores with NodeResourcesFit (LeastAllocated, non-zero defaults for a request-less
# pod) and NodeResourcesBalancedAllocation (real requests), both Score only, weight 1. Both nodes
# hold 400m / 800Mi (non-zero) after the existing pods, cpu and memory always in the same fraction
# (Balanced 100): the request-less and the default-sized pod give 50 + 100, the 3x pod 30 + 100.
ZR_EXISTING = [_zr_pod("large1", "node1", 3), _zr_pod("none1", "node1"), _zr_pod("large2", "node2", 3),
               _zr_pod("small2", "node2", 1)]


@pytest.mark.parametrize(("the_pod", "want"), [
    pytest.param(_zr_pod("p"), 150, id="test priority of zero-request pod with node with zero-request pod"),
    pytest.param(_zr_pod("p", factor=1), 150, id="test priority of nonzero-request pod with node with zero-request pod"),
    pytest.param(_zr_pod("p", factor=3), 130, id="test priority of larger pod with node with zero-request pod"),
])
def test_zero_request(the_pod: dict[str, Any], want: int) -> None:
    s = build({"score": [("NodeResourcesFit", 1), ("NodeResourcesBalancedAllocation", 1)]},
              nodes=[_zr_node("node1"), _zr_node("node2")], pods=ZR_EXISTING)
    fw = fw_of(s)
    pi = PodInfo(the_pod)
    state = CycleState()
    feasible, _ = s._find_nodes_that_fit(fw, state, pi, s.snapshot.node_info_list, None)
    assert fw.run_pre_score(state, pi, feasible).is_success()
    totals, st = fw.run_score(state, pi, feasible)
    assert st.is_success(), st
    assert list(totals) == [want, want]


# ---------------------------------------------------------------------------------------------- TestNumFeasibleNodesToFind
@pytest.mark.parametrize(("global_pct", "profile_pct", "num_all", "want"), [
    pytest.param(None, None, 10, 10, id="not set percentageOfNodesToScore and nodes number not more than 50"),
    pytest.param(None, 40, 10, 10, id="set profile percentageOfNodesToScore and nodes number not more than 50"),
    pytest.param(None, None, 1000, 420, id="not set percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(None, 40, 1000, 400, id="set profile percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(100, 40, 1000, 400,
                 id="set global and profile percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(40, None, 1000, 400, id="set global percentageOfNodesToScore and nodes number more than 50"),
    pytest.param(None, None, 6000, 300,
                 id="not set profile percentageOfNodesToScore and nodes number more than 50*125"),
    pytest.param(None, 40, 6000, 2400, id="set profile percentageOfNodesToScore and nodes number more than 50*125"),
])
def test_num_feasible_nodes_to_find(global_pct: int | None, profile_pct: int | None, num_all: int, want: int) -> None:
    s = build({}, percentage=global_pct, profile_percentage=profile_pct)
    assert num_feasible_nodes_to_find(fw_of(s).percentage_of_nodes_to_score, num_all) == want


# ---------------------------------------------------------------------------------------------- TestFairEvaluationForNodes
def test_fair_evaluation_for_nodes(filter_path: str) -> None:
    num_all = 500
    s = on_path(build({"filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
                      [TrueFilter, EqualPrioritizerPlugin], nodes=bare_nodes(*(str(i) for i in range(num_all))),
                      percentage=30), filter_path)  # 30 %: num_all % nodes_to_find != 0
    fw = fw_of(s)
    nodes_to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, num_all)
    assert nodes_to_find == 150
    for i in range(2 * (num_all // nodes_to_find + 1)):  # round the nodes more than twice
        result = s.schedule_pod(fw, CycleState(), PodInfo(make_pod("").uid("").obj()))
        assert result.feasible_nodes == nodes_to_find
        assert s.next_start_node_index == (i + 1) * nodes_to_find % num_all


# ---------------------------------------------------------------------------------------------- TestSelectHost
def _infos(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).obj()) for n in names]


@pytest.mark.parametrize(("scores", "possible"), [
    pytest.param([("node1", 1), ("node2", 2)], {"node2"}, id="unique properly ordered scores"),
    pytest.param([("node2.1", 2), ("node2.2", 2), ("node2.3", 2)], {"node2.1", "node2.2", "node2.3"},
                 id="equal scores"),
    pytest.param([("node3.1", 3), ("node2.1", 2), ("node1.1", 1), ("node3.2", 3)], {"node3.1", "node3.2"},
                 id="out of order scores"),
])
def test_select_host(scores: list[tuple[str, int]], possible: set[str]) -> None:
    s = build({})
    nodes = _infos(*(n for n, _ in scores))
    totals = [t for _, t in scores]
    seen = set()
    for _ in range(50):
        got = s.select_host(nodes, totals)
        assert got in possible
        assert s.select_host_array(nodes, np.asarray(totals, dtype=np.int64)) in possible
        seen.add(got)
    assert seen == possible  # every node tied at the top can be picked


def test_select_host_empty_priority_list() -> None:
    """Upstream returns errEmptyPriorityList; schedule_pod never asks with no feasible node."""
    s = build({})
    with pytest.raises(ValueError):
        s.select_host([], [])


# ---------------------------------------------------------------------------------------------- TestFitError_Error
def _same(names: Iterable[str], reason: str) -> dict[str, Status]:
    return {n: Status(UNSCHED, [reason]) for n in names}


PF = "Node(s) failed PreFilter plugin FalsePreFilter"
F1 = "Node(s) failed Filter plugin FalseFilter-1"
F2 = "Node(s) failed Filter plugin FalseFilter-2"
POST = "Error running PostFilter plugin FailedPostFilter"


@pytest.mark.parametrize(("num", "diag", "want"), [
    pytest.param(3, Diagnosis(pre_filter_msg=PF, node_to_status=_same(N123, PF)),
                 f"0/3 nodes are available: {PF}.", id="nodes failed Prefilter plugin"),
    pytest.param(3, Diagnosis(pre_filter_msg=PF, node_to_status=_same(N123, PF), post_filter_msg=POST),
                 f"0/3 nodes are available: {PF}. {POST}",
                 id="nodes failed Prefilter plugin and the preemption also failed"),
    pytest.param(3, Diagnosis(node_to_status=_same(N123, F1)), f"0/3 nodes are available: 3 {F1}.",
                 id="nodes failed one Filter plugin with an empty PostFilterMsg"),
    pytest.param(3, Diagnosis(node_to_status=_same(N123, F1), post_filter_msg=POST),
                 f"0/3 nodes are available: 3 {F1}. {POST}",
                 id="nodes failed one Filter plugin with a non-empty PostFilterMsg"),
    pytest.param(3, Diagnosis(node_to_status={**_same(N12, F1), **_same(["node3"], F2)}),
                 f"0/3 nodes are available: 1 {F2}, 2 {F1}.",
                 id="nodes failed two Filter plugins with an empty PostFilterMsg"),
    pytest.param(3, Diagnosis(node_to_status={**_same(N12, F1), **_same(["node3"], F2)}, post_filter_msg=POST),
                 f"0/3 nodes are available: 1 {F2}, 2 {F1}. {POST}",
                 id="nodes failed two Filter plugins with a non-empty PostFilterMsg"),
    pytest.param(1, Diagnosis(node_to_status=_same(["node1"], "Node failed Permit plugin Permit-1")),
                 "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.", id="failed to Permit on node"),
    pytest.param(1, Diagnosis(node_to_status=_same(["node1"], "Node failed Reserve plugin Reserve-1")),
                 "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.", id="failed to Reserve on node"),
])
def test_fit_error_error(num: int, diag: Diagnosis, want: str) -> None:
    assert str(FitError(PodInfo(make_pod("p").obj()), num, diag)) == want


# ---------------------------------------------------------------------------------------------- beyond the tables
def test_next_start_node_index_advances_over_all_nodes_after_a_prefilter_result() -> None:
    """Not an upstream table case; upstream findNodesThatFitPod's rule: after Filter,
    nextStartNodeIndex = (nextStartNodeIndex + processed nodes) % len(allNodes) — all the
    snapshot's nodes, also when a PreFilterResult narrowed the nodes Filter visited."""
    s = build({"preFilter": ["FakePreFilter"], "filter": ["TrueFilter"], "score": [("EqualPrioritizerPlugin", 1)]},
              [fake_prefilter("FakePreFilter", {"n1", "n3", "n5"}), TrueFilter, EqualPrioritizerPlugin],
              nodes=bare_nodes(*(f"n{i}" for i in range(10))))
    result = s.schedule_pod(fw_of(s), CycleState(), PodInfo(pod("p")))
    assert result.feasible_nodes == 3
    assert s.next_start_node_index == 3
    s.schedule_pod(fw_of(s), CycleState(), PodInfo(pod("q")))
    assert s.next_start_node_index == 6


def test_prefilter_unschedulable_does_not_stop_later_prefilters() -> None:
    """Not an upstream table case: upstream's RunPreFilterPlugins contract (issue 119770)."""
    ran: list[str] = []

    class Recording(PreFilterPlugin):
        NAME = "Recording"

        def pre_filter(self, state: CycleState, pod: PodInfo,
                       nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
            ran.append(pod.name)
            return None, Status.success()

    s = build({"preFilter": ["FakePreFilter", "Recording"]},
              [fake_prefilter("FakePreFilter", status=Status.unschedulable("injected")), Recording],
              nodes=bare_nodes("n1"))
    with pytest.raises(FitError) as e:
        s.schedule_pod(fw_of(s), CycleState(), PodInfo(pod("p")))
    assert str(e.value) == "0/1 nodes are available: injected."
    assert ran == ["p"]
