"""Upstream PodTopologySpread tables (pkg/scheduler/framework/plugins/podtopologyspread
filtering_test.go and scoring_test.go), translated case by case and run through the real scheduler
framework (tests/scheduler/plugins/conftest.py).

The stored upstream files are newer than v1.33 (they already carry SignPod and the split
`fwk` package); their tables match v1.33's for the cases ported here. Upstream case names are the
pytest ids. Where upstream compares the plugin's PreFilter / PreScore state, the same numbers are
read from our state: per constraint the domain -> matching pods map (TpValueToMatchNum,
TopologyValueToPodCounts), the global minimum (CriticalPaths[i][0].MatchNum), the ignored nodes and
the normalizing weights (log(size + 2)).

Skipped (feature gates that are on by default in v1.33 and cannot be switched off here):
"matchLabelKeys ignored when feature gate disabled" (TestPreFilterState and
TestPodTopologySpreadScore). The "... NodeInclusionPolicy disabled" / "feature gate disabled with
..." cases are ported because their expectations equal the enabled defaults (affinity Honor, taints
Ignore).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from minik3s.api.selectors import label_selector_from_dict
from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code
from scheduler.framework.types import PodInfo
from scheduler.plugins.pod_topology_spread import (
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    PodTopologySpread,
)

HOST = "kubernetes.io/hostname"
TZONE = "topology.kubernetes.io/zone"
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
NULL = object()  # a constraint without labelSelector
TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")

OK = Code.SUCCESS
U = Code.UNSCHEDULABLE
R = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
REASON = {
    OK: [],
    U: ["node(s) didn't match pod topology spread constraints"],
    R: ["node(s) didn't match pod topology spread constraints (missing required label)"],
}


# --- builders ----------------------------------------------------------------------------------


def nd(name: str, labels: dict[str, str] | None = None, *, tainted: bool = False) -> dict[str, Any]:
    b = make_node(name).labels(labels or {})
    if tainted:
        b = b.taints(TAINT)
    return b.obj()


def zn(name: str, zone: str, **extra: str) -> dict[str, Any]:
    """A node with labels zone=<zone>, node=<name> (upstream's usual node)."""
    return nd(name, {"zone": zone, "node": name, **extra})


def hn(name: str, **extra: str) -> dict[str, Any]:
    return nd(name, {HOST: name, **extra})


def four() -> list[dict[str, Any]]:
    return [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


def pd(name: str, node: str, *labels: str, ns: str | None = None, terminating: bool = False,
       **kv: str) -> dict[str, Any]:
    """An existing pod on `node`; positional labels get the empty value."""
    b = make_pod(name, ns or "default").labels({**{k: "" for k in labels}, **kv}).node(node)
    if terminating:
        b = b.terminating()
    return b.obj()


def sc(b: Any, max_skew: int, key: str, when: str, selector: Any, *, min_domains: int | None = None,
       aff: str | None = None, taints: str | None = None, mlk: list[str] | None = None) -> Any:
    """st.PodWrapper.SpreadConstraint: `selector` NULL leaves labelSelector unset."""
    b = b.spread_constraint(max_skew, key, when, None if selector is NULL else selector,
                            min_domains=min_domains, node_affinity_policy=aff, node_taints_policy=taints,
                            match_label_keys=mlk)
    return b


def pod(*labels: str, **kv: str) -> Any:
    return make_pod("p").labels({**{k: "" for k in labels}, **kv})


def list_args(default_constraints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"defaultingType": "List", "defaultConstraints": default_constraints or []}


def svc(selector: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": "s", "namespace": "default"}, "spec": {"selector": selector}}


def rs(name: str, selector: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"selector": selector}}


def C(max_skew: int, key: str, selector: Any, min_domains: int = 1, aff: str = HONOR,
      taints: str = IGNORE) -> tuple[Any, ...]:
    """An expected topologySpreadConstraint."""
    return (max_skew, key, label_selector_from_dict(None if selector is NULL else selector),
            min_domains, aff, taints)


def got_constraints(cons: list[Any]) -> list[tuple[Any, ...]]:
    return [(c.max_skew, c.topology_key, c.selector, c.min_domains, c.node_affinity_policy,
             c.node_taints_policy) for c in cons]


def minimum(counts: dict[str, int]) -> int | None:
    """CriticalPaths[i][0].MatchNum; None for no domain (upstream MaxInt32, never read)."""
    return min(counts.values()) if counts else None


# --- TestPreFilterState ------------------------------------------------------------------------

SKIP = "skip"

PRE_FILTER_STATE = [
    pytest.param(
        sc(pod("foo"), 5, "zone", DNS, {"matchLabels": {"foo": "bar"}}).obj(), four(), [], [], None,
        [(C(5, "zone", {"matchLabels": {"foo": "bar"}}), {"zone1": 0, "zone2": 0})],
        id="clean cluster with one spreadConstraint"),
    pytest.param(
        sc(pod("foo"), 1, "zone", DNS, FOO).obj(), four(),
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 2})],
        id="normal case with one spreadConstraint"),
    pytest.param(
        sc(pod("foo"), 1, "zone", DNS, NULL).obj(), four(),
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo")], [], None,
        [(C(1, "zone", NULL), {"zone1": 0, "zone2": 0})],
        id="normal case with null label selector"),
    pytest.param(
        sc(pod("foo"), 1, "zone", DNS, FOO).obj(),
        [*four(), zn("node-o", "zone3"), zn("node-p", "zone3")],
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 2, "zone3": 0})],
        id="normal case with one spreadConstraint, on a 3-zone cluster"),
    pytest.param(
        sc(pod("foo"), 1, "zone", DNS, FOO).obj(), four(),
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo", ns="ns1"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo", ns="ns2"), pd("p-y2", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 2, "zone2": 1})],
        id="namespace mismatch doesn't count"),
    pytest.param(
        sc(sc(pod("foo"), 1, "zone", DNS, FOO), 1, "node", DNS, FOO).obj(), four(),
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo"), pd("p-y3", "node-y", "foo"),
         pd("p-y4", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 4}),
         (C(1, "node", FOO), {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4})],
        id="normal case with two spreadConstraints"),
    pytest.param(
        sc(sc(sc(sc(pod("foo"), 1, "zone", SA, FOO), 1, "zone", DNS, FOO), 1, "node", SA, FOO),
           1, "node", DNS, FOO).obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo"), pd("p-y3", "node-y", "foo"),
         pd("p-y4", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 4}),
         (C(1, "node", FOO), {"node-a": 2, "node-b": 1, "node-y": 4})],
        id="soft spreadConstraints should be bypassed"),
    pytest.param(
        sc(sc(pod("foo", "bar"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR).obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [pd("p-a", "node-a", "foo"), pd("p-b", "node-b", "bar")], [], None,
        [(C(1, "zone", FOO), {"zone1": 1, "zone2": 0}),
         (C(1, "node", BAR), {"node-a": 0, "node-b": 1, "node-y": 0})],
        id="different labelSelectors - simple version"),
    pytest.param(
        sc(sc(pod("foo", "bar"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR).obj(),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo", "bar"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo", "bar"), pd("p-y3", "node-y", "foo"),
         pd("p-y4", "node-y", "foo", "bar")], [], None,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 4}),
         (C(1, "node", BAR), {"node-a": 1, "node-b": 0, "node-y": 2})],
        id="different labelSelectors - complex pods"),
    pytest.param(
        sc(sc(pod("foo").node_affinity_not_in("node", ["node-x"]), 1, "zone", DNS, FOO),
           1, "node", DNS, FOO).obj(), four(),
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo"), pd("p-y3", "node-y", "foo"),
         pd("p-y4", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 4}),
         (C(1, "node", FOO), {"node-a": 2, "node-b": 1, "node-y": 4})],
        id="two spreadConstraints, and with podAffinity"),
    pytest.param(
        pod(foo="bar", baz="kar").obj(), [], [],
        [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
         {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
         {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS}],
        {"services": [svc({"foo": "bar"})]},
        [(C(3, "node", {"matchLabels": {"foo": "bar"}}), {}),
         (C(5, "rack", {"matchLabels": {"foo": "bar"}}), {})],
        id="default constraints and a service"),
    pytest.param(
        pod(foo="bar").obj(), [], [],
        [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        {"services": [svc({"baz": "kep"})]}, SKIP,
        id="default constraints and a service that doesn't match"),
    pytest.param(
        sc(sc(pod(foo="bar", baz="tar"), 1, "zone", DNS, {"matchLabels": {"baz": "tar"}}),
           2, "planet", SA, {"matchLabels": {"fot": "rok"}}).obj(), [], [],
        [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        {"services": [svc({"foo": "bar"})]},
        [(C(1, "zone", {"matchLabels": {"baz": "tar"}}), {})],
        id="default constraints and a service, but pod has constraints"),
    pytest.param(
        pod(foo="bar").obj(), [], [],
        [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}],
        {"services": [svc({"foo": "bar"})]}, SKIP,
        id="default soft constraints and a service"),
    pytest.param(
        sc(sc(pod("foo"), 1, "zone", DNS, FOO), 1, "node", DNS, FOO).obj(), four(),
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo"), pd("p-y3", "node-y", "foo"),
         pd("p-y4", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 4}),
         (C(1, "node", FOO), {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4})],
        id="TpKeyToDomainsNum is calculated when MinDomains is enabled"),
    pytest.param(
        sc(pod("foo").node_selector(foo=""), 1, "node", DNS, BAR).obj(),
        [nd("node-a", {"node": "node-a", "foo": ""}), nd("node-b", {"node": "node-b", "foo": ""}),
         nd("node-c", {"node": "node-c", "bar": ""})],
        [pd("p-a", "node-a", "bar"), pd("p-b", "node-b", "bar"), pd("p-c", "node-b", "bar"),
         pd("p-d", "node-c")], [], None,
        [(C(1, "node", BAR), {"node-a": 1, "node-b": 2})],
        id="feature gate disabled with NodeAffinityPolicy"),
    pytest.param(
        sc(pod("foo").node_selector(foo=""), 1, "node", DNS, BAR).obj(),
        [nd("node-a", {"node": "node-a", "foo": ""}), nd("node-b", {"node": "node-b", "foo": ""}),
         nd("node-c", {"node": "node-c", "bar": ""})],
        [pd("p-a", "node-a", "bar"), pd("p-b", "node-b", "bar"), pd("p-c", "node-b", "bar"),
         pd("p-d", "node-c")], [], None,
        [(C(1, "node", BAR), {"node-a": 1, "node-b": 2})],
        id="NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(
        sc(pod("foo").node_selector(foo=""), 1, "node", DNS, BAR, aff=IGNORE).obj(),
        [nd("node-a", {"node": "node-a", "foo": ""}), nd("node-b", {"node": "node-b", "foo": ""}),
         nd("node-c", {"node": "node-c", "bar": ""})],
        [pd("p-a", "node-a", "bar"), pd("p-b", "node-b", "bar"), pd("p-c", "node-b", "bar"),
         pd("p-d", "node-c")], [], None,
        [(C(1, "node", BAR, aff=IGNORE), {"node-a": 1, "node-b": 2, "node-c": 0})],
        id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(
        sc(pod("foo").node_affinity_in("foo", [""]), 1, "node", DNS, BAR).obj(),
        [nd("node-a", {"node": "node-a", "foo": ""}), nd("node-b", {"node": "node-b", "foo": ""}),
         nd("node-c", {"node": "node-c", "bar": ""})],
        [pd("p-a", "node-a", "bar"), pd("p-c", "node-b", "bar"), pd("p-d", "node-b", "bar"),
         pd("p-e", "node-c")], [], None,
        [(C(1, "node", BAR), {"node-a": 1, "node-b": 2})],
        id="NodeAffinityPolicy honored with nodeAffinity"),
    pytest.param(
        sc(pod("foo").node_affinity_in("foo", [""]), 1, "node", DNS, BAR, aff=IGNORE).obj(),
        [nd("node-a", {"node": "node-a", "foo": ""}), nd("node-b", {"node": "node-b", "foo": ""}),
         nd("node-c", {"node": "node-c", "bar": ""})],
        [pd("p-a", "node-a", "bar"), pd("p-b", "node-b", "bar"), pd("p-c", "node-b", "bar"),
         pd("p-d", "node-c")], [], None,
        [(C(1, "node", BAR, aff=IGNORE), {"node-a": 1, "node-b": 2, "node-c": 0})],
        id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(
        sc(pod("foo"), 1, "node", DNS, BAR).obj(),
        [nd("node-a", {"node": "node-a"}), nd("node-b", {"node": "node-b"}),
         nd("node-c", {"node": "node-c", "bar": ""}, tainted=True)],
        [pd("p-a", "node-a", "bar"), pd("p-b", "node-b", "bar"), pd("p-c", "node-b", "bar"),
         pd("p-d", "node-c")], [], None,
        [(C(1, "node", BAR), {"node-a": 1, "node-b": 2, "node-c": 0})],
        id="feature gate disabled with NodeTaintsPolicy"),
    pytest.param(
        sc(pod("foo"), 1, "node", DNS, BAR).obj(),
        [nd("node-a", {"node": "node-a"}), nd("node-b", {"node": "node-b"}),
         nd("node-c", {"node": "node-c", "bar": ""}, tainted=True)],
        [pd("p-a", "node-a", "bar"), pd("p-b", "node-b", "bar"), pd("p-c", "node-b", "bar"),
         pd("p-d", "node-c")], [], None,
        [(C(1, "node", BAR), {"node-a": 1, "node-b": 2, "node-c": 0})],
        id="NodeTaintsPolicy ignored"),
    pytest.param(
        sc(pod("foo"), 1, "node", DNS, BAR, taints=HONOR).obj(),
        [nd("node-a", {"node": "node-a"}), nd("node-b", {"node": "node-b"}),
         nd("node-c", {"node": "node-c", "bar": ""}, tainted=True)],
        [pd("p-a", "node-a", "bar"), pd("p-b", "node-b", "bar"), pd("p-c", "node-b", "bar"),
         pd("p-d", "node-c")], [], None,
        [(C(1, "node", BAR, taints=HONOR), {"node-a": 1, "node-b": 2})],
        id="NodeTaintsPolicy honored"),
    pytest.param(
        sc(pod("foo").toleration(TAINT[0], effect="NoSchedule"), 1, "node", DNS, BAR, taints=HONOR).obj(),
        [nd("node-a", {"node": "node-a"}), nd("node-b", {"node": "node-b"}),
         nd("node-c", {"node": "node-c", "bar": ""}, tainted=True)],
        [pd("p-a", "node-a", "bar"), pd("p-b", "node-b", "bar"), pd("p-c", "node-b", "bar"),
         pd("p-d", "node-c")], [], None,
        [(C(1, "node", BAR, taints=HONOR), {"node-a": 1, "node-b": 2, "node-c": 0})],
        id="NodeTaintsPolicy honored with tolerated taints"),
    pytest.param(
        sc(sc(pod("foo").node_selector(foo=""), 1, "zone", DNS, FOO), 1, "node", DNS, FOO, aff=IGNORE).obj(),
        [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
        [pd("p-b1", "node-b", "foo"), pd("p-b2", "node-b", "foo"), pd("p-x1", "node-x", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 0, "zone2": 1}),
         (C(1, "node", FOO, aff=IGNORE), {"node-a": 0, "node-b": 2, "node-x": 1})],
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore"),
    pytest.param(
        sc(sc(pod("foo"), 1, "zone", DNS, FOO, taints=HONOR), 1, "node", DNS, FOO).obj(),
        [zn("node-a", "zone1", foo=""), nd("node-b", {"zone": "zone1", "node": "node-b"}, tainted=True),
         zn("node-x", "zone2", foo="")],
        [pd("p-b1", "node-b", "foo"), pd("p-b2", "node-b", "foo"), pd("p-x1", "node-x", "foo")], [], None,
        [(C(1, "zone", FOO, taints=HONOR), {"zone1": 0, "zone2": 1}),
         (C(1, "node", FOO), {"node-a": 0, "node-b": 2, "node-x": 1})],
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore"),
    pytest.param(
        sc(sc(pod("foo").node_selector(foo=""), 1, "zone", DNS, FOO), 1, "node", DNS, FOO).obj(),
        [zn("node-a", "zone1"), nd("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, tainted=True),
         zn("node-x", "zone2", foo=""), zn("node-y", "zone2")],
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-x1", "node-x", "foo"),
         pd("p-y1", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO), {"zone1": 0, "zone2": 1}),
         (C(1, "node", FOO), {"node-b": 0, "node-x": 1})],
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore"),
    pytest.param(
        sc(sc(pod("foo").node_selector(foo=""), 1, "zone", DNS, FOO, aff=IGNORE),
           1, "node", DNS, FOO, taints=HONOR).obj(),
        [zn("node-a", "zone1"), nd("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, tainted=True),
         zn("node-x", "zone2", foo=""), zn("node-y", "zone2", foo="")],
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-x1", "node-x", "foo"),
         pd("p-x2", "node-x", "foo"), pd("p-y1", "node-y", "foo")], [], None,
        [(C(1, "zone", FOO, aff=IGNORE), {"zone1": 2, "zone2": 3}),
         (C(1, "node", FOO, taints=HONOR), {"node-x": 2, "node-y": 1})],
        id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor"),
    pytest.param(
        sc(pod(foo="", bar="a"), 1, "zone", DNS, FOO, mlk=["bar"]).obj(), four(),
        [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo", bar="a"), pd("p-b1", "node-b", "foo"),
         pd("p-y1", "node-y", "foo", bar="a"), pd("p-y2", "node-y", "bar")], [], None,
        [(C(1, "zone", {"matchExpressions": FOO["matchExpressions"], "matchLabels": {"bar": "a"}}),
          {"zone1": 1, "zone2": 1})],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"),
    pytest.param(
        sc(pod(foo="a"), 1, "zone", DNS, {}, mlk=["foo"]).obj(), four(),
        [pd("p-a1", "node-a", foo="a"), pd("p-a2", "node-a", foo="a"), pd("p-b1", "node-b", foo="a"),
         pd("p-y1", "node-y", foo="a"), pd("p-y2", "node-y", foo="a")], [], None,
        [(C(1, "zone", {"matchLabels": {"foo": "a"}}), {"zone1": 3, "zone2": 2})],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty"),
    pytest.param(
        sc(pod("foo"), 1, "zone", DNS, NULL, mlk=["bar"]).obj(), four(),
        [pd("p-a1", "node-a", foo="a"), pd("p-a2", "node-a", foo="a"), pd("p-b1", "node-b", foo="a"),
         pd("p-y1", "node-y", foo="a"), pd("p-y2", "node-y", foo="a")], [], None,
        [(C(1, "zone", NULL), {"zone1": 0, "zone2": 0})],
        id="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled"),
    pytest.param(
        sc(pod("foo"), 1, "zone", DNS, NULL, mlk=["bar"]).obj(), four(),
        [pd("p-a1", "node-a", foo="a"), pd("p-a2", "node-a", foo="a"), pd("p-b1", "node-b", foo="a"),
         pd("p-y1", "node-y", foo="a"), pd("p-y2", "node-y", foo="a")], [], None,
        [(C(1, "zone", NULL), {"zone1": 0, "zone2": 0})],
        id="no pod is matched when LabelSelector is nil when feature gate disabled"),
    pytest.param(
        sc(pod("foo"), 1, "zone", DNS, FOO, mlk=["bar"]).obj(), four(),
        [pd("p-a1", "node-a", foo="a"), pd("p-a2", "node-a", foo="a"), pd("p-b1", "node-b", foo="a"),
         pd("p-y1", "node-y", foo="a"), pd("p-y2", "node-y", foo="a")], [], None,
        [(C(1, "zone", FOO), {"zone1": 3, "zone2": 2})],
        id="key in matchLabelKeys is ignored when it isn't exist in pod.labels"),
    pytest.param(
        sc(sc(pod("foo", "bar"), 1, "zone", DNS, FOO), 1, "zone", DNS, BAR).obj(), four(),
        [pd("p-a1", "node-a", "foo", "bar"), pd("p-b1", "node-b", "foo"), pd("p-x1", "node-x", "bar"),
         pd("p-y1", "node-y", "foo", "bar"), pd("p-y2", "node-y", "bar")], [], None,
        [(C(1, "zone", FOO), {"zone1": 2, "zone2": 1}),
         (C(1, "zone", BAR), {"zone1": 1, "zone2": 3})],
        id="two spreadConstraints with the same topologyKey"),
    pytest.param(
        pod("foo").obj(), [zn("node-a", "zone1")], [], [], None, SKIP,
        id="skip if not specified"),
]


@pytest.mark.parametrize(("pod_", "nodes", "existing", "defaults", "informers", "want"), PRE_FILTER_STATE)
def test_pre_filter_state(fw, pod_, nodes, existing, defaults, informers, want):
    run = fw.Run((PodTopologySpread, list_args(defaults)), fw.Snapshot(nodes, existing, informers=informers))
    _, _, st, state = run.filter(pod_)
    if want == SKIP:
        assert st.is_success()
        assert "PodTopologySpread" in state.skip_filter_plugins
        assert state.get(PRE_FILTER_STATE_KEY) is None
        return
    assert st.is_success(), st
    assert "PodTopologySpread" not in state.skip_filter_plugins
    s = state.read(PRE_FILTER_STATE_KEY)
    assert got_constraints(s.constraints) == [c for c, _ in want]
    assert s.counts == [counts for _, counts in want]
    for i, (_, counts) in enumerate(want):
        if counts:
            assert s.mins[i] == minimum(counts)


# --- TestPreFilterStateAddPod / TestPreFilterStateRemovePod ---------------------------------------

NODE_C = C(1, "node", FOO)
ZONE_C = C(1, "zone", FOO)
NODE_P = sc(pod("foo"), 1, "node", DNS, FOO).obj()
ZONE_P = sc(pod("foo"), 1, "zone", DNS, FOO).obj()
ZONE_NODE_P = sc(sc(pod("foo"), 1, "zone", DNS, FOO), 1, "node", DNS, FOO).obj()
ZONE_NODE_BAR_P = sc(sc(pod("foo", "bar"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR).obj()
AFF_UNMATCHED_P = sc(pod("foo").node_affinity_not_in("foo", ["bar"]), 1, "zone", DNS, FOO).obj()
TOLERATING_P = sc(pod("foo").toleration(TAINT[0], effect="NoSchedule"), 1, "zone", DNS, FOO).obj()
AB = [zn("node-a", "zone1"), zn("node-b", "zone1")]
AX = [zn("node-a", "zone1"), zn("node-x", "zone2")]
ABX = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")]
AFF_NODES = [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")]
TAINT_NODES = [nd("node-a", {"zone": "zone1", "node": "node-a"}, tainted=True), zn("node-b", "zone2")]

ADD_POD = [
    pytest.param(NODE_P, pd("p-a1", "node-a", "foo"), [], 0, AB,
                 [(NODE_C, {"node-a": 1, "node-b": 0})],
                 id="node a and b both impact current min match"),
    pytest.param(NODE_P, pd("p-a1", "node-a", "foo"), [pd("p-b1", "node-b", "foo")], 0, AB,
                 [(NODE_C, {"node-a": 1, "node-b": 1})],
                 id="only node a impacts current min match"),
    pytest.param(NODE_P, pd("p-a1", "node-a", "foo", ns="ns1"), [pd("p-b1", "node-b", "foo")], 0, AB,
                 [(NODE_C, {"node-a": 0, "node-b": 1})],
                 id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap"),
    pytest.param(NODE_P, pd("p-b2", "node-b", "foo"), [pd("p-b1", "node-b", "foo")], 1, AB,
                 [(NODE_C, {"node-a": 0, "node-b": 2})],
                 id="add pod on non-critical node won't trigger re-calculation"),
    pytest.param(ZONE_NODE_P, pd("p-a1", "node-a", "foo"), [], 0, AX,
                 [(ZONE_C, {"zone1": 1, "zone2": 0}), (NODE_C, {"node-a": 1, "node-x": 0})],
                 id="node a and x both impact topologyKeyToMinPodsMap on zone and node"),
    pytest.param(ZONE_NODE_P, pd("p-a1", "node-a", "foo"), [pd("p-x1", "node-x", "foo")], 0, AX,
                 [(ZONE_C, {"zone1": 1, "zone2": 1}), (NODE_C, {"node-a": 1, "node-x": 1})],
                 id="only node a impacts topologyKeyToMinPodsMap on zone and node"),
    pytest.param(ZONE_NODE_P, pd("p-a1", "node-a", "foo"),
                 [pd("p-b1", "node-b", "foo"), pd("p-b2", "node-b", "foo"), pd("p-x1", "node-x", "foo")], 0, ABX,
                 [(ZONE_C, {"zone1": 3, "zone2": 1}), (NODE_C, {"node-a": 1, "node-b": 2, "node-x": 1})],
                 id="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone"),
    pytest.param(ZONE_NODE_BAR_P, pd("p-a1", "node-a", "foo"),
                 [pd("p-b1", "node-b", "foo", "bar"), pd("p-x1", "node-x", "foo", "bar"),
                  pd("p-x2", "node-x", "bar")], 0, ABX,
                 [(ZONE_C, {"zone1": 2, "zone2": 1}),
                  (C(1, "node", BAR), {"node-a": 0, "node-b": 1, "node-x": 2})],
                 id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone"),
    pytest.param(ZONE_NODE_BAR_P, pd("p-a1", "node-a", "foo", "bar"),
                 [pd("p-b1", "node-b", "bar"), pd("p-x1", "node-x", "foo", "bar"), pd("p-x2", "node-x", "bar")],
                 0, ABX,
                 [(ZONE_C, {"zone1": 1, "zone2": 1}),
                  (C(1, "node", BAR), {"node-a": 1, "node-b": 1, "node-x": 2})],
                 id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both "
                    "zone and node"),
    pytest.param(AFF_UNMATCHED_P, pd("p-a1", "node-a", "foo", zone="zone1"),
                 [pd("p-a2", "node-a", "foo", zone="zone1"), pd("p-b1", "node-b", "foo", zone="zone2")], 0,
                 AFF_NODES, [(ZONE_C, {"zone2": 1})],
                 id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled"),
    pytest.param(AFF_UNMATCHED_P, pd("p-a1", "node-a", "foo", zone="zone1"),
                 [pd("p-a2", "node-a", "foo", zone="zone1"), pd("p-b1", "node-b", "foo", zone="zone2")], 0,
                 AFF_NODES, [(ZONE_C, {"zone2": 1})],
                 id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled"),
    pytest.param(ZONE_P, pd("p-b1", "node-b", "foo", zone="zone2"),
                 [pd("p-a1", "node-a", "foo", zone="zone1"), pd("p-b2", "node-b", "foo", zone="zone2")], 1,
                 AFF_NODES, [(ZONE_C, {"zone1": 1, "zone2": 2})],
                 id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled"),
    pytest.param(ZONE_P, pd("p-b1", "node-b", "foo", zone="zone2"),
                 [pd("p-a1", "node-a", "foo", zone="zone1"), pd("p-b2", "node-b", "foo", zone="zone2")], 1,
                 AFF_NODES, [(ZONE_C, {"zone1": 1, "zone2": 2})],
                 id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled"),
    pytest.param(ZONE_P, pd("p-b1", "node-b", zone="zone2"),
                 [pd("p-a1", "node-a", "foo", zone="zone1"), pd("p-b2", "node-b", "foo", zone="zone2")], 1,
                 AFF_NODES, [(ZONE_C, {"zone1": 1, "zone2": 1})],
                 id="add a label selector not matched pod when with NodeInclusionPolicy enabled"),
    pytest.param(ZONE_P, pd("p-b1", "node-b", "foo", zone="zone2"),
                 [pd("p-a1", "node-a", "foo", zone="zone1"), pd("p-b2", "node-b", "foo", zone="zone2")], 1,
                 TAINT_NODES, [(ZONE_C, {"zone1": 1, "zone2": 2})],
                 id="add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled"),
    pytest.param(TOLERATING_P, pd("p-b1", "node-b", "foo", zone="zone2"),
                 [pd("p-a1", "node-a", "foo", zone="zone1"), pd("p-b2", "node-b", "foo", zone="zone2")], 1,
                 TAINT_NODES, [(ZONE_C, {"zone1": 1, "zone2": 2})],
                 id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled"),
]


def _check_state_and_filter(run, state, preemptor, want):
    """Upstream's state comparison, then the Filter verdicts the updated state gives (the
    preemption what-if), checked against the skew rule on the expected counts."""
    s = state.read(PRE_FILTER_STATE_KEY)
    assert got_constraints(s.constraints) == [c for c, _ in want]
    assert s.counts == [counts for _, counts in want]
    assert s.mins == [minimum(counts) for _, counts in want]
    pi = PodInfo(preemptor)
    for ni in run.scheduler.snapshot.node_info_list:
        want_code = OK
        for (skew, key, selector, *_), counts in want:
            if key not in ni.labels:
                want_code = R
                break
            self_match = 1 if selector.matches(pi.labels) else 0
            if counts.get(ni.labels[key], 0) + self_match - (minimum(counts) or 0) > skew:
                want_code = U
                break
        got = run.framework.run_filter(state, pi, ni)
        assert (got.code if got is not None else OK) == want_code, ni.name


@pytest.mark.parametrize(("preemptor", "added", "existing", "node_idx", "nodes", "want"), ADD_POD)
def test_pre_filter_state_add_pod(fw, preemptor, added, existing, node_idx, nodes, want):
    run = fw.Run((PodTopologySpread, list_args()), fw.Snapshot(nodes, existing))
    _, _, st, state = run.filter(preemptor)
    assert st.is_success(), st
    ni = run.scheduler.snapshot.node_info_map[nodes[node_idx]["metadata"]["name"]]
    st = run.framework.run_pre_filter_extension_add_pod(state, PodInfo(preemptor), PodInfo(added), ni)
    assert st.is_success(), st
    _check_state_and_filter(run, state, preemptor, want)


FOUR_FOO = [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo"), pd("p-x1", "node-x", "foo"),
            pd("p-y1", "node-y", "foo")]

REMOVE_POD = [
    pytest.param(ZONE_P, ABX, [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
                               pd("p-x1", "node-x", "foo")], 0, None, 0,
                 [(ZONE_C, {"zone1": 1, "zone2": 1})],
                 id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged"),
    pytest.param(ZONE_P, four(), FOUR_FOO, 0, None, 0,
                 [(ZONE_C, {"zone1": 1, "zone2": 2})],
                 id="one spreadConstraint on node, topologyKeyToMinPodsMap changed"),
    pytest.param(ZONE_P, four(), [pd("p-a0", "node-a", "bar"), *FOUR_FOO], 0, None, 0,
                 [(ZONE_C, {"zone1": 2, "zone2": 2})],
                 id="delete an irrelevant pod won't help"),
    pytest.param(ZONE_P, four(), FOUR_FOO, -1, pd("p-a0", "node-a", "bar"), 0,
                 [(ZONE_C, {"zone1": 2, "zone2": 2})],
                 id="delete a non-existing pod won't help"),
    pytest.param(ZONE_NODE_P, ABX,
                 [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
                  pd("p-x1", "node-x", "foo"), pd("p-x2", "node-x", "foo")], 3, None, 2,
                 [(ZONE_C, {"zone1": 3, "zone2": 1}), (NODE_C, {"node-a": 2, "node-b": 1, "node-x": 1})],
                 id="two spreadConstraints"),
    # upstream leaves deletedPodIdx at 0 below: existingPods[0] is removed (with nodes[nodeIdx])
    pytest.param(AFF_UNMATCHED_P, AFF_NODES,
                 [pd("p-a2", "node-a", "foo", zone="zone1"), pd("p-b1", "node-b", "foo", zone="zone2")], 0,
                 None, 0, [(ZONE_C, {"zone2": 1})],
                 id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled"),
    pytest.param(AFF_UNMATCHED_P, AFF_NODES,
                 [pd("p-a2", "node-a", "foo", zone="zone1"), pd("p-b1", "node-b", "foo", zone="zone2")], 0,
                 None, 0, [(ZONE_C, {"zone2": 1})],
                 id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled"),
    pytest.param(ZONE_P, AFF_NODES,
                 [pd("p-a1", "node-a", "foo", zone="zone1"), pd("p-b2", "node-b", "foo", zone="zone2")], 0,
                 None, 1, [(ZONE_C, {"zone2": 0, "zone1": 1})],
                 id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled"),
    pytest.param(ZONE_P, AFF_NODES,
                 [pd("p-a1", "node-a", "foo", zone="zone1"), pd("p-b2", "node-b", "foo", zone="zone2")], 0,
                 None, 1, [(ZONE_C, {"zone2": 0, "zone1": 1})],
                 id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled"),
]


@pytest.mark.parametrize(("preemptor", "nodes", "existing", "deleted_idx", "deleted", "node_idx", "want"),
                         REMOVE_POD)
def test_pre_filter_state_remove_pod(fw, preemptor, nodes, existing, deleted_idx, deleted, node_idx, want):
    run = fw.Run((PodTopologySpread, list_args()), fw.Snapshot(nodes, existing))
    _, _, st, state = run.filter(preemptor)
    assert st.is_success(), st
    if 0 <= deleted_idx < len(existing):
        deleted = existing[deleted_idx]
    ni = run.scheduler.snapshot.node_info_map[nodes[node_idx]["metadata"]["name"]]
    st = run.framework.run_pre_filter_extension_remove_pod(state, PodInfo(preemptor), PodInfo(deleted), ni)
    assert st.is_success(), st
    _check_state_and_filter(run, state, preemptor, want)


# --- TestSingleConstraint / TestMultipleConstraints -------------------------------------------

ABCn = [nd("node-a", {"node": "node-a"}), nd("node-b", {"node": "node-b"}), nd("node-c", {"node": "node-c"})]
POLICY_NODES = [nd("node-a", {"node": "node-a", "foo": ""}), nd("node-b", {"node": "node-b", "foo": ""}),
                nd("node-x", {"node": "node-x", "foo": ""}), nd("node-y", {"node": "node-y"})]
TAINT_POLICY_NODES = [*POLICY_NODES[:3], nd("node-y", {"node": "node-y"}, tainted=True)]
POLICY_PODS = [pd("p-b1", "node-a", "foo"), pd("p-b2", "node-b", "foo"), pd("p-y1", "node-y", "foo")]
SPREAD_2103 = [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
               pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo"), pd("p-y3", "node-y", "foo")]
SPREAD_22_1 = [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
               pd("p-b2", "node-b", "foo"), pd("p-c1", "node-c", "foo")]
ZONES_21 = [pd("p-b1", "node-a", "foo"), pd("p-b2", "node-b", "foo"), pd("p-y1", "node-y", "foo")]


def codes4(a: Code, b: Code, x: Code, y: Code) -> dict[str, Code]:
    return {"node-a": a, "node-b": b, "node-x": x, "node-y": y}


SINGLE = [
    pytest.param(sc(pod("foo"), 1, "zone", DNS, FOO).obj(), four(), [], codes4(OK, OK, OK, OK),
                 id="no existing pods"),
    pytest.param(sc(pod("foo"), 1, "zone", DNS, BAR).obj(), four(), [], codes4(OK, OK, OK, OK),
                 id="no existing pods, incoming pod doesn't match itself"),
    pytest.param(sc(pod("foo"), 1, "zone", DNS, FOO).obj(), four(),
                 [pd("p-a1", "node-a", "foo", ns="ns1"), pd("p-b1", "node-a", "foo", ns="ns2"),
                  pd("p-x1", "node-x", "foo"), pd("p-y1", "node-y", "foo")], codes4(OK, OK, U, U),
                 id="existing pods in a different namespace do not count"),
    pytest.param(sc(pod("foo"), 1, "zone", DNS, NULL).obj(), four(),
                 [pd("p-x1", "node-x", "foo"), pd("p-y1", "node-y", "foo")], codes4(OK, OK, OK, OK),
                 id="existing pods do not match null selector"),
    pytest.param(sc(pod("foo"), 1, "zone", DNS, FOO).obj(), four(), SPREAD_2103, codes4(OK, OK, OK, OK),
                 id="pods spread across zones as 3/3, all nodes fit"),
    pytest.param(sc(pod("foo"), 1, "zone", DNS, FOO).obj(),
                 [zn("node-a", "zone1"), nd("node-b", {"zon": "zone1", "node": "node-b"}), zn("node-x", "zone2"),
                  zn("node-y", "zone2")],
                 [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo"), pd("p-x1", "node-x", "foo"),
                  pd("p-y1", "node-y", "foo")], codes4(OK, R, U, U),
                 id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b"),
    pytest.param(sc(pod("foo"), 1, "rack", DNS, FOO).obj(), [zn("node-a", "zone1"), zn("node-x", "zone2")], [],
                 {"node-a": R, "node-x": R},
                 id="pod cannot be scheduled as all nodes don't have label 'rack'"),
    pytest.param(sc(pod("foo"), 1, "node", DNS, FOO).obj(), four(), SPREAD_2103, codes4(U, U, OK, U),
                 id="pods spread across nodes as 2/1/0/3, only node-x fits"),
    pytest.param(sc(pod("foo"), 2, "node", DNS, FOO).obj(), four(), SPREAD_2103, codes4(U, OK, OK, U),
                 id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit"),
    pytest.param(sc(pod("bar"), 1, "node", DNS, FOO).obj(), four(), SPREAD_2103, codes4(U, OK, OK, U),
                 id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself"),
    pytest.param(sc(pod("foo").node_affinity_in("node", ["node-a", "node-y"]), 1, "node", DNS, FOO).obj(),
                 four(), SPREAD_2103, codes4(OK, OK, OK, U),
                 id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits"),
    pytest.param(sc(pod("foo"), 1, "node", DNS, FOO).obj(),
                 [nd("node-a", {"node": "node-a"}), nd("node-b", {"node": "node-b"})],
                 [pd("p-a", "node-a", "foo", terminating=True), pd("p-b", "node-b", "foo")],
                 {"node-a": OK, "node-b": U},
                 id="terminating Pods should be excluded"),
    pytest.param(sc(pod("foo").node_affinity_not_in("node", ["node-b"]), 1, "zone", DNS, FOO).obj(), four(),
                 [pd("p-b1", "node-b", "foo"), pd("p-b2", "node-b", "foo"), pd("p-y1", "node-y", "foo")],
                 codes4(OK, OK, U, U),
                 id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits"),
    pytest.param(sc(pod("foo"), 2, "node", DNS, FOO, min_domains=4).obj(), ABCn, SPREAD_22_1,
                 {"node-a": U, "node-b": U, "node-c": OK},
                 id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
                    "then the third node fits"),
    pytest.param(sc(pod("foo"), 2, "node", DNS, FOO, min_domains=2).obj(), ABCn, SPREAD_22_1,
                 {"node-a": OK, "node-b": OK, "node-c": OK},
                 id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
                    "then the all nodes fit"),
    pytest.param(sc(pod("foo"), 2, "zone", DNS, FOO, min_domains=3).obj(), four(), ZONES_21,
                 codes4(U, U, OK, OK),
                 id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
                    "then the third and fourth nodes fit"),
    pytest.param(sc(pod("foo"), 2, "zone", DNS, FOO, min_domains=1).obj(), four(), ZONES_21,
                 codes4(OK, OK, OK, OK),
                 id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
                    "then the all nodes fit"),
    pytest.param(sc(pod("foo").node_selector(foo=""), 1, "node", DNS, FOO).obj(), POLICY_NODES, POLICY_PODS,
                 codes4(U, U, OK, OK), id="NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(sc(pod("foo").node_selector(foo=""), 1, "node", DNS, FOO, aff=IGNORE).obj(), POLICY_NODES,
                 POLICY_PODS, codes4(U, U, OK, U), id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(sc(pod("foo").node_affinity_in("foo", [""]), 1, "node", DNS, FOO).obj(), POLICY_NODES,
                 POLICY_PODS, codes4(U, U, OK, OK), id="NodeAffinityPolicy honored with nodeAffinity"),
    # upstream repeats the name "NodeAffinityPolicy ignored with labelSelectors" for this nodeAffinity case
    pytest.param(sc(pod("foo").node_affinity_in("foo", [""]), 1, "node", DNS, FOO, aff=IGNORE).obj(),
                 POLICY_NODES, POLICY_PODS, codes4(U, U, OK, U),
                 id="NodeAffinityPolicy ignored with labelSelectors (nodeAffinity)"),
    pytest.param(sc(pod("foo"), 1, "node", DNS, FOO, taints=HONOR).obj(), TAINT_POLICY_NODES, POLICY_PODS,
                 codes4(U, U, OK, OK), id="NodeTaintsPolicy honored"),
    pytest.param(sc(pod("foo"), 1, "node", DNS, FOO).obj(), TAINT_POLICY_NODES, POLICY_PODS,
                 codes4(U, U, OK, U), id="NodeTaintsPolicy ignored"),
]

INCLUSION_PODS = [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo"), pd("p-y1", "node-y", "foo")]
TWO_ZONE_PODS = [pd("p-a1", "node-a", "foo", "bar"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo", "bar"),
                 pd("p-y1", "node-y", "foo"), pd("p-y2", "node-y", "foo", "bar"), pd("p-y3", "node-y", "foo")]

MULTIPLE = [
    pytest.param(ZONE_NODE_P, four(), SPREAD_2103, codes4(U, U, OK, U),
                 id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]"),
    pytest.param(ZONE_NODE_P, four(), [*SPREAD_2103, pd("p-y4", "node-y", "foo")], codes4(U, U, U, U),
                 id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]"),
    pytest.param(ZONE_NODE_BAR_P, four(), [pd("p-a1", "node-a", "foo"), pd("p-y1", "node-y", "bar")],
                 codes4(U, U, OK, U),
                 id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]"),
    pytest.param(ZONE_NODE_BAR_P, four(),
                 [pd("p-a1", "node-a", "foo"), pd("p-x1", "node-x", "bar"), pd("p-y1", "node-y", "bar")],
                 codes4(U, U, U, U),
                 id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]"),
    pytest.param(ZONE_NODE_BAR_P, four(),
                 [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo", "bar"), pd("p-y1", "node-y", "foo"),
                  pd("p-y2", "node-y", "foo", "bar"), pd("p-y3", "node-y", "foo")],
                 codes4(U, OK, U, U),
                 id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]"),
    pytest.param(sc(sc(pod("bar"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR).obj(), four(),
                 [pd("p-a1", "node-a", "foo"), pd("p-x1", "node-x", "bar"), pd("p-y1", "node-y", "bar")],
                 codes4(OK, OK, U, U),
                 id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint"),
    pytest.param(ZONE_NODE_P,
                 [zn("node-a", "zone1"), zn("node-b", "zone1"), nd("node-x", {"zone": "zone2"}),
                  zn("node-y", "zone2")],
                 [pd("p-a1", "node-a", "foo"), pd("p-y3", "node-y", "foo")], codes4(U, OK, R, U),
                 id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]"),
    pytest.param(sc(sc(pod("foo").node_selector(foo=""), 1, "zone", DNS, FOO), 1, "node", DNS, FOO,
                    aff=IGNORE).obj(),
                 [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
                  zn("node-y", "zone2")], INCLUSION_PODS, codes4(U, U, OK, U),
                 id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore"),
    pytest.param(sc(sc(pod("foo"), 1, "zone", DNS, FOO, taints=HONOR), 1, "node", DNS, FOO).obj(),
                 [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
                  nd("node-y", {"zone": "zone2", "node": "node-y"}, tainted=True)], INCLUSION_PODS,
                 codes4(U, U, OK, U),
                 id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore"),
    pytest.param(sc(sc(pod("foo").node_selector(foo=""), 1, "zone", DNS, FOO), 1, "node", DNS, FOO).obj(),
                 [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
                  nd("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, tainted=True)], INCLUSION_PODS,
                 codes4(U, OK, OK, U),
                 id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore"),
    pytest.param(sc(sc(pod("foo").node_selector(foo=""), 1, "zone", DNS, FOO, taints=HONOR), 1, "node", DNS,
                    FOO, aff=IGNORE).obj(),
                 [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
                  nd("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, tainted=True)], INCLUSION_PODS,
                 codes4(U, U, OK, U),
                 id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore"),
    pytest.param(sc(sc(pod("foo", "bar"), 1, "zone", DNS, BAR), 1, "zone", DNS, FOO).obj(), four(),
                 TWO_ZONE_PODS, codes4(U, U, OK, OK),
                 id="two Constraints on zone, spreads = [3/3, 2/1]"),
    pytest.param(sc(sc(pod("foo", "bar"), 1, "zone", DNS, BAR), 1, "zone", DNS, FOO).obj(), four(),
                 [*TWO_ZONE_PODS, pd("p-y4", "node-y", "foo")], codes4(U, U, U, U),
                 id="two Constraints on zone, spreads = [3/4, 2/1]"),
]


@pytest.mark.parametrize(("pod_", "nodes", "existing", "want"), SINGLE + MULTIPLE)
def test_filter(fw, pod_, nodes, existing, want):
    statuses, _, st, _ = fw.filter_nodes((PodTopologySpread, list_args()), pod_, fw.Snapshot(nodes, existing))
    assert st.is_success(), st
    got = {name: (s.code, list(s.reasons)) for name, s in statuses.items()}
    assert got == {name: (code, REASON[code]) for name, code in want.items()}


def test_pre_filter_disabled(fw):
    """TestPreFilterDisabled: Filter without PreFilter's state is an error (ErrNotFound)."""
    run = fw.Run((PodTopologySpread, list_args()), fw.Snapshot([nd("n")]))
    ni = run.scheduler.snapshot.node_info_list[0]
    pi = PodInfo(make_pod("p").obj())
    st = run.plugin("PodTopologySpread").filter(CycleState(), pi, ni)
    assert st.code == Code.ERROR
    assert st.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'
    got = run.framework.run_filter(CycleState(), pi, ni)
    assert got is not None and got.code == Code.ERROR


# --- TestPreScoreSkip ------------------------------------------------------------------------


@pytest.mark.parametrize(("pod_", "nodes", "args", "informers"), [
    pytest.param(make_pod("p").obj(), [hn("node-a"), hn("node-b")], list_args(), None,
                 id="the pod doesn't have soft topology spread Constraints"),
    pytest.param(pod(foo="bar", baz="sup").owner("ReplicaSet", "rs2").obj(), [nd("node-a", {"planet": "mars"})],
                 list_args([{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}]),
                 {"replicasets": [rs("rs1", {"matchExpressions": [{"key": "tar", "operator": "Exists"}]})]},
                 id="default constraints and a replicaset that doesn't match"),
])
def test_pre_score_skip(fw, pod_, nodes, args, informers):
    run = fw.Run((PodTopologySpread, args), fw.Snapshot(nodes, informers=informers))
    nis = run.scheduler.snapshot.node_info_list
    assert run.plugin("PodTopologySpread").pre_score(CycleState(), PodInfo(pod_), nis).code == Code.SKIP
    _, _, _, state = run.filter(pod_)
    assert run.framework.run_pre_score(state, PodInfo(pod_), nis).is_success()
    assert "PodTopologySpread" in state.skip_score_plugins
    assert run.score(pod_) == {n["metadata"]["name"]: 0 for n in nodes}


# --- TestPreScoreStateEmptyNodes (the PreScore state) ------------------------------------------

ZONE_HOST_NODES = [nd("node-a", {"zone": "zone1", HOST: "node-a"}), nd("node-b", {"zone": "zone1", HOST: "node-b"}),
                   nd("node-x", {"zone": "zone2", HOST: "node-x"})]
POLICY_SCORE_NODES = [nd("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}),
                      nd("node-b", {"zone": "zone1", "foo": "", HOST: "node-b"}),
                      nd("node-x", {"zone": "zone2", HOST: "node-x"})]
FOO_RS = {"replicasets": [rs("rs1", FOO)]}
ZONES_0 = {"zone1": 0, "zone2": 0}


def w(size: int) -> float:
    return math.log(size + 2)


PRE_SCORE_STATE = [
    pytest.param(sc(sc(pod("foo"), 1, "zone", SA, FOO), 1, HOST, SA, FOO).obj(), ZONE_HOST_NODES, list_args(), None,
                 [(C(1, "zone", FOO), ZONES_0, w(2)), (C(1, HOST, FOO), {}, w(3))], set(),
                 id="normal case"),
    pytest.param(sc(pod("foo"), 1, "zone", SA, NULL).obj(), ZONE_HOST_NODES, list_args(), None,
                 [(C(1, "zone", NULL), ZONES_0, w(2))], set(),
                 id="null selector"),
    pytest.param(sc(sc(pod("foo"), 1, "zone", SA, FOO), 1, HOST, SA, BAR).obj(),
                 [*ZONE_HOST_NODES[:2], nd("node-x", {HOST: "node-x"})], list_args(), None,
                 [(C(1, "zone", FOO), {"zone1": 0}, w(1)), (C(1, HOST, BAR), {}, w(2))], {"node-x"},
                 id="node-x doesn't have label zone"),
    pytest.param(pod(foo="tar", baz="sup").owner("ReplicaSet", "rs1").obj(),
                 [nd("node-a", {HOST: "node-a", TZONE: "mars"}), nd("node-b", {HOST: "node-b", TZONE: "mars"}),
                  nd("node-c", {HOST: "node-c"}), nd("node-d", {HOST: "node-d"})],
                 {"defaultingType": "System"}, FOO_RS,
                 [(C(3, HOST, FOO), {}, w(4)), (C(5, TZONE, FOO), {"mars": 0, "": 0}, w(2))], set(),
                 id="system default constraints and a replicaset"),
    pytest.param(pod(foo="tar", baz="sup").owner("ReplicaSet", "rs1").obj(),
                 [nd("node-a", {"rack": "rack1", HOST: "node-a", "planet": "mars"})],
                 list_args([{"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
                            {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
                            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}]), FOO_RS,
                 [(C(1, HOST, FOO), {}, w(1)), (C(2, "planet", FOO), {"mars": 0}, w(1))], set(),
                 id="default constraints and a replicaset"),
    pytest.param(sc(sc(pod(foo="bar", baz="sup").owner("ReplicaSet", "rs1"), 1, "zone", DNS, BAR),
                    2, "planet", SA, {"matchLabels": {"baz": "sup"}}).obj(),
                 [nd("node-a", {"planet": "mars", "galaxy": "andromeda"})],
                 list_args([{"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA}]), FOO_RS,
                 [(C(2, "planet", {"matchLabels": {"baz": "sup"}}), {"mars": 0}, w(1))], set(),
                 id="default constraints and a replicaset, but pod has constraints"),
    pytest.param(sc(pod("foo").node_selector(foo=""), 1, "zone", SA, BAR).obj(), POLICY_SCORE_NODES, list_args(),
                 None, [(C(1, "zone", BAR), ZONES_0, w(2))], set(),
                 id="NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(sc(pod("foo").node_selector(foo=""), 1, "zone", SA, BAR, aff=IGNORE).obj(), POLICY_SCORE_NODES,
                 list_args(), None, [(C(1, "zone", BAR, aff=IGNORE), ZONES_0, w(2))], set(),
                 id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(sc(pod("foo").node_affinity_in("foo", [""]), 1, "zone", SA, BAR).obj(), POLICY_SCORE_NODES,
                 list_args(), None, [(C(1, "zone", BAR), ZONES_0, w(2))], set(),
                 id="NodeAffinityPolicy honored with nodeAffinity"),
    pytest.param(sc(pod("foo").node_affinity_in("foo", [""]), 1, "zone", SA, BAR, aff=IGNORE).obj(),
                 POLICY_SCORE_NODES, list_args(), None, [(C(1, "zone", BAR, aff=IGNORE), ZONES_0, w(2))], set(),
                 id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(sc(pod("foo"), 1, "zone", SA, BAR, taints=HONOR).obj(),
                 [*POLICY_SCORE_NODES[:2], nd("node-x", {"zone": "zone2", HOST: "node-x"}, tainted=True)],
                 list_args(), None, [(C(1, "zone", BAR, taints=HONOR), ZONES_0, w(2))], set(),
                 id="NodeTaintsPolicy honored"),
    pytest.param(sc(pod("foo"), 1, "zone", SA, BAR).obj(),
                 [*POLICY_SCORE_NODES[:2], nd("node-x", {"zone": "zone2", HOST: "node-x"}, tainted=True)],
                 list_args(), None, [(C(1, "zone", BAR), ZONES_0, w(2))], set(),
                 id="NodeTaintsPolicy ignored"),
]


@pytest.mark.parametrize(("pod_", "nodes", "args", "informers", "want", "ignored"), PRE_SCORE_STATE)
def test_pre_score_state(fw, pod_, nodes, args, informers, want, ignored):
    run = fw.Run((PodTopologySpread, args), fw.Snapshot(nodes, informers=informers))
    _, _, st, state = run.filter(pod_)
    assert st.is_success(), st
    nis = run.scheduler.snapshot.node_info_list
    assert run.framework.run_pre_score(state, PodInfo(pod_), nis).is_success()
    assert "PodTopologySpread" not in state.skip_score_plugins
    s = state.read(PRE_SCORE_STATE_KEY)
    assert got_constraints(s.constraints) == [c for c, _, _ in want]
    assert s.ignored == ignored
    assert s.counts == [counts for _, counts, _ in want]
    assert s.weights == pytest.approx([weight for _, _, weight in want])


# --- TestPodTopologySpreadScore -----------------------------------------------------------------

H4 = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]
HOST_2103 = [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
             pd("p-d1", "node-d", "foo"), pd("p-d2", "node-d", "foo"), pd("p-d3", "node-d", "foo")]
HOST_4321 = [*(pd(f"p-a{i}", "node-a", "foo") for i in range(1, 5)),
             *(pd(f"p-b{i}", "node-b", "foo") for i in range(1, 4)),
             pd("p-c1", "node-c", "foo"), pd("p-c2", "node-c", "foo"), pd("p-d1", "node-d", "foo")]
PODS_4213 = [*(pd(f"p-a{i}", "node-a", "foo") for i in range(1, 5)), pd("p-b1", "node-b", "foo"),
             pd("p-b2", "node-b", "foo"), pd("p-x1", "node-x", "foo"),
             *(pd(f"p-y{i}", "node-y", "foo") for i in range(1, 4))]
ZH = [nd("node-a", {"zone": "zone1", HOST: "node-a"}), nd("node-b", {"zone": "zone1", HOST: "node-b"}),
      nd("node-x", {"zone": "zone2", HOST: "node-x"}), nd("node-y", {"zone": "zone2", HOST: "node-y"})]
ZH_CD = [nd("node-a", {"zone": "zone1", HOST: "node-a"}), nd("node-b", {"zone": "zone1", HOST: "node-b"}),
         nd("node-c", {"zone": "zone2", HOST: "node-c"}), nd("node-d", {"zone": "zone2", HOST: "node-d"})]
NODE_ABC = [nd("node-a", {"node": "node-a", "foo": ""}), nd("node-b", {"node": "node-b", "foo": ""}),
            nd("node-c", {"node": "node-c"})]
NODE_ABC_TAINT = [nd("node-a", {"node": "node-a"}), nd("node-b", {"node": "node-b"}),
                  nd("node-c", {"node": "node-c"}, tainted=True)]
PODS_211 = [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
            pd("p-c1", "node-c", "foo")]
HOST_FOO = sc(pod("foo"), 1, HOST, SA, FOO).obj()
ZONE_FOO_HOST_BAR = sc(sc(pod("foo", "bar"), 1, "zone", SA, FOO), 1, HOST, SA, BAR).obj()

SCORE = [
    pytest.param(HOST_FOO, [], [hn("node-a"), hn("node-b")], [], None, {"node-a": 100, "node-b": 100},
                 id="one constraint on node, no existing pods"),
    pytest.param(HOST_FOO, [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo")],
                 [hn("node-a")], [hn("node-b")], None, {"node-a": 100},
                 id="one constraint on node, only one node is candidate"),
    pytest.param(HOST_FOO, [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo")],
                 [hn("node-a"), hn("node-b")], [], None, {"node-a": 100, "node-b": 100},
                 id="one constraint on node, all nodes have the same number of matching pods"),
    pytest.param(HOST_FOO, HOST_2103, H4, [], None, {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
                 id="one constraint on node, all 4 nodes are candidates"),
    pytest.param(sc(pod("foo"), 1, HOST, SA, NULL).obj(), HOST_2103, H4, [], None,
                 {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
                 id="one constraint on node, null selector"),
    pytest.param(sc(pod("foo"), 2, HOST, SA, FOO).obj(), HOST_2103, H4, [], None,
                 {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
                 id="one constraint on node, all 4 nodes are candidates, maxSkew=2"),
    pytest.param(sc(pod("foo"), 3, HOST, SA, FOO).obj(), HOST_4321, H4, [], None,
                 {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
                 id="one constraint on node, all 4 nodes are candidates, maxSkew=3"),
    pytest.param(pod("foo").obj(), HOST_4321, H4, [], {"services": [svc({"foo": ""})]},
                 {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
                 id="system defaulting, nodes don't have zone, pods match service"),
    pytest.param(HOST_FOO, PODS_4213, [hn("node-a"), hn("node-b"), hn("node-x")], [hn("node-y")], None,
                 {"node-a": 33, "node-b": 83, "node-x": 100},
                 id="one constraint on node, 3 out of 4 nodes are candidates"),
    pytest.param(HOST_FOO, PODS_4213, [hn("node-a"), nd("node-b", {"n": "node-b"}), hn("node-x")], [hn("node-y")],
                 None, {"node-a": 16, "node-b": 0, "node-x": 100},
                 id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key"),
    pytest.param(sc(pod("foo"), 1, "zone", SA, FOO).obj(), PODS_4213, ZH[:3], ZH[3:], None,
                 {"node-a": 75, "node-b": 75, "node-x": 100},
                 id="one constraint on zone, 3 out of 4 nodes are candidates"),
    pytest.param(sc(sc(pod("foo"), 1, "zone", SA, FOO), 1, HOST, SA, FOO).obj(),
                 [pd("p-a1", "node-a", "foo"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
                  pd("p-x1", "node-x", "foo"), pd("p-x2", "node-x", "foo"),
                  *(pd(f"p-y{i}", "node-y", "foo") for i in range(1, 5))],
                 [ZH[0], ZH[2]], [ZH[1], ZH[3]], None, {"node-a": 100, "node-x": 63},
                 id="two Constraints on zone and node, 2 out of 4 nodes are candidates"),
    pytest.param(sc(sc(pod("foo", "bar"), 1, "zone", SA, FOO), 1, "zone", SA, BAR).obj(), TWO_ZONE_PODS,
                 [nd("node-a", {"zone": "zone1"}), nd("node-x", {"zone": "zone2"})],
                 [nd("node-b", {"zone": "zone1"}), nd("node-y", {"zone": "zone2"})], None,
                 {"node-a": 85, "node-x": 100},
                 id="two Constraints on zone, 2 out of 4 nodes are candidates"),
    pytest.param(ZONE_FOO_HOST_BAR,
                 [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo", "bar"), pd("p-y1", "node-y", "foo"),
                  pd("p-y2", "node-y", "bar")], ZH, [], None,
                 {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
                 id="two Constraints on zone and node, with different labelSelectors"),
    pytest.param(ZONE_FOO_HOST_BAR,
                 [pd("p-b1", "node-b", "bar"), pd("p-x1", "node-x", "foo"), pd("p-y1", "node-y", "foo", "bar")],
                 ZH, [], None, {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
                 id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods"),
    pytest.param(ZONE_FOO_HOST_BAR,
                 [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo", "bar"), pd("p-y1", "node-y", "foo"),
                  pd("p-y2", "node-y", "bar")], ZH[:3], ZH[3:], None,
                 {"node-a": 50, "node-b": 25, "node-x": 100},
                 id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are "
                    "candidates"),
    pytest.param(HOST_FOO,
                 [pd("p-a1", "node-a", "foo", ns="ns1"), pd("p-a2", "node-a", "foo"), pd("p-b1", "node-b", "foo"),
                  pd("p-b2", "node-b", "foo")], [hn("node-a"), hn("node-b")], [], None,
                 {"node-a": 100, "node-b": 33},
                 id="existing pods in a different namespace do not count"),
    pytest.param(HOST_FOO, [pd("p-a", "node-a", "foo", terminating=True), pd("p-b", "node-b", "foo")],
                 [hn("node-a"), hn("node-b")], [], None, {"node-a": 100, "node-b": 0},
                 id="terminating Pods should be excluded"),
    pytest.param(sc(pod("foo"), 2, "node", SA, FOO, min_domains=10).obj(), SPREAD_22_1, ABCn, [], None,
                 {"node-a": 75, "node-b": 75, "node-c": 100},
                 id="minDomains has no effect when ScheduleAnyway"),
    pytest.param(sc(pod("foo").node_selector(foo=""), 1, "node", SA, FOO).obj(), PODS_211, NODE_ABC, [], None,
                 {"node-a": 0, "node-b": 33, "node-c": 100},
                 id="NodeAffinityPolicy honoed with labelSelectors"),
    pytest.param(sc(pod("foo").node_selector(foo=""), 1, "node", SA, FOO, aff=IGNORE).obj(), PODS_211, NODE_ABC,
                 [], None, {"node-a": 66, "node-b": 100, "node-c": 100},
                 id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(sc(pod("foo").node_affinity_in("foo", [""]), 1, "node", SA, FOO).obj(), PODS_211, NODE_ABC, [],
                 None, {"node-a": 0, "node-b": 33, "node-c": 100},
                 id="NodeAffinityPolicy honoed with nodeAffinity"),
    pytest.param(sc(pod("foo").node_affinity_in("foo", [""]), 1, "node", SA, FOO, aff=IGNORE).obj(), PODS_211,
                 NODE_ABC, [], None, {"node-a": 66, "node-b": 100, "node-c": 100},
                 id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(sc(pod("foo"), 1, "node", SA, FOO, taints=HONOR).obj(), PODS_211, NODE_ABC_TAINT, [], None,
                 {"node-a": 0, "node-b": 33, "node-c": 100},
                 id="NodeTaintsPolicy honored"),
    pytest.param(sc(pod("foo"), 1, "node", SA, FOO).obj(), PODS_211, NODE_ABC_TAINT, [], None,
                 {"node-a": 66, "node-b": 100, "node-c": 100},
                 id="NodeTaintsPolicy ignored"),
    pytest.param(sc(sc(pod("foo", "bar"), 1, "zone", SA, {}, mlk=["foo"]), 1, HOST, SA, {}, mlk=["bar"]).obj(),
                 [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo", "bar"), pd("p-y1", "node-c", "foo"),
                  pd("p-y2", "node-c", "bar")], ZH_CD, [], None,
                 {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
                 id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty"),
    pytest.param(sc(sc(pod("foo", "bar", "baz"), 1, "zone", SA, FOO), 1, HOST, SA, BAR, mlk=["baz"]).obj(),
                 [pd("p-a1", "node-a", "foo"), pd("p-b1", "node-b", "foo", "bar", "baz"), pd("p-c1", "node-c", "foo"),
                  pd("p-c2", "node-c", "bar"), pd("p-d3", "node-c", "bar", "baz")], ZH_CD, [], None,
                 {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
                 id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"),
]


@pytest.mark.parametrize(("pod_", "existing", "nodes", "failed", "informers", "want"), SCORE)
def test_score(fw, pod_, existing, nodes, failed, informers, want):
    """Upstream scores the candidate `nodes` of a snapshot that also holds the `failed` ones, with
    the System defaulting."""
    cluster = fw.Snapshot([*nodes, *failed], existing, informers=informers)
    got = fw.score_nodes(PodTopologySpread, pod_, cluster, feasible=[n["metadata"]["name"] for n in nodes])
    assert got == want


def test_match_label_keys_on_nil_selector_select_by_those_keys(fw):
    """Not an upstream case: upstream merges matchLabelKeys' pod values into a nil labelSelector
    as a selector of those labels alone (mergeLabelSetWithSelector reads no requirements from
    labels.Nothing()); API validation forbids the combination, the scheduler still defines it."""
    p = sc(pod(foo="a"), 1, "zone", DNS, NULL, mlk=["foo"]).obj()
    run = fw.Run((PodTopologySpread, list_args()), fw.Snapshot(four(), [pd("p-a1", "node-a", foo="a")]))
    _, _, st, state = run.filter(p)
    s = state.read(PRE_FILTER_STATE_KEY)
    assert s.constraints[0].selector == label_selector_from_dict({"matchLabels": {"foo": "a"}})
    assert s.counts == [{"zone1": 1, "zone2": 0}]
