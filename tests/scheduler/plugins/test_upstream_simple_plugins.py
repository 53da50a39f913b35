"""Upstream v1.33 test tables of the simple plugins, ported case by case (names kept as ids):

nodeaffinity/node_affinity_test.go (TestNodeAffinity, TestNodeAffinityPriority,
Test_isSchedulableAfterNodeChange), tainttoleration/taint_toleration_test.go,
nodeports/node_ports_test.go, nodename/node_name_test.go,
nodeunschedulable/node_unschedulable_test.go, imagelocality/image_locality_test.go,
schedulinggates/scheduling_gates_test.go.

The plugin instances come from a real `Scheduler` (the `fw` fixture of conftest.py): built from the
registry through the profile configuration, with their args, over a real cache and snapshot. Where
upstream calls one extension point by hand (PreFilter then Filter on one NodeInfo, Score without
PreScore, a queueing hint), the test calls that method on the framework's own plugin instance with
a node from the framework's snapshot; elsewhere the runtime drives the plugin (`fw.filter_nodes`,
`fw.score_nodes`, which also check the batched and vector paths agree).

Not ported (Go plumbing without an observable meaning here): the hint cases feeding an object of
the wrong Go type ("backoff-wrong-new-object", "backoff-wrong-old-object", "error-wrong-*"), and
tainttoleration's pre-v1.32 "skip-updates-not-toleration" hint case (v1.33's hint only compares
UIDs, upstream dropped that case with the length check).
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code, EventResource, NodeScore, QueueingHint, Status
from scheduler.framework.types import PodInfo
from scheduler.plugins.image_locality import ImageLocality, normalized_image_name
from scheduler.plugins.node_affinity import NodeAffinity
from scheduler.plugins.node_name import NodeName
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.plugins.scheduling_gates import SchedulingGates
from scheduler.plugins.taint_toleration import TaintToleration

OK = (Code.SUCCESS, [])
SKIP = (Code.SKIP, [])
UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
Q, S = QueueingHint.QUEUE, QueueingHint.SKIP


def _st(s: Status | None) -> tuple[Code, list[str]]:
    """A Status as upstream's cmp.Diff sees it (Status.Equal: code and reasons; nil == Success)."""
    return OK if s is None else (s.code, list(s.reasons))


def _pod(spec: dict[str, Any] | None = None, *, name: str = "p", uid: str | None = None,
         meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A bare pod (upstream `&v1.Pod{Spec: ...}`): the builder's pod with `spec` merged in;
    `uid=""` drops the builder's uid (an upstream pod without one)."""
    p = make_pod(name).obj()
    p["spec"].update(copy.deepcopy(spec or {}))
    if uid is not None:
        if uid:
            p["metadata"]["uid"] = uid
        else:
            p["metadata"].pop("uid", None)
    p["metadata"].update(meta or {})
    return p


def _hint(plugin: Any, resource: EventResource, pod: Any, old: Any, new: Any) -> QueueingHint:
    """The queueing hint the plugin registered for `resource`, called as the queue calls it."""
    for ev in plugin.events_to_register():
        if ev.event.resource == resource:
            return QueueingHint.QUEUE if ev.hint_fn is None else ev.hint_fn(pod, old, new)
    raise AssertionError(f"{plugin.name()} registers no {resource} event")


# ====================================================================================== NodeAffinity

ERR_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_CONFLICT = "pod affinity terms conflict"
NAME = "metadata.name"


def _r(key: str, op: str, *values: str) -> dict[str, Any]:
    d: dict[str, Any] = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def _required(*terms: dict[str, Any], node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return _pod(spec)


def _added_required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


# name, pod, labels, nodeName, wantStatus, wantPreFilterStatus, wantPreFilterResult, args, runPreFilter
NODE_AFFINITY_CASES = [
    ("missing labels", _pod({"nodeSelector": {"foo": "bar"}}), None, "", (UNRES, [ERR_POD]), OK, None, None, True),
    ("same labels", _pod({"nodeSelector": {"foo": "bar"}}), {"foo": "bar"}, "", OK, OK, None, None, True),
    ("node labels are superset", _pod({"nodeSelector": {"foo": "bar"}}), {"foo": "bar", "baz": "blah"}, "",
     OK, OK, None, None, True),
    ("node labels are subset", _pod({"nodeSelector": {"foo": "bar", "baz": "blah"}}), {"foo": "bar"}, "",
     (UNRES, [ERR_POD]), OK, None, None, True),
    ("Pod with matchExpressions using In operator that matches the existing node",
     _required({"matchExpressions": [_r("foo", "In", "bar", "value2")]}), {"foo": "bar"}, "",
     OK, OK, None, None, True),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     _required({"matchExpressions": [_r("kernel-version", "Gt", "0204")]}), {"kernel-version": "0206"}, "",
     OK, OK, None, None, True),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     _required({"matchExpressions": [_r("mem-type", "NotIn", "DDR", "DDR2")]}), {"mem-type": "DDR3"}, "",
     OK, OK, None, None, True),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     _required({"matchExpressions": [_r("GPU", "Exists")]}), {"GPU": "NVIDIA-GRID-K1"}, "",
     OK, OK, None, None, True),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     _required({"matchExpressions": [_r("foo", "In", "value1", "value2")]}), {"foo": "bar"}, "",
     (UNRES, [ERR_POD]), OK, None, None, True),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     _required({"matchExpressions": []}), {"foo": "bar"}, "", (UNRES, [ERR_POD]), OK, None, None, True),
    ("Pod with no Affinity will schedule onto a node", _pod(), {"foo": "bar"}, "", OK, SKIP, None, None, True),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node",
     _pod({"affinity": {"nodeAffinity": {}}}), {"foo": "bar"}, "", OK, SKIP, None, None, True),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     _required({"matchExpressions": [_r("GPU", "Exists"), _r("GPU", "NotIn", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", OK, OK, None, None, True),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     _required({"matchExpressions": [_r("GPU", "Exists"), _r("GPU", "In", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", (UNRES, [ERR_POD]), OK, None, None, True),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
     _required({"matchExpressions": [_r("foo", "In", "bar", "value2")]},
               {"matchExpressions": [_r("diffkey", "In", "wrong", "value2")]}),
     {"foo": "bar"}, "", OK, OK, None, None, True),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) "
     "both are satisfied, will schedule onto the node",
     _required({"matchExpressions": [_r("foo", "Exists")]}, node_selector={"foo": "bar"}),
     {"foo": "bar"}, "", OK, OK, None, None, True),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) "
     "is not satisfied, won't schedule onto the node",
     _required({"matchExpressions": [_r("foo", "Exists")]}, node_selector={"foo": "bar"}),
     {"foo": "barrrrrr"}, "", (UNRES, [ERR_POD]), OK, None, None, True),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     _required({"matchExpressions": [_r("foo", "NotIn", "invalid value: ___@#$%^")]}), {"foo": "bar"}, "",
     (UNRES, [ERR_POD]), OK, None, None, True),
    ("Pod with matchFields using In operator that matches the existing node",
     _required({"matchFields": [_r(NAME, "In", "node1")]}), None, "node1", OK, OK, {"node1"}, None, True),
    ("Pod with matchFields using In operator that does not match the existing node",
     _required({"matchFields": [_r(NAME, "In", "node1")]}), None, "node2",
     (UNRES, [ERR_POD]), OK, {"node1"}, None, True),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     _required({"matchFields": [_r(NAME, "In", "node1"), _r(NAME, "In", "node2")]},
               {"matchExpressions": [_r("foo", "In", "bar")]}),
     {"foo": "bar"}, "node2", OK, OK, None, None, True),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     _required({"matchFields": [_r(NAME, "In", "node1")], "matchExpressions": [_r("foo", "In", "bar")]}),
     {"foo": "bar"}, "node2", (UNRES, [ERR_POD]), OK, {"node1"}, None, True),
    ("Pod with one term: both matchFields and matchExpressions match",
     _required({"matchFields": [_r(NAME, "In", "node1")], "matchExpressions": [_r("foo", "In", "bar")]}),
     {"foo": "bar"}, "node1", OK, OK, {"node1"}, None, True),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     _required({"matchFields": [_r(NAME, "In", "node1")]},
               {"matchExpressions": [_r("foo", "In", "not-match-to-bar")]}),
     {"foo": "bar"}, "node2", (UNRES, [ERR_POD]), OK, None, None, True),
    ("Pod with two terms of node.Name affinity",
     _required({"matchFields": [_r(NAME, "In", "node1")]}, {"matchFields": [_r(NAME, "In", "node2")]}),
     None, "node2", OK, OK, {"node1", "node2"}, None, True),
    ("Pod with two conflicting mach field requirements",
     _required({"matchFields": [_r(NAME, "In", "node1"), _r(NAME, "In", "node2")]}),
     {"foo": "bar"}, "node2", (UNRES, [ERR_POD]), (UNRES, [ERR_CONFLICT]), None, None, True),
    ("Matches added affinity and Pod's node affinity",
     _required({"matchExpressions": [_r("zone", "In", "foo")]}), {"zone": "foo"}, "node2", OK, OK, None,
     _added_required({"matchFields": [_r(NAME, "In", "node2")]}), True),
    ("Matches added affinity but not Pod's node affinity",
     _required({"matchExpressions": [_r("zone", "In", "bar")]}), {"zone": "foo"}, "node2",
     (UNRES, [ERR_POD]), OK, None, _added_required({"matchFields": [_r(NAME, "In", "node2")]}), True),
    ("Doesn't match added affinity", _pod(), {"zone": "foo"}, "node2", (UNRES, [ERR_ENFORCED]), OK, None,
     _added_required({"matchExpressions": [_r("zone", "In", "bar")]}), True),
    ("Matches node selector correctly even if PreFilter is not called",
     _pod({"nodeSelector": {"foo": "bar"}}), {"foo": "bar", "baz": "blah"}, "", OK, None, None, None, False),
    ("Matches node affinity correctly even if PreFilter is not called",
     _required({"matchExpressions": [_r("GPU", "Exists"), _r("GPU", "NotIn", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", OK, None, None, None, False),
]


@pytest.mark.parametrize(
    ("pod", "labels", "node_name", "want_status", "want_pf_status", "want_pf_result", "args", "run_pre_filter"),
    [pytest.param(*c[1:], id=c[0]) for c in NODE_AFFINITY_CASES],
)
def test_node_affinity(fw, pod, labels, node_name, want_status, want_pf_status, want_pf_result, args,
                       run_pre_filter):
    node = make_node(node_name or "test-node").labels(labels or {}).obj()
    run = fw.Run((NodeAffinity, args), fw.Snapshot([node]))
    pl = run.plugin("NodeAffinity")
    (ni,) = run.scheduler.snapshot.node_info_list
    pi = PodInfo(pod)
    state = CycleState()
    if run_pre_filter:
        result, st = pl.pre_filter(state, pi, [ni])
        assert _st(st) == want_pf_status
        assert (result.node_names if result is not None else None) == want_pf_result
    assert _st(pl.filter(state, pi, ni)) == want_status


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def _pref(weight: int, *exprs: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "preference": {"matchExpressions": list(exprs)}}


AFFINITY1 = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [_pref(2, _r("foo", "In", "bar"))]}}
AFFINITY2 = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    _pref(2, _r("foo", "In", "bar")),
    _pref(4, _r("key", "In", "value")),
    _pref(5, _r("foo", "In", "bar"), _r("key", "In", "value"), _r("az", "In", "az1")),
]}}
BROKEN = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [_pref(2, _r("invalid key", "In", "bar"))]}}
BROKEN_MSG = (
    '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric '
    "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
    "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

# name, pod, nodes, expected, args, runPreScore, wantPreScoreStatus
PRIORITY_CASES = [
    ("all nodes are same priority as NodeAffinity is nil", _pod(meta={"annotations": {}}),
     {"node1": LABEL1, "node2": LABEL2, "node3": LABEL3}, {"node1": 0, "node2": 0, "node3": 0}, None, False, OK),
    ("Skip is returned in PreScore when NodeAffinity is nil", _pod(meta={"annotations": {}}),
     {"node1": LABEL1}, None, None, True, SKIP),
    ("PreScore returns error when an incoming Pod has a broken affinity", _pod({"affinity": BROKEN}),
     {"node1": LABEL1}, None, None, True, (Code.ERROR, [BROKEN_MSG])),
    ("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
     _pod({"affinity": AFFINITY1}), {"node1": LABEL4, "node2": LABEL2, "node3": LABEL3},
     {"node1": 0, "node2": 0, "node3": 0}, None, True, OK),
    ("only node1 matches the preferred scheduling requirements of pod", _pod({"affinity": AFFINITY1}),
     {"node1": LABEL1, "node2": LABEL2, "node3": LABEL3}, {"node1": 100, "node2": 0, "node3": 0}, None, True, OK),
    ("all nodes matches the preferred scheduling requirements of pod but with different priorities ",
     _pod({"affinity": AFFINITY2}), {"node1": LABEL1, "node5": LABEL5, "node2": LABEL2},
     {"node1": 18, "node5": 100, "node2": 36}, None, True, OK),
    ("added affinity", _pod(), {"node1": LABEL1, "node2": LABEL2}, {"node1": 100, "node2": 0},
     {"addedAffinity": AFFINITY1["nodeAffinity"]}, True, OK),
    ("added affinity and pod has default affinity", _pod({"affinity": AFFINITY1}),
     {"node1": LABEL1, "node2": LABEL2, "node3": LABEL5}, {"node1": 40, "node2": 60, "node3": 100},
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [_pref(3, _r("key", "In", "value"))]}},
     True, OK),
    # upstream's case runs PreScore despite its name; the "-no-prescore" variant below does what it says
    ("calculate the priorities correctly even if PreScore is not called", _pod({"affinity": AFFINITY2}),
     {"node1": LABEL1, "node5": LABEL5, "node2": LABEL2}, {"node1": 18, "node5": 100, "node2": 36}, None, True, OK),
    ("calculate the priorities correctly even if PreScore is not called-no-prescore", _pod({"affinity": AFFINITY2}),
     {"node1": LABEL1, "node5": LABEL5, "node2": LABEL2}, {"node1": 18, "node5": 100, "node2": 36}, None, False, OK),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "expected", "args", "run_pre_score", "want_pre_score"),
    [pytest.param(*c[1:], id=c[0]) for c in PRIORITY_CASES],
)
def test_node_affinity_priority(fw, pod, nodes, expected, args, run_pre_score, want_pre_score):
    run = fw.Run((NodeAffinity, args), fw.Snapshot([make_node(n).labels(lb).obj() for n, lb in nodes.items()]))
    pl = run.plugin("NodeAffinity")
    by_name = {ni.name: ni for ni in run.scheduler.snapshot.node_info_list}
    infos = [by_name[n] for n in nodes]
    pi = PodInfo(pod)
    state = CycleState()
    if run_pre_score:
        st = pl.pre_score(state, pi, infos)
        assert _st(st) == want_pre_score
        if not st.is_success():
            return
    got = []
    for ni in infos:
        score, st = pl.score(state, pi, ni)
        assert st.is_success(), st
        got.append(NodeScore(ni.name, score))
    assert pl.normalize_score(state, pi, got).is_success()
    assert {s.name: s.score for s in got} == expected
    if run_pre_score:  # the same through the runtime (batch Score and raw normalize included)
        assert run.score(pod) == expected


_POD_WITH_NODE_AFFINITY = make_pod("p").node_affinity_in("foo", ["bar"]).obj()
_ENFORCED_FOO_BAR = _added_required({"matchExpressions": [_r("foo", "In", "bar")]})


def _node(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    n = make_node("").labels(labels or {}).obj()
    n["spec"].update(spec)
    return n


@pytest.mark.parametrize(
    ("args", "old", "new", "want"),
    [
        pytest.param(None, None, _node(), S, id="skip-queue-on-add"),
        pytest.param(None, None, _node({"foo": "bar"}), Q, id="queue-on-add"),
        pytest.param(None, _node(), {**_node(), "status": {"capacity": {}}}, S, id="skip-unrelated-changes"),
        pytest.param(None, _node(), _node({"k": "v"}), S, id="skip-unrelated-changes-on-labels"),
        pytest.param(None, _node({"foo": "bar"}), _node({"foo": "bar", "k": "v"}), S,
                     id="skip-labels-changes-on-suitable-node"),
        pytest.param(None, _node({"foo": "bar"}), _node({"k": "v"}), S,
                     id="skip-labels-changes-on-node-from-suitable-to-unsuitable"),
        pytest.param(None, _node(), _node({"foo": "bar"}), Q, id="queue-on-labels-change-makes-pod-schedulable"),
        pytest.param(_ENFORCED_FOO_BAR, None, _node(), S, id="skip-queue-on-add-scheduler-enforced-node-affinity"),
        pytest.param(_ENFORCED_FOO_BAR, None, _node({"foo": "bar"}), Q,
                     id="queue-on-add-scheduler-enforced-node-affinity"),
    ],
)
def test_node_affinity_is_schedulable_after_node_change(fw, args, old, new, want):
    pl = fw.Run((NodeAffinity, args), fw.Snapshot([])).plugin("NodeAffinity")
    assert _hint(pl, EventResource.NODE, _POD_WITH_NODE_AFFINITY, old, new) == want


# =================================================================================== TaintToleration


def _tols(*tols: dict[str, Any]) -> dict[str, Any]:
    return _pod({"tolerations": list(tols)}, name="pod1")


def _t(key: str, value: str, effect: str) -> dict[str, Any]:
    return {"key": key, "value": value, "effect": effect}


def _tol(key: str, value: str = "", effect: str = "", op: str = "") -> dict[str, Any]:
    d: dict[str, Any] = {"key": key}
    if op:
        d["operator"] = op
    if value:
        d["value"] = value
    if effect:
        d["effect"] = effect
    return d


PNS, NS = "PreferNoSchedule", "NoSchedule"


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        pytest.param(_tols(_tol("foo", "bar", PNS, "Equal")),
                     {"nodeA": [_t("foo", "bar", PNS)], "nodeB": [_t("foo", "blah", PNS)]},
                     {"nodeA": 100, "nodeB": 0},
                     id="node with taints tolerated by the pod, gets a higher score than those node with "
                        "intolerable taints"),
        pytest.param(_tols(_tol("cpu-type", "arm64", PNS, "Equal"), _tol("disk-type", "ssd", PNS, "Equal")),
                     {"nodeA": [], "nodeB": [_t("cpu-type", "arm64", PNS)],
                      "nodeC": [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]},
                     {"nodeA": 100, "nodeB": 100, "nodeC": 100},
                     id="the nodes that all of their taints are tolerated by the pod, get the same score, no matter "
                        "how many tolerable taints a node has"),
        pytest.param(_tols(_tol("foo", "bar", PNS, "Equal")),
                     {"nodeA": [], "nodeB": [_t("cpu-type", "arm64", PNS)],
                      "nodeC": [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]},
                     {"nodeA": 100, "nodeB": 50, "nodeC": 0},
                     id="the more intolerable taints a node has, the lower score it gets."),
        pytest.param(_tols(_tol("cpu-type", "arm64", NS, "Equal"), _tol("disk-type", "ssd", NS, "Equal")),
                     {"nodeA": [], "nodeB": [_t("cpu-type", "arm64", NS)],
                      "nodeC": [_t("cpu-type", "arm64", PNS), _t("disk-type", "ssd", PNS)]},
                     {"nodeA": 100, "nodeB": 100, "nodeC": 0},
                     id="only taints and tolerations that have effect PreferNoSchedule are checked by "
                        "taints-tolerations priority function"),
        pytest.param(_tols(), {"nodeA": [], "nodeB": [_t("cpu-type", "arm64", PNS)]}, {"nodeA": 100, "nodeB": 0},
                     id="Default behaviour No taints and tolerations, lands on node with no taints"),
    ],
)
def test_taint_toleration_score(fw, pod, nodes, want):
    snap = fw.Snapshot([make_node(n).taints(*t).obj() for n, t in nodes.items()])
    assert fw.score_nodes(TaintToleration, pod, snap) == want


def _untolerated(key: str, value: str) -> tuple[Code, list[str]]:
    return (UNRES, [f"node(s) had untolerated taint {{{key}: {value}}}"])


@pytest.mark.parametrize(
    ("pod", "taints", "want"),
    [
        pytest.param(_tols(), [_t("dedicated", "user1", NS)], _untolerated("dedicated", "user1"),
                     id="A pod having no tolerations can't be scheduled onto a node with nonempty taints"),
        pytest.param(_tols(_tol("dedicated", "user1", NS)), [_t("dedicated", "user1", NS)], OK,
                     id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule"),
        pytest.param(_tols(_tol("dedicated", "user2", NS, "Equal")), [_t("dedicated", "user1", NS)],
                     _untolerated("dedicated", "user1"),
                     id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
                        "NoSchedule"),
        pytest.param(_tols(_tol("foo", effect=NS, op="Exists")), [_t("foo", "bar", NS)], OK,
                     id="A pod can be scheduled onto the node, with a toleration uses operator Exists that "
                        "tolerates the taints on the node"),
        pytest.param(_tols(_tol("dedicated", "user2", NS, "Equal"), _tol("foo", effect=NS, op="Exists")),
                     [_t("dedicated", "user2", NS), _t("foo", "bar", NS)], OK,
                     id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, "
                        "pod can be scheduled onto the node"),
        pytest.param(_tols(_tol("foo", "bar", PNS, "Equal")), [_t("foo", "bar", NS)], _untolerated("foo", "bar"),
                     id="A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
                        "effect doesn't match, can't be scheduled onto the node"),
        pytest.param(_tols(_tol("foo", "bar", op="Equal")), [_t("foo", "bar", NS)], OK,
                     id="The pod has a toleration that keys and values match the taint on the node, the effect of "
                        "toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto "
                        "the node"),
        pytest.param(_tols(_tol("dedicated", "user2", NS, "Equal")), [_t("dedicated", "user1", PNS)], OK,
                     id="The pod has a toleration that key and value don't match the taint on the node, but the "
                        "effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node"),
        pytest.param(_tols(), [_t("dedicated", "user1", PNS)], OK,
                     id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can "
                        "be scheduled onto the node"),
    ],
)
def test_taint_toleration_filter(fw, pod, taints, want):
    node = make_node("nodeA").obj()
    node["spec"]["taints"] = taints
    statuses, *_ = fw.filter_nodes(TaintToleration, pod, fw.Snapshot([node]))
    assert _st(statuses["nodeA"]) == want


def _tainted(*taints: dict[str, Any]) -> dict[str, Any]:
    n = make_node("nodeA").obj()
    n["spec"]["taints"] = list(taints)
    return n


_POD_TOL_USER2 = _tols(_tol("dedicated", "user2", NS, "Equal"))


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, _tainted(_t("dedicated", "user1", NS)), S, id="skip-queue-on-untoleratedtaint-node-added"),
        pytest.param(None, _tainted(_t("dedicated", "user2", NS)), Q, id="queue-on-toleratedtaint-node-added"),
        pytest.param(_tainted(_t("dedicated", "user1", NS)),
                     _tainted(_t("dedicated", "user1", NS), _t("dedicated", "user3", NS)), S,
                     id="skip-unrelated-change"),
        pytest.param(_tainted(_t("dedicated", "user1", NS)), _tainted(_t("dedicated", "user2", NS)), Q,
                     id="queue-on-taint-change"),
    ],
)
def test_taint_toleration_is_schedulable_after_node_change(fw, old, new, want):
    pl = fw.Run(TaintToleration, fw.Snapshot([])).plugin("TaintToleration")
    assert _hint(pl, EventResource.NODE, _POD_TOL_USER2, old, new) == want


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(_pod(name="pod-1", uid="uid0", meta={"namespace": "ns-1"}),
                     _pod(name="pod-2", uid="uid1", meta={"namespace": "ns-1"}),
                     _pod({"tolerations": [{"key": "foo", "effect": NS}]}, name="pod-2", uid="uid1",
                          meta={"namespace": "ns-1"}),
                     S, id="skip-updates-other-pod"),
        pytest.param(_pod(name="pod-1", uid="", meta={"namespace": "ns-1"}),
                     _pod(name="pod-1", uid="", meta={"namespace": "ns-1"}),
                     _pod({"tolerations": [{"key": "foo", "effect": NS}]}, name="pod-1", uid="",
                          meta={"namespace": "ns-1"}),
                     Q, id="queue-on-toleration-added"),
    ],
)
def test_taint_toleration_is_schedulable_after_pod_change(fw, pod, old, new, want):
    pl = fw.Run(TaintToleration, fw.Snapshot([])).plugin("TaintToleration")
    assert _hint(pl, EventResource.POD, pod, old, new) == want


# ========================================================================================= NodePorts

PORTS_ERR = "node(s) didn't have free ports for the requested pod ports"
UNSCHED_PORTS = (Code.UNSCHEDULABLE, [PORTS_ERR])


def _ports_pod(host: str, *infos: str, name: str = "p") -> dict[str, Any]:
    """Upstream newPod: one container whose ports are "PROTO/hostIP/hostPort" (containerPort 0)."""
    ports = []
    for info in infos:
        proto, ip, port = info.split("/")
        ports.append({"hostIP": ip, "hostPort": int(port), "protocol": proto})
    p = _pod({"containers": [{"name": "c0", "image": "pause", "ports": ports}]}, name=name)
    if host:
        p["spec"]["nodeName"] = host
    return p


def _init_port_pod(sidecar: bool) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "i0", "image": "pause",
                         "ports": [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]}
    if sidecar:
        c["restartPolicy"] = "Always"
    return _pod({"initContainers": [c]})


@pytest.mark.parametrize(
    ("pod", "existing", "want_pre_filter", "want_filter"),
    [
        pytest.param(_pod(), None, SKIP, OK, id="skip filter"),
        pytest.param(_ports_pod("m1", "UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/9090",), OK, OK, id="other port"),
        pytest.param(_ports_pod("m1", "UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/8080",), OK, UNSCHED_PORTS,
                     id="same udp port"),
        pytest.param(_ports_pod("m1", "TCP/127.0.0.1/8080"), ("TCP/127.0.0.1/8080",), OK, UNSCHED_PORTS,
                     id="same tcp port"),
        pytest.param(_ports_pod("m1", "TCP/127.0.0.1/8080"), ("TCP/127.0.0.2/8080",), OK, OK,
                     id="different host ip"),
        pytest.param(_ports_pod("m1", "UDP/127.0.0.1/8080"), ("TCP/127.0.0.1/8080",), OK, OK,
                     id="different protocol"),
        pytest.param(_ports_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/8080",), OK,
                     UNSCHED_PORTS, id="second udp port conflict"),
        pytest.param(_ports_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
                     ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"), OK, UNSCHED_PORTS, id="first tcp port conflict"),
        pytest.param(_ports_pod("m1", "TCP/0.0.0.0/8001"), ("TCP/127.0.0.1/8001",), OK, UNSCHED_PORTS,
                     id="first tcp port conflict due to 0.0.0.0 hostIP"),
        pytest.param(_ports_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"), ("TCP/127.0.0.1/8001",), OK,
                     UNSCHED_PORTS, id="TCP hostPort conflict due to 0.0.0.0 hostIP"),
        pytest.param(_ports_pod("m1", "TCP/127.0.0.1/8001"), ("TCP/0.0.0.0/8001",), OK, UNSCHED_PORTS,
                     id="second tcp port conflict to 0.0.0.0 hostIP"),
        pytest.param(_ports_pod("m1", "UDP/127.0.0.1/8001"), ("TCP/0.0.0.0/8001",), OK, OK,
                     id="second different protocol"),
        pytest.param(_ports_pod("m1", "UDP/127.0.0.1/8001"), ("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"), OK,
                     UNSCHED_PORTS, id="UDP hostPort conflict due to 0.0.0.0 hostIP"),
        pytest.param(_init_port_pod(False), ("TCP/0.0.0.0/8001",), SKIP, OK,
                     id="non-sidecar initContainer using hostPort"),
        pytest.param(_init_port_pod(True), ("TCP/0.0.0.0/8001",), OK, UNSCHED_PORTS,
                     id="TCP hostPort conflict from sidecar initContainer"),
    ],
)
def test_node_ports(fw, pod, existing, want_pre_filter, want_filter):
    pods = [_ports_pod("m1", *existing, name="e")] if existing else []
    run = fw.Run(NodePorts, fw.Snapshot([make_node("m1").obj()], pods))
    pl = run.plugin("NodePorts")
    (ni,) = run.scheduler.snapshot.node_info_list
    pi = PodInfo(pod)
    state = CycleState()
    _, st = pl.pre_filter(state, pi, [ni])
    assert _st(st) == want_pre_filter
    if st.is_skip():
        _, _, _, rstate = run.filter(pod)
        assert "NodePorts" in rstate.skip_filter_plugins
        return
    assert _st(pl.filter(state, pi, ni)) == want_filter
    statuses, *_ = run.filter(pod)  # the runtime (and the batched path) agree
    assert _st(statuses["m1"]) == want_filter


def test_node_ports_pre_filter_disabled(fw):
    """TestPreFilterDisabled: Filter without PreFilter's state is an error (ErrNotFound)."""
    run = fw.Run(NodePorts, fw.Snapshot([make_node("n").obj()]))
    (ni,) = run.scheduler.snapshot.node_info_list
    st = run.plugin("NodePorts").filter(CycleState(), PodInfo(_pod()), ni)
    assert st.code == Code.ERROR
    assert st.reasons == ['reading "PreFilterNodePorts" from cycleState: not found']


@pytest.mark.parametrize(
    ("pod", "existing", "fits"),
    [
        pytest.param(_ports_pod("p", "TCP/127.0.0.1/80"), ("TCP/127.0.0.1/9090",), True, id="non-conflicting ports"),
        pytest.param(_ports_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
                     ("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"), True,
                     id="multiple non-conflicting ports"),
        pytest.param(_ports_pod("m1", "TCP/127.0.0.1/80"), ("UDP/127.0.0.1/80",), True,
                     id="same ports on different protocols"),
        pytest.param(_ports_pod("m1", "TCP/127.0.0.1/80"), ("TCP/127.0.0.1/80",), False, id="conflicting ports"),
        pytest.param(_ports_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
                     ("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"), False,
                     id="multiple ports, some conflicting"),
    ],
)
def test_node_ports_fits(fw, pod, existing, fits):
    """TestFits (upstream's Fits helper), through Filter on a node holding `existing`."""
    pod = copy.deepcopy(pod)
    pod["spec"].pop("nodeName", None)
    statuses, *_ = fw.filter_nodes(NodePorts, pod, fw.Snapshot([make_node("n").obj()],
                                                               [_ports_pod("n", *existing, name="e")]))
    assert _st(statuses["n"]) == (OK if fits else UNSCHED_PORTS)


_POD_WITH_HOST_PORT = make_pod("p").host_port(8080).obj()


@pytest.mark.parametrize(
    ("old", "want"),
    [
        pytest.param(make_pod("o").obj(), S, id="skip-queue-on-unscheduled"),
        pytest.param(make_pod("o").node("fake-node").obj(), S, id="skip-queue-on-non-hostport"),
        pytest.param(make_pod("o").node("fake-node").host_port(8081).obj(), S, id="skip-queue-on-unrelated-hostport"),
        pytest.param(make_pod("o").node("fake-node").host_port(8080).obj(), Q, id="queue-on-released-hostport"),
        # beyond upstream's table, the same function's other branches (Fits on the released ports)
        pytest.param(make_pod("o").host_port(8080).obj(), S, id="extra-skip-unscheduled-pod-with-same-port"),
        pytest.param(make_pod("o").node("fake-node").host_port(8080, host_ip="127.0.0.2").obj(), Q,
                     id="extra-queue-released-specific-ip-vs-wildcard"),
    ],
)
def test_node_ports_is_schedulable_after_assigned_pod_deleted(fw, old, want):
    pl = fw.Run(NodePorts, fw.Snapshot([])).plugin("NodePorts")
    assert _hint(pl, EventResource.ASSIGNED_POD, _POD_WITH_HOST_PORT, old, None) == want


def test_node_ports_hint_released_port_on_other_ip(fw):
    """Upstream Fits semantics: 127.0.0.1:8080 released does not help a pod wanting 127.0.0.2:8080."""
    pl = fw.Run(NodePorts, fw.Snapshot([])).plugin("NodePorts")
    pod = make_pod("p").host_port(8080, host_ip="127.0.0.2").obj()
    old = make_pod("o").node("n").host_port(8080, host_ip="127.0.0.1").obj()
    assert _hint(pl, EventResource.ASSIGNED_POD, pod, old, None) == S


# ========================================================================================== NodeName

@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(_pod(), "node", OK, id="no host specified"),
        pytest.param(_pod({"nodeName": "foo"}), "foo", OK, id="host matches"),
        pytest.param(_pod({"nodeName": "bar"}), "foo", (UNRES, ["node(s) didn't match the requested node name"]),
                     id="host doesn't match"),
    ],
)
def test_node_name(fw, pod, node, want):
    statuses, *_ = fw.filter_nodes(NodeName, pod, fw.Snapshot([make_node(node).obj()]))
    assert _st(statuses[node]) == want


# ================================================================================= NodeUnschedulable

@pytest.mark.parametrize(
    ("pod", "unschedulable", "want"),
    [
        pytest.param(_pod(), True, (UNRES, ["node(s) were unschedulable"]),
                     id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)"),
        pytest.param(_pod(), False, OK, id="Schedule pod to normal node"),
        pytest.param(_pod({"tolerations": [{"key": "node.kubernetes.io/unschedulable", "effect": NS}]}), True, OK,
                     id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)"),
    ],
)
def test_node_unschedulable(fw, pod, unschedulable, want):
    statuses, *_ = fw.filter_nodes(NodeUnschedulable, pod,
                                   fw.Snapshot([make_node("n").unschedulable(unschedulable).obj()]))
    assert _st(statuses["n"]) == want


_NOT_READY = [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, _node(unschedulable=True), S, id="skip-queue-on-unschedulable-node-added"),
        pytest.param(None, _node(unschedulable=False), Q, id="queue-on-schedulable-node-added"),
        pytest.param(_node(unschedulable=True), _node(unschedulable=True, taints=_NOT_READY), S,
                     id="skip-unrelated-change-unschedulable-true"),
        pytest.param(_node(unschedulable=False), _node(unschedulable=False, taints=_NOT_READY), S,
                     id="skip-unrelated-change-unschedulable-false"),
        pytest.param(_node(unschedulable=True), _node(unschedulable=False), Q, id="queue-on-unschedulable-field-change"),
    ],
)
def test_node_unschedulable_is_schedulable_after_node_change(fw, old, new, want):
    pl = fw.Run(NodeUnschedulable, fw.Snapshot([])).plugin("NodeUnschedulable")
    assert _hint(pl, EventResource.NODE, _pod(), old, new) == want


def _uid_pod(uid: str, *tolerate: str) -> dict[str, Any]:
    return _pod({"tolerations": [{"key": k, "operator": "Exists"} for k in tolerate]}, uid=uid)


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(_uid_pod("uid"), _uid_pod("different-uid"),
                     _uid_pod("different-uid", "node.kubernetes.io/unschedulable"), S, id="skip-different-pod-update"),
        pytest.param(_uid_pod("uid"), _uid_pod("uid"), _uid_pod("uid", "node.kubernetes.io/unschedulable"), Q,
                     id="queue-when-the-unsched-pod-gets-toleration"),
        pytest.param(_uid_pod("uid"), _uid_pod("uid"), _uid_pod("uid", "unrelated-key"), S,
                     id="skip-when-the-unsched-pod-gets-unrelated-toleration"),
    ],
)
def test_node_unschedulable_is_schedulable_after_pod_toleration_change(fw, pod, old, new, want):
    pl = fw.Run(NodeUnschedulable, fw.Snapshot([])).plugin("NodeUnschedulable")
    assert _hint(pl, EventResource.POD, pod, old, new) == want


# ===================================================================================== ImageLocality

MB = 1024 * 1024


def _images(*images: str, init: tuple[str, ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return _pod(spec)


NODE_403002000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
                  (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB), (["gcr.io/2000:latest"], 2000 * MB)]
NODE_25010 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_60040900 = [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB), (["gcr.io/900:latest"], 900 * MB)]
NODE_300600900 = [(["gcr.io/300:latest"], 300 * MB), (["gcr.io/600:latest"], 600 * MB),
                  (["gcr.io/900:latest"], 900 * MB)]
NODE_400030 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_203040 = [(["gcr.io/20:latest"], 20 * MB), (["gcr.io/30:latest"], 30 * MB), (["gcr.io/40:latest"], 40 * MB)]
NO_IMAGES: list[tuple[list[str], int]] = []


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        pytest.param(_images("gcr.io/40", "gcr.io/250"), {"node1": NODE_403002000, "node2": NODE_25010},
                     {"node1": 0, "node2": 5}, id="two images spread on two nodes, prefer the larger image one"),
        pytest.param(_images("gcr.io/40", "gcr.io/300"), {"node1": NODE_403002000, "node2": NODE_25010},
                     {"node1": 7, "node2": 0}, id="two images on one node, prefer this node"),
        pytest.param(_images("gcr.io/10", "gcr.io/4000"), {"node1": NODE_400030, "node2": NODE_25010},
                     {"node1": 100, "node2": 0}, id="if exceed limit, use limit"),
        pytest.param(_images("gcr.io/10", "gcr.io/4000"),
                     {"node1": NODE_400030, "node2": NODE_25010, "node3": NO_IMAGES},
                     {"node1": 66, "node2": 0, "node3": 0},
                     id="if exceed limit, use limit (with node which has no images present)"),
        pytest.param(_images("gcr.io/300", "gcr.io/600", "gcr.io/900"),
                     {"node1": NODE_60040900, "node2": NODE_300600900, "node3": NO_IMAGES},
                     {"node1": 32, "node2": 36, "node3": 0}, id="pod with multiple large images, node2 is preferred"),
        pytest.param(_images("gcr.io/30", "gcr.io/40"), {"node1": NODE_203040, "node2": NODE_400030},
                     {"node1": 1, "node2": 0}, id="pod with multiple small images"),
        pytest.param(_images("gcr.io/30", init=("gcr.io/300",)), {"node1": NODE_403002000, "node2": NODE_203040},
                     {"node1": 6, "node2": 0},
                     id="include InitContainers: two images spread on two nodes, prefer the larger image one"),
    ],
)
def test_image_locality_priority(fw, pod, nodes, want):
    snap = fw.Snapshot([make_node(n).images(*imgs).obj() for n, imgs in nodes.items()])
    assert fw.score_nodes(ImageLocality, pod, snap) == want
    # upstream calls Score alone (ImageLocality has no NormalizeScore): the same raw scores
    run = fw.Run(ImageLocality, snap)
    pl, pi, state = run.plugin("ImageLocality"), PodInfo(pod), CycleState()
    infos = run.scheduler.snapshot.node_info_list
    assert pl.pre_score(state, pi, infos).is_success()
    assert {ni.name: pl.score(state, pi, ni)[0] for ni in infos} == want


def _fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("image", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param("root@" + _fake_digest("root"), "root@" + _fake_digest("root"), id="keep it as is 2"),
    ],
)
def test_normalized_image_name(image, want):
    assert normalized_image_name(image) == want


# =================================================================================== SchedulingGates

@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p").obj(), OK, id="pod does not carry scheduling gates"),
        pytest.param(make_pod("p").scheduling_gates("foo", "bar").obj(),
                     (UNRES, ["waiting for scheduling gates: [foo bar]"]), id="pod carries scheduling gates"),
    ],
)
def test_scheduling_gates_pre_enqueue(fw, pod, want):
    pl = fw.Run(SchedulingGates, fw.Snapshot([])).plugin("SchedulingGates")
    assert _st(pl.pre_enqueue(pod)) == want


def _gated(name: str, uid: str, *gates: str) -> dict[str, Any]:
    return _pod({"schedulingGates": [{"name": g} for g in gates]}, name=name, uid=uid)


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(_gated("p", "uid0", "foo", "bar"), _gated("p1", "uid1", "foo", "bar"), _gated("p1", "uid1", "foo"),
                     S, id="skip-queue-on-other-pod-updated"),
        pytest.param(_gated("p", "", "foo"), _gated("p", "", "foo"), _gated("p", ""), Q,
                     id="queue-on-the-unsched-pod-updated"),
    ],
)
def test_scheduling_gates_is_schedulable_after_pod_change(fw, pod, old, new, want):
    pl = fw.Run(SchedulingGates, fw.Snapshot([])).plugin("SchedulingGates")
    assert _hint(pl, EventResource.POD, pod, old, new) == want
