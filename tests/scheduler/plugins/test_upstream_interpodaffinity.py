"""Upstream's InterPodAffinity tables (pkg/scheduler/framework/plugins/interpodaffinity:
filtering_test.go and scoring_test.go), driven through the real scheduler framework (conftest).

Upstream's pods mostly live in the "" namespace; here that is "default" (the builders' default),
so a term naming "" names "default". Namespaces a namespaceSelector reads come from a namespace
lister (`informers={"namespaces": ...}`), as upstream's SetupPluginWithInformers supplies them.
Existing pods get distinct names (the cache keys pods by uid; upstream's are mostly unnamed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code
from scheduler.framework.types import PodInfo
from scheduler.plugins.inter_pod_affinity import InterPodAffinity

NAME = "InterPodAffinity"
STATE_KEY = "PreFilterInterPodAffinity"

OK = (Code.SUCCESS, [])
AFF = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) didn't match pod affinity rules"])
ANTI = (Code.UNSCHEDULABLE, ["node(s) didn't match pod anti-affinity rules"])
EXISTING = (Code.UNSCHEDULABLE, ["node(s) didn't satisfy existing pods anti-affinity rules"])
SKIP = "skip"

BAD_VALUE_MSG = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid '
    "label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
    "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


# --- selector helpers ----------------------------------------------------------------------------

def _in(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def _not_in(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "NotIn", "values": list(values)}


def _exists(key: str) -> dict[str, Any]:
    return {"key": key, "operator": "Exists"}


def _not_exists(key: str) -> dict[str, Any]:
    return {"key": key, "operator": "DoesNotExist"}


def sel(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(exprs)}


TEAM1 = sel(_in("team", "team1"))

# upstream scoring_test.go's namespace lister contents
NAMESPACES = [
    {"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
    {"metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}},
]


def node(name: str, **labels: str) -> dict[str, Any]:
    return make_node(name).labels(labels).obj()


def run_filter(fw: Any, pod: dict[str, Any], pods: list[dict[str, Any]], nodes: list[dict[str, Any]],
               namespaces: list[dict[str, Any]]) -> tuple[Any, dict[str, Any], CycleState]:
    """(PreFilter outcome: SKIP, None for success, or (code, reasons)), per-node Filter statuses."""
    cluster = fw.Snapshot(nodes, pods, informers={"namespaces": namespaces})
    statuses, _, st, state = fw.filter_nodes(InterPodAffinity, pod, cluster)
    if NAME in state.skip_filter_plugins:
        pre: Any = SKIP
    elif not st.is_success():
        pre = (st.code, list(st.reasons))
    else:
        pre = None
    return pre, fw.codes(statuses), state


# =================================================================================================
# filtering_test.go: TestRequiredAffinitySingleNode
# =================================================================================================

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
SEC_V2 = ("securityscan", "value2")
AV_V2 = ("antivirusscan", "value2")


def _existing_default() -> dict[str, Any]:
    return make_pod("existing").labels(POD_LABEL).node("node1").obj()


def _single_cases() -> list[Any]:
    p = make_pod
    ex = _existing_default
    return [
        pytest.param(p("p").obj(), [], SKIP, None,
                     id="A pod that has no required pod affinity scheduling rules can schedule onto a node "
                        "with no existing pods"),
        pytest.param(p("p").labels(POD_LABEL2).pod_affinity("region", sel(_in("service", *SEC_V2))).obj(),
                     [ex()], None, OK,
                     id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
                        "operator that matches the existing pod"),
        pytest.param(p("p").labels(POD_LABEL2).pod_affinity("region", sel(_not_in("service", "securityscan3",
                                                                                     "value3"))).obj(),
                     [ex()], None, OK,
                     id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity "
                        "using not in operator in labelSelector that matches the existing pod"),
        pytest.param(p("p").labels(POD_LABEL2).pod_affinity("", sel(_in("service", *SEC_V2)),
                                                            namespaces=["DiffNameSpace"]).obj(),
                     [p("existing", "ns").labels(POD_LABEL).node("node1").obj()], None, AFF,
                     id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace"),
        pytest.param(p("p").labels(POD_LABEL).pod_affinity("", sel(_in("service", *AV_V2))).obj(),
                     [ex()], None, AFF,
                     id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod"),
        pytest.param(p("p").labels(POD_LABEL2)
                     .pod_affinity("region", sel(_exists("service"), _not_exists("wrongkey")))
                     .pod_affinity("region", sel(_in("service", "securityscan"), _not_in("service", "WrongValue")))
                     .obj(),
                     [ex()], None, OK,
                     id="satisfies the PodAffinity with different label Operators in multiple "
                        "RequiredDuringSchedulingIgnoredDuringExecution "),
        pytest.param(p("p").labels(POD_LABEL2)
                     .pod_affinity("region", sel(_exists("service"), _not_exists("wrongkey")))
                     .pod_affinity("region", sel(_in("service", "securityscan2"), _not_in("service", "WrongValue")))
                     .obj(),
                     [ex()], None, AFF,
                     id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
                        "schedule onto the node because one of the matchExpression item don't match."),
        pytest.param(p("p").labels(POD_LABEL2).pod_affinity("region", sel(_in("service", *SEC_V2)))
                     .pod_anti_affinity("node", sel(_in("service", *AV_V2))).obj(),
                     [ex()], None, OK,
                     id="satisfies the PodAffinity and PodAntiAffinity with the existing pod"),
        pytest.param(p("p").labels(POD_LABEL2).pod_affinity("region", sel(_in("service", *SEC_V2)))
                     .pod_anti_affinity("node", sel(_in("service", *AV_V2))).obj(),
                     [p("existing").node("node1").labels(POD_LABEL)
                      .pod_anti_affinity("node", sel(_in("service", *AV_V2))).obj()],
                     None, OK,
                     id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the "
                        "existing pod"),
        pytest.param(p("p").labels(POD_LABEL2).pod_affinity("region", sel(_in("service", *SEC_V2)))
                     .pod_anti_affinity("zone", sel(_in("service", *SEC_V2))).obj(),
                     [ex()], None, ANTI,
                     id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod"),
        pytest.param(p("p").labels(POD_LABEL).pod_affinity("region", sel(_in("service", *SEC_V2)))
                     .pod_anti_affinity("node", sel(_in("service", *AV_V2))).obj(),
                     [p("existing").labels(POD_LABEL).node("node1")
                      .pod_anti_affinity("zone", sel(_in("service", *SEC_V2))).obj()],
                     None, EXISTING,
                     id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity "
                        "symmetry with the existing pod"),
        pytest.param(p("p").labels(POD_LABEL).pod_affinity("region", sel(_not_in("service", *SEC_V2))).obj(),
                     [p("existing").labels(POD_LABEL).node("node2").obj()], None, AFF,
                     id="pod matches its own Label in PodAffinity and that matches the existing pod Labels"),
        pytest.param(p("p").labels(POD_LABEL).obj(),
                     [p("existing").node("node1").labels(POD_LABEL)
                      .pod_anti_affinity("zone", sel(_in("service", *SEC_V2))).obj()],
                     None, EXISTING,
                     id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
                        "constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod"),
        pytest.param(p("p").labels(POD_LABEL).obj(),
                     [p("existing").node("node1").labels(POD_LABEL)
                      .pod_anti_affinity("zone", sel(_not_in("service", *SEC_V2))).obj()],
                     SKIP, None,
                     id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
                        "constraints. satisfy PodAntiAffinity symmetry with the existing pod"),
        pytest.param(p("p").labels(POD_LABEL).pod_anti_affinity("region", sel(_exists("service")))
                     .pod_anti_affinity("region", sel(_exists("security"))).obj(),
                     [p("existing").node("node1").labels(POD_LABEL2)
                      .pod_anti_affinity("zone", sel(_exists("security"))).obj()],
                     None, ANTI,
                     id="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
                        "symmetry with incoming pod"),
        pytest.param(p("p").labels(POD_LABEL).pod_anti_affinity("zone", sel(_exists("service")))
                     .pod_anti_affinity("zone", sel(_exists("security"))).obj(),
                     [p("existing").node("node1").labels(POD_LABEL2)
                      .pod_anti_affinity("zone", sel(_exists("security"))).obj()],
                     None, ANTI,
                     id="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each "
                        "other on AffinityTerms"),
        pytest.param(p("p").labels(POD_LABEL2).pod_anti_affinity("zone", sel(_exists("security"))).obj(),
                     [p("existing").node("node1").labels(POD_LABEL)
                      .pod_anti_affinity("zone", sel(_exists("service")))
                      .pod_anti_affinity("zone", sel(_exists("security"))).obj()],
                     None, EXISTING,
                     id="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each "
                        "other on AffinityTerms"),
        pytest.param(p("p").labels({"abc": "", "xyz": ""}).pod_anti_affinity("zone", sel(_exists("abc")))
                     .pod_anti_affinity("zone", sel(_exists("def"))).obj(),
                     [p("existing").node("node1").labels({"def": "", "xyz": ""})
                      .pod_anti_affinity("zone", sel(_exists("abc")))
                      .pod_anti_affinity("zone", sel(_exists("def"))).obj()],
                     None, ANTI,
                     id="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each "
                        "other on AffinityTerms"),
        pytest.param(p("p").labels({"def": "", "xyz": ""}).pod_anti_affinity("zone", sel(_exists("abc")))
                     .pod_anti_affinity("zone", sel(_exists("def"))).obj(),
                     [p("existing").node("node1").labels({"abc": "", "xyz": ""})
                      .pod_anti_affinity("zone", sel(_exists("abc")))
                      .pod_anti_affinity("zone", sel(_exists("def"))).obj()],
                     None, ANTI,
                     id="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each "
                        "other on AffinityTerms"),
        pytest.param(p("p").labels(POD_LABEL).pod_affinity("region", sel(_in("service", "{{.bad-value.}}")))
                     .pod_affinity("node", sel(_in("service", *AV_V2))).obj(),
                     [], (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [BAD_VALUE_MSG]), None,
                     id="PodAffinity fails PreFilter with an invalid affinity label syntax"),
        pytest.param(p("p").labels(POD_LABEL).pod_affinity("region", sel(_in("service", "foo")))
                     .pod_affinity("node", sel(_in("service", "{{.bad-value.}}"))).obj(),
                     [], (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [BAD_VALUE_MSG]), None,
                     id="PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax"),
        pytest.param(p("p").labels(POD_LABEL2).pod_affinity("region", sel(_in("service", *SEC_V2)),
                                                            namespace_selector=TEAM1).obj(),
                     [p("existing", "subteam1.team1").labels(POD_LABEL).node("node1").obj()], None, OK,
                     id="affinity with NamespaceSelector"),
        pytest.param(p("p").labels(POD_LABEL2).pod_affinity("region", sel(_in("service", *SEC_V2)),
                                                            namespace_selector=TEAM1).obj(),
                     [p("existing", "subteam1.team2").labels(POD_LABEL).node("node1").obj()], None, AFF,
                     id="affinity with non-matching NamespaceSelector"),
        pytest.param(p("p", "subteam1.team1").labels(POD_LABEL2)
                     .pod_anti_affinity("zone", sel(_in("service", *SEC_V2)), namespace_selector=TEAM1).obj(),
                     [p("existing", "subteam2.team1").labels(POD_LABEL).node("node1").obj()], None, ANTI,
                     id="anti-affinity with matching NamespaceSelector"),
        pytest.param(p("p", "subteam1.team1").labels(POD_LABEL2)
                     .pod_anti_affinity("zone", sel(_in("service", *SEC_V2)), namespace_selector={}).obj(),
                     [p("existing", "subteam2.team1").labels(POD_LABEL).node("node1").obj()], None, ANTI,
                     id="anti-affinity with matching all NamespaceSelector"),
        pytest.param(p("p", "subteam1.team1").labels(POD_LABEL2)
                     .pod_anti_affinity("zone", sel(_in("service", *SEC_V2)), namespace_selector=TEAM1).obj(),
                     [p("existing", "subteam1.team2").labels(POD_LABEL).node("node1").obj()], None, OK,
                     id="anti-affinity with non-matching NamespaceSelector"),
    ]


@pytest.mark.parametrize(("pod", "pods", "want_pre", "want_filter"), _single_cases())
def test_required_affinity_single_node(fw, pod, pods, want_pre, want_filter):
    pre, statuses, _ = run_filter(fw, pod, pods, [node("node1", region="r1", zone="z11")], NAMESPACES)
    assert pre == want_pre
    if pre is None:
        assert statuses["node1"] == want_filter


def test_invalid_label_syntax_fails_pre_filter_with_parse_reason(fw):
    """The two invalid-syntax cases above, minus the selector message's field path (shared code)."""
    pod = make_pod("p").labels(POD_LABEL).pod_affinity("region", sel(_in("service", "foo"))) \
        .pod_affinity("node", sel(_in("service", "{{.bad-value.}}"))).obj()
    pre, _, _ = run_filter(fw, pod, [], [node("node1", region="r1", zone="z11")], NAMESPACES)
    code, reasons = pre
    assert code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert len(reasons) == 1 and reasons[0].startswith("parsing pod: requiredAffinityTerms: values[0][")
    assert reasons[0].endswith(BAD_VALUE_MSG.split("]: ", 1)[1])


# =================================================================================================
# filtering_test.go: TestRequiredAffinityMultipleNodes
# =================================================================================================

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def _abc(name: str, region: str, zone: str | None = None) -> dict[str, Any]:
    labels = {"region": region, "hostname": name}
    if zone is not None:
        labels["zone"] = zone
    return node(name, **labels)


def _multi_cases() -> list[Any]:
    p = make_pod
    china3 = [node("nodeA", **RG_CHINA), node("nodeB", **RG_CHINA_AZ1), node("nodeC", **RG_INDIA)]
    r1z1z1 = [_abc("nodeA", "r1", "z1"), _abc("nodeB", "r1", "z1")]
    r1z1z2 = [_abc("nodeA", "r1", "z1"), _abc("nodeB", "r1", "z2")]
    return [
        pytest.param(p("p").pod_affinity("region", sel(_in("foo", "bar"))).obj(),
                     [p("p1").node("node1").labels(foo="bar").obj()],
                     [node("node1", **RG_CHINA), node("node2", **RG_CHINA_AZ1), node("node3", **RG_INDIA)],
                     None, [OK, OK, AFF],
                     id="A pod can be scheduled onto all the nodes that have the same topology key & label value "
                        "with one of them has an existing pod that matches the affinity rules"),
        pytest.param(p("p").labels(foo="bar", service="securityscan")
                     .pod_affinity("zone", sel(_in("foo", "bar")))
                     .pod_affinity("zone", sel(_in("service", "securityscan"))).obj(),
                     [p("p1").node("nodeA").labels(foo="bar").obj()],
                     [node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")],
                     None, [OK, OK],
                     id="The affinity rule is to schedule all of the pods of this collection to the same zone. The "
                        "first pod of the collection should not be blocked from being scheduled onto any node, "
                        "even there's no existing pod that matches the rule anywhere."),
        pytest.param(p("p").labels(foo="bar", service="securityscan")
                     .pod_affinity("zone", sel(_in("foo", "bar")))
                     .pod_affinity("zone", sel(_in("service", "securityscan"))).obj(),
                     [p("p1").node("nodeA").labels(foo="bar").obj()],
                     [node("nodeA", zoneLabel="az1", hostname="h1"), node("nodeB", zoneLabel="az2", hostname="h2")],
                     None, [AFF, AFF],
                     id="The first pod of the collection can only be scheduled on nodes labelled with the requested "
                        "topology keys"),
        pytest.param(p("p").pod_anti_affinity("region", sel(_in("foo", "abc"))).obj(),
                     [p("e1").node("nodeA").labels(foo="abc").obj()],
                     [_abc("nodeA", "r1"), _abc("nodeB", "r1")],
                     None, [ANTI, ANTI],
                     id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
                        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB."),
        pytest.param(p("p").pod_anti_affinity("region", sel(_in("foo", "abc")))
                     .pod_anti_affinity("zone", sel(_in("service", "securityscan"))).obj(),
                     [p("e1").node("nodeA").labels(foo="abc", service="securityscan").obj()],
                     [_abc("nodeA", "r1", "z1"), _abc("nodeB", "r1", "z2")],
                     None, [ANTI, ANTI],
                     id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity "
                        "rule matches a pod."),
        pytest.param(p("p").pod_anti_affinity("region", sel(_in("foo", "abc"))).obj(),
                     [p("e1").node("nodeA").labels(foo="abc").obj()],
                     china3, None, [ANTI, ANTI, OK],
                     id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
                        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but "
                        "can be scheduled onto nodeC"),
        pytest.param(p("p", "NS1").labels(foo="123").pod_anti_affinity("region", sel(_in("foo", "bar"))).obj(),
                     [p("e1", "NS1").node("nodeA").labels(foo="bar").obj(),
                      p("e2", "NS2").node("nodeC").pod_anti_affinity("region", sel(_in("foo", "123"))).obj()],
                     china3, None, [ANTI, ANTI, OK],
                     id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
                        "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but "
                        "can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity "
                        "rule but in different namespace)"),
        pytest.param(p("p").labels(foo="").obj(),
                     [p("e1").node("nodeA").pod_anti_affinity("invalid-node-label", sel(_exists("foo"))).obj()],
                     r1z1z1, SKIP, [OK, OK],
                     id="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
                        "labelSelector of the term is firstly checked, and then topologyKey of the term is also "
                        "checked"),
        pytest.param(p("p").node("nodeA").pod_anti_affinity("invalid-node-label", sel(_exists("foo"))).obj(),
                     [p("e1").node("nodeA").labels(foo="").obj()],
                     r1z1z1, None, [OK, OK],
                     id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if "
                        "topologyKey matches"),
        pytest.param(p("p").labels(foo="", bar="").obj(),
                     [p("e1").node("nodeA").pod_anti_affinity("zone", sel(_exists("foo"))).obj(),
                      p("e2").node("nodeA").pod_anti_affinity("region", sel(_exists("bar"))).obj()],
                     r1z1z2, None, [EXISTING, EXISTING],
                     id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it "
                        "violates each existingPod's terms on all nodes"),
        pytest.param(p("p").pod_anti_affinity("zone", sel(_exists("foo")))
                     .pod_anti_affinity("region", sel(_exists("bar"))).obj(),
                     [p("e1").node("nodeA").labels(foo="").obj(), p("e2").node("nodeB").labels(bar="").obj()],
                     r1z1z2, None, [ANTI, ANTI],
                     id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at "
                        "least violates one anti-affinity rule of existingPod"),
        pytest.param(p("p").labels(foo="", bar="").obj(),
                     [p("e1").node("nodeA").pod_anti_affinity("invalid-node-label", sel(_exists("foo")))
                      .pod_anti_affinity("zone", sel(_exists("bar"))).obj()],
                     r1z1z2, None, [EXISTING, OK],
                     id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, "
                        "it's counted as a single term match - case when one term has invalid topologyKey"),
        pytest.param(p("p").pod_anti_affinity("invalid-node-label", sel(_exists("foo")))
                     .pod_anti_affinity("zone", sel(_exists("bar"))).obj(),
                     [p("podA").node("nodeA").labels(foo="", bar="").obj()],
                     r1z1z2, None, [ANTI, OK],
                     id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, "
                        "it's counted as a single term match - case when one term has invalid topologyKey"),
        pytest.param(p("p").labels(foo="", bar="").obj(),
                     [p("e1").node("nodeA").pod_anti_affinity("region", sel(_exists("foo")))
                      .pod_anti_affinity("zone", sel(_exists("bar"))).obj()],
                     r1z1z2, None, [EXISTING, EXISTING],
                     id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, "
                        "it's counted as a single term match - case when all terms have valid topologyKey"),
        pytest.param(p("p").pod_anti_affinity("region", sel(_exists("foo")))
                     .pod_anti_affinity("zone", sel(_exists("bar"))).obj(),
                     [p("e1").node("nodeA").labels(foo="", bar="").obj()],
                     r1z1z2, None, [ANTI, ANTI],
                     id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, "
                        "it's counted as a single term match - case when all terms have valid topologyKey"),
        pytest.param(p("p").labels(foo="", bar="").obj(),
                     [p("e1").node("nodeA").pod_anti_affinity("zone", sel(_exists("foo")))
                      .pod_anti_affinity("zone", sel(_exists("labelA"))).obj(),
                      p("e2").node("nodeB").pod_anti_affinity("zone", sel(_exists("bar")))
                      .pod_anti_affinity("zone", sel(_exists("labelB"))).obj()],
                     [*r1z1z2, _abc("nodeC", "r1", "z3")], None, [EXISTING, EXISTING, OK],
                     id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
                        "anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC"),
        pytest.param(p("p").pod_affinity("region", sel(_exists("foo")))
                     .pod_affinity("zone", sel(_exists("bar"))).obj(),
                     [p("pod1").labels(foo="", bar="").node("nodeA").obj()],
                     r1z1z1, None, [OK, OK],
                     id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if "
                        "all topologyKeys match"),
        pytest.param(p("p").pod_affinity("region", sel(_exists("foo")))
                     .pod_affinity("zone", sel(_exists("bar"))).obj(),
                     [p("pod1").node("nodeA").labels(foo="").obj(), p("pod2").node("nodeB").labels(bar="").obj()],
                     r1z1z2, None, [AFF, AFF],
                     id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if "
                        "all topologyKeys match, and the match logic should be satisfied on the same pod"),
    ]


# upstream lists the test's node order; ids keep upstream's names, which repeat once (pytest suffixes)
@pytest.mark.parametrize(("pod", "pods", "nodes", "want_pre", "want_filters"), _multi_cases())
def test_required_affinity_multiple_nodes(fw, pod, pods, nodes, want_pre, want_filters):
    pre, statuses, _ = run_filter(fw, pod, pods, nodes, [{"metadata": {"name": "NS1"}}])
    assert pre == want_pre
    if pre != SKIP:
        assert [statuses[n["metadata"]["name"]] for n in nodes] == want_filters


# =================================================================================================
# filtering_test.go: TestPreFilterDisabled
# =================================================================================================

def test_pre_filter_disabled(fw):
    run = fw.Run(InterPodAffinity, fw.Snapshot([make_node("n").obj()]))
    st = run.plugin(NAME).filter(CycleState(), PodInfo(make_pod("p").obj()), run.scheduler.snapshot.get("n"))
    assert (st.code, list(st.reasons)) == (
        Code.ERROR, ['error reading "PreFilterInterPodAffinity" from cycleState: not found'])


# =================================================================================================
# filtering_test.go: TestPreFilterStateAddRemovePod
# =================================================================================================

ANTI_FOO_BAR = [("region", sel(_in("foo", "bar")))]
ANTI_COMPLEX = [("region", sel(_in("foo", "bar", "buzz"))), ("zone", sel(_not_in("service", "bar", "security", "test")))]
AFF_COMPLEX = ANTI_COMPLEX


def _with(b: Any, affinity: Sequence[Any] = (), anti: Sequence[Any] = ()) -> Any:
    for tk, s in affinity:
        b = b.pod_affinity(tk, s)
    for tk, s in anti:
        b = b.pod_anti_affinity(tk, s)
    return b


ADD_REMOVE_NODES = [node("nodeA", region="r1", zone="z11"), node("nodeB", region="r1", zone="z12"),
                    node("nodeC", region="r2", zone="z21")]


def _add_remove_cases() -> list[Any]:
    p = make_pod
    return [
        pytest.param(
            _with(p("pending").labels(foo="bar"), anti=ANTI_FOO_BAR).obj(),
            [p("p1").labels(foo="bar").node("nodeA").obj(), _with(p("p2").node("nodeC"), anti=ANTI_FOO_BAR).obj()],
            _with(p("addedPod").labels(foo="bar").node("nodeB"), anti=ANTI_FOO_BAR).obj(),
            {("region", "r1"): 2}, {},
            id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod"),
        pytest.param(
            _with(p("pending").labels(foo="bar"), anti=ANTI_COMPLEX).obj(),
            [p("p1").labels(foo="bar").node("nodeA").obj(), _with(p("p2").node("nodeC"), anti=ANTI_FOO_BAR).obj()],
            _with(p("addedPod").labels(foo="bar").node("nodeA"), anti=ANTI_COMPLEX).obj(),
            {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {},
            id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod (2)"),
        pytest.param(
            _with(p("pending").labels(foo="bar"), affinity=AFF_COMPLEX).obj(),
            [p("p1").labels(foo="bar").node("nodeA").obj(),
             _with(p("p2").node("nodeC"), affinity=AFF_COMPLEX, anti=ANTI_FOO_BAR).obj()],
            _with(p("addedPod").labels(foo="bar").node("nodeA"), anti=ANTI_COMPLEX).obj(),
            {}, {("region", "r1"): 2, ("zone", "z11"): 2},
            id="preFilterState matching pod affinity and anti-affinity are updated correctly after adding and "
               "removing a pod"),
    ]


def _counts(state: CycleState) -> tuple[dict[Any, int], dict[Any, int], dict[Any, int]]:
    s = state.get(STATE_KEY)
    if s is None:
        return {}, {}, {}
    return dict(s.existing_anti), dict(s.affinity_counts), dict(s.anti_counts)


@pytest.mark.parametrize(("pending", "existing", "added", "want_anti", "want_aff"), _add_remove_cases())
def test_pre_filter_state_add_remove_pod(fw, pending, existing, added, want_anti, want_aff):
    # the state PreFilter builds when the added pod is already there
    all_run = fw.Run(InterPodAffinity, fw.Snapshot(ADD_REMOVE_NODES, [*existing, added]))
    _, _, st, all_state = all_run.filter(pending)
    assert st.is_success() and NAME not in all_state.skip_filter_plugins
    want_all = _counts(all_state)

    run = fw.Run(InterPodAffinity, fw.Snapshot(ADD_REMOVE_NODES, existing))
    _, _, st, state = run.filter(pending)
    assert st.is_success() and NAME not in state.skip_filter_plugins
    original = _counts(state)
    rt = run.framework
    ni = run.scheduler.snapshot.get(added["spec"]["nodeName"])
    assert rt.run_pre_filter_extension_add_pod(state, PodInfo(pending), PodInfo(added), ni).is_success()
    existing_anti, aff, anti = _counts(state)
    assert anti == want_anti
    assert aff == want_aff
    assert (existing_anti, aff, anti) == want_all
    assert rt.run_pre_filter_extension_remove_pod(state, PodInfo(pending), PodInfo(added), ni).is_success()
    assert _counts(state) == original


# TestPreFilterStateClone: skipped (Go-internal deep-copy of the state struct; no observable effect)


# =================================================================================================
# filtering_test.go: TestGetTPMapMatchingIncomingAffinityAntiAffinity (observed through PreFilter's
# state: the counts for the incoming pod's affinity and anti-affinity terms)
# =================================================================================================

def _normal(*labels: str) -> dict[str, Any]:
    return make_pod("normal").node("nodeA").labels({lbl: "" for lbl in labels}).obj()


def _tp_cases() -> list[Any]:
    p = make_pod
    host = {("hostname", "nodeA"): 1}
    return [
        pytest.param([], p("aaa-normal").obj(), {}, {}, id="nil test"),
        pytest.param([_normal("aaa")], p("aaa-normal").obj(), {}, {},
                     id="incoming pod without affinity/anti-affinity causes a no-op"),
        pytest.param([_normal("bbb")],
                     p("aaa-anti").pod_affinity("hostname", sel(_exists("aaa")))
                     .pod_anti_affinity("hostname", sel(_exists("aaa"))).obj(), {}, {},
                     id="no pod has label that violates incoming pod's affinity and anti-affinity"),
        pytest.param([_normal("aaa")],
                     p("affi-antiaffi").pod_affinity("hostname", sel(_exists("aaa")))
                     .pod_anti_affinity("hostname", sel(_exists("aaa"))).obj(), host, host,
                     id="existing pod matches incoming pod's affinity and anti-affinity - single term case"),
        pytest.param([_normal("aaa", "bbb")],
                     p("affi-antiaffi").pod_affinity("hostname", sel(_exists("aaa")))
                     .pod_affinity("hostname", sel(_exists("bbb")))
                     .pod_anti_affinity("hostname", sel(_exists("aaa"))).obj(),
                     {("hostname", "nodeA"): 2}, host,
                     id="existing pod matches incoming pod's affinity and anti-affinity - multiple terms case"),
        pytest.param([_normal("aaa")],
                     p("affi-antiaffi").pod_affinity("hostname", sel(_exists("aaa")))
                     .pod_affinity("hostname", sel(_exists("bbb")))
                     .pod_anti_affinity("hostname", sel(_exists("aaa")))
                     .pod_anti_affinity("hostname", sel(_exists("bbb"))).obj(), {}, host,
                     id="existing pod not match incoming pod's affinity but matches anti-affinity"),
        pytest.param([_normal("aaa", "bbb")],
                     p("anaffi-antiaffiti").pod_affinity("hostname", sel(_exists("aaa")))
                     .pod_affinity("hostname", sel(_exists("ccc")))
                     .pod_anti_affinity("hostname", sel(_exists("aaa")))
                     .pod_anti_affinity("hostname", sel(_exists("ccc"))).obj(), {}, host,
                     id="incoming pod's anti-affinity has more than one term - existing pod violates partial term "
                        "- case 1"),
        pytest.param([_normal("bbb")],
                     p("affi-antiaffi").pod_affinity("hostname", sel(_exists("aaa")))
                     .pod_affinity("hostname", sel(_exists("bbb")))
                     .pod_anti_affinity("hostname", sel(_exists("aaa")))
                     .pod_anti_affinity("hostname", sel(_exists("bbb"))).obj(), {}, host,
                     id="incoming pod's anti-affinity has more than one term - existing pod violates partial term "
                        "- case 2"),
    ]


@pytest.mark.parametrize(("existing", "pod", "want_aff", "want_anti"), _tp_cases())
def test_get_tp_map_matching_incoming_affinity_anti_affinity(fw, existing, pod, want_aff, want_anti):
    _, _, state = run_filter(fw, pod, existing, [node("nodeA", hostname="nodeA")], [])
    _, aff, anti = _counts(state)
    assert aff == want_aff
    assert anti == want_anti


# =================================================================================================
# scoring_test.go: TestPreferredAffinity
# =================================================================================================

S1 = {"security": "S1"}
S2 = {"security": "S2"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}

# (kind, weight, topologyKey, selector, extra kwargs); kind "aff"/"anti", weight None = required
STAY_S1_REGION = [("aff", 5, "region", sel(_in("security", "S1")), {})]
STAY_S2_REGION = [("aff", 6, "region", sel(_in("security", "S2")), {})]
AFFINITY3 = [("aff", 8, "region", sel(_not_in("security", "S1"), _in("security", "S2")), {}),
             ("aff", 2, "region", sel(_exists("security"), _not_exists("wrongkey")), {})]
HARD_AFFINITY = [("aff", None, "region", sel(_in("security", "S1", "value2")), {}),
                 ("aff", None, "region", sel(_exists("security"), _not_exists("wrongkey")), {})]
AWAY_S1_AZ = [("anti", 5, "az", sel(_in("security", "S1")), {})]
AWAY_S2_AZ = [("anti", 5, "az", sel(_in("security", "S2")), {})]
STAY_S1_REGION_AWAY_S2_AZ = [("aff", 8, "region", sel(_in("security", "S1")), {}),
                             ("anti", 5, "az", sel(_in("security", "S2")), {})]
NS_SEL = {"namespaces": ["subteam2.team2"], "namespace_selector": TEAM1}
AFFINITY_NS_SELECTOR = [("aff", 5, "region", sel(_in("security", "S1")), NS_SEL)]
ANTI_AFFINITY_NS_SELECTOR = [("anti", 5, "region", sel(_in("security", "S1")), NS_SEL)]
INVALID_AFFINITY = [("aff", 8, "region", sel(_in("security", "{{.bad-value.}}")), {})]
INVALID_ANTI_AFFINITY = [("anti", 5, "az", sel(_in("security", "{{.bad-value.}}")), {})]


def spod(name: str, ns: str = "default", *, labels: dict[str, str] | None = None,
         node_name: str | None = None, terms: Sequence[Any] = ()) -> dict[str, Any]:
    b = make_pod(name, ns)
    if labels:
        b = b.labels(labels)
    if node_name:
        b = b.node(node_name)
    for kind, weight, tk, s, kw in terms:
        b = (b.pod_affinity if kind == "aff" else b.pod_anti_affinity)(tk, s, weight=weight, **kw)
    return b.obj()


def _placed(*specs: tuple[Any, ...]) -> list[dict[str, Any]]:
    """(node, labels, terms[, namespace]) -> existing pods e0, e1, ..."""
    out = []
    for i, spec in enumerate(specs):
        node_name, labels, terms = spec[:3]
        ns = spec[3] if len(spec) > 3 else "default"
        out.append(spod(f"e{i}", ns, labels=labels, node_name=node_name, terms=terms))
    return out


def _n(*pairs: tuple[str, dict[str, str]]) -> list[dict[str, Any]]:
    return [node(name, **labels) for name, labels in pairs]


def _preferred_cases() -> list[Any]:
    china_india_az1 = _n(("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", AZ1))
    five = _n(("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", RG_CHINA), ("node4", RG_CHINA),
              ("node5", RG_INDIA))
    ns_pods = [("node1", S1, [], "subteam1.team1"), ("node1", S1, [], "subteam1.team1")]
    return [
        pytest.param(spod("p", labels=S1), [], china_india_az1, False, SKIP, None,
                     id="all nodes are same priority as Affinity is nil"),
        pytest.param(spod("p", labels=S1, terms=STAY_S1_REGION),
                     _placed(("node1", S1, []), ("node2", S2, []), ("node3", S1, [])),
                     china_india_az1, False, None, [100, 0, 0],
                     id="Affinity: pod that matches topology key & pods in nodes will get high score comparing to "
                        "otherswhich doesn't match either pods in nodes or in topology key"),
        pytest.param(spod("p", terms=STAY_S1_REGION), _placed(("node1", S1, [])),
                     _n(("node1", RG_CHINA), ("node2", RG_CHINA_AZ1), ("node3", RG_INDIA)), False, None,
                     [100, 100, 0],
                     id="All the nodes that have the same topology key & label value with one of them has an "
                        "existing pod that match the affinity rules, have the same score"),
        pytest.param(spod("p", labels=S1, terms=STAY_S2_REGION),
                     _placed(("node1", S2, []), ("node1", S2, []), ("node2", S2, []), ("node3", S2, []),
                             ("node4", S2, []), ("node5", S2, [])),
                     five, False, None, [100, 0, 100, 100, 0],
                     id="Affinity: nodes in one region has more matching pods comparing to other region, so the "
                        "region which has more matches will get high score"),
        pytest.param(spod("p", labels=S1, terms=AFFINITY3),
                     _placed(("node1", S1, []), ("node2", S2, []), ("node3", S1, [])),
                     china_india_az1, False, None, [20, 100, 0],
                     id="Affinity: different Label operators and values for pod affinity scheduling preference, "
                        "including some match failures "),
        pytest.param(spod("p", labels=S2),
                     _placed(("node1", S1, STAY_S1_REGION), ("node2", S2, STAY_S2_REGION)),
                     china_india_az1, False, None, [0, 100, 0],
                     id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in "
                        "pod affinity symmetry"),
        pytest.param(spod("p", "subteam1.team1", labels=S1),
                     _placed(("node1", S1, AFFINITY_NS_SELECTOR), ("node2", S2, STAY_S2_REGION)),
                     china_india_az1, False, None, [100, 0, 0],
                     id="Affinity symmetry with namespace selector"),
        pytest.param(spod("p", "subteam1.team1", labels=S1),
                     _placed(("node1", S1, ANTI_AFFINITY_NS_SELECTOR), ("node2", S2, STAY_S2_REGION)),
                     china_india_az1, False, None, [0, 100, 100],
                     id="AntiAffinity symmetry with namespace selector"),
        pytest.param(spod("p", labels=S1),
                     _placed(("node1", S1, HARD_AFFINITY), ("node2", S2, HARD_AFFINITY)),
                     china_india_az1, False, None, [100, 100, 0],
                     id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
                        "affinity symmetry"),
        pytest.param(spod("p", labels=S1, terms=AWAY_S1_AZ),
                     _placed(("node1", S1, []), ("node2", S2, [])),
                     _n(("node1", AZ1), ("node2", RG_CHINA)), False, None, [0, 100],
                     id="Anti Affinity: pod that does not match existing pods in node will get high score "),
        pytest.param(spod("p", labels=S1, terms=AWAY_S1_AZ),
                     _placed(("node1", S1, []), ("node2", S1, [])),
                     _n(("node1", AZ1), ("node2", RG_CHINA)), False, None, [0, 100],
                     id="Anti Affinity: pod that does not match topology key & match the pods in nodes will get "
                        "higher score comparing to others "),
        pytest.param(spod("p", labels=S1, terms=AWAY_S1_AZ),
                     _placed(("node1", S1, []), ("node1", S1, []), ("node2", S2, [])),
                     _n(("node1", AZ1), ("node2", RG_INDIA)), False, None, [0, 100],
                     id="Anti Affinity: one node has more matching pods comparing to other node, so the node which "
                        "has more unmatches will get high score"),
        pytest.param(spod("p", labels=S2),
                     _placed(("node1", S1, AWAY_S2_AZ), ("node2", S2, AWAY_S1_AZ)),
                     _n(("node1", AZ1), ("node2", AZ2)), False, None, [0, 100],
                     id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get "
                        "high score"),
        pytest.param(spod("p", labels=S1, terms=STAY_S1_REGION_AWAY_S2_AZ),
                     _placed(("node1", S1, []), ("node2", S1, [])),
                     _n(("node1", RG_CHINA), ("node2", AZ1)), False, None, [100, 0],
                     id="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution "
                        "in both pod affinity & anti affinity"),
        pytest.param(spod("p", labels=S1, terms=STAY_S1_REGION_AWAY_S2_AZ),
                     _placed(("node1", S1, []), ("node1", S1, []), ("node2", S1, []), ("node3", S1, []),
                             ("node3", S1, []), ("node4", S1, []), ("node5", S1, [])),
                     _n(("node1", RG_CHINA_AZ1), ("node2", RG_INDIA), ("node3", RG_CHINA), ("node4", RG_CHINA),
                        ("node5", RG_INDIA)), False, None, [100, 0, 100, 100, 0],
                     id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
                        "schedule and existing pods have the same labels"),
        pytest.param(spod("p", labels=S1, terms=STAY_S1_REGION_AWAY_S2_AZ),
                     _placed(("node1", S1, []), ("node2", S2, []), ("node3", {}, STAY_S1_REGION_AWAY_S2_AZ),
                             ("node4", {}, AWAY_S1_AZ)),
                     _n(("node1", RG_CHINA), ("node2", AZ1), ("node3", RG_INDIA), ("node4", AZ2)), False, None,
                     [100, 0, 100, 0],
                     id="Affinity and Anti Affinity and symmetry: considered only "
                        "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & "
                        "symmetry"),
        pytest.param(spod("p", labels=S1),
                     _placed(("node1", S1, []), ("node2", {}, STAY_S1_REGION_AWAY_S2_AZ)),
                     _n(("node1", RG_CHINA), ("node2", RG_CHINA)), False, None, [0, 0],
                     id="Avoid panic when partial nodes in a topology don't have pods with affinity"),
        pytest.param(spod("p", terms=INVALID_AFFINITY), [], _n(("node1", RG_CHINA), ("node2", RG_CHINA)), False,
                     (Code.ERROR, 'Invalid value: "{{.bad-value.}}"'), None,
                     id="invalid Affinity fails PreScore"),
        pytest.param(spod("p", terms=INVALID_ANTI_AFFINITY), [], _n(("node1", RG_CHINA), ("node2", RG_CHINA)),
                     False, (Code.ERROR, 'Invalid value: "{{.bad-value.}}"'), None,
                     id="invalid AntiAffinity fails PreScore"),
        pytest.param(spod("p", "subteam1.team1", labels=S1, terms=AFFINITY_NS_SELECTOR),
                     _placed(*ns_pods, ("node1", S1, [], "subteam1.team2"), ("node2", S1, [], "subteam2.team1")),
                     _n(("node1", RG_CHINA), ("node2", RG_INDIA)), False, None, [100, 0],
                     id="Affinity with pods matching NamespaceSelector"),
        pytest.param(spod("p", "subteam1.team1", labels=S1, terms=AFFINITY_NS_SELECTOR),
                     _placed(*ns_pods, ("node1", S1, [], "subteam2.team2"), ("node2", S1, [], "subteam2.team1")),
                     _n(("node1", RG_CHINA), ("node2", RG_INDIA)), False, None, [100, 0],
                     id="Affinity with pods matching both NamespaceSelector and Namespaces fields"),
        pytest.param(spod("p", "subteam1.team1", labels=S1, terms=ANTI_AFFINITY_NS_SELECTOR),
                     _placed(*ns_pods, ("node1", S1, [], "subteam1.team2"), ("node2", S1, [], "subteam2.team1")),
                     _n(("node1", RG_CHINA), ("node2", RG_INDIA)), False, None, [0, 100],
                     id="Affinity with pods matching NamespaceSelector (anti-affinity)"),
        pytest.param(spod("p", "subteam1.team1", labels=S1, terms=ANTI_AFFINITY_NS_SELECTOR),
                     _placed(*ns_pods, ("node1", S1, [], "subteam2.team2"), ("node2", S1, [], "subteam2.team1")),
                     _n(("node1", RG_CHINA), ("node2", RG_INDIA)), False, None, [0, 100],
                     id="Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)"),
        pytest.param(spod("p", labels=S2),
                     _placed(("node1", S1, STAY_S1_REGION_AWAY_S2_AZ), ("node2", S2, STAY_S2_REGION)),
                     _n(("node1", RG_CHINA), ("node2", RG_INDIA)), True, SKIP, None,
                     id="Ignore preferred terms of existing pods"),
        pytest.param(spod("p", labels=S2),
                     _placed(("node1", S1, STAY_S1_REGION_AWAY_S2_AZ), ("node2", S2, STAY_S2_REGION)),
                     _n(("node1", RG_CHINA), ("node2", RG_INDIA)), False, None, [0, 100],
                     id="Do not ignore preferred terms of existing pods"),
        pytest.param(spod("p", labels=S2), [], [], False, SKIP, None, id="No nodes to score"),
    ]


def _pre_score(fw: Any, pl: Any, pod: dict[str, Any], cluster: Any) -> Any:
    """PreScore alone over all the snapshot's nodes, as upstream's test calls it."""
    run = fw.Run(pl, cluster)
    return run.plugin(NAME).pre_score(CycleState(), PodInfo(pod), list(run.scheduler.snapshot.node_info_list))


def _check_scores(fw: Any, pl: Any, pod: dict[str, Any], pods: list[dict[str, Any]],
                  nodes: list[dict[str, Any]], want_status: Any, want_scores: list[int] | None) -> None:
    cluster = fw.Snapshot(nodes, pods, informers={"namespaces": NAMESPACES})
    st = _pre_score(fw, pl, pod, cluster)
    if want_status == SKIP:
        assert st.code == Code.SKIP
        return
    if want_status is not None:
        code, fragment = want_status
        assert st.code == code
        assert fragment in st.message()
        return
    assert st.is_success(), st
    got = fw.score_nodes(pl, pod, cluster)
    assert [got[n["metadata"]["name"]] for n in nodes] == want_scores


@pytest.mark.parametrize(("pod", "pods", "nodes", "ignore", "want_status", "want_scores"), _preferred_cases())
def test_preferred_affinity(fw, pod, pods, nodes, ignore, want_status, want_scores):
    pl = (InterPodAffinity, {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore})
    _check_scores(fw, pl, pod, pods, nodes, want_status, want_scores)


# =================================================================================================
# scoring_test.go: TestPreferredAffinityWithHardPodAffinitySymmetricWeight
# =================================================================================================

SERVICE_S1 = {"service": "S1"}
HARD_POD_AFFINITY = [("aff", None, "region", sel(_in("service", "S1")),
                      {"namespaces": ["default", "subteam2.team2"], "namespace_selector": TEAM1})]


def _hard_weight_cases() -> list[Any]:
    nodes = _n(("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", AZ1))
    pods = _placed(("node1", {}, HARD_POD_AFFINITY), ("node2", {}, HARD_POD_AFFINITY))
    return [
        pytest.param(spod("p", labels=SERVICE_S1), pods, nodes, 1, None, [100, 100, 0], id="with default weight"),
        pytest.param(spod("p", labels=SERVICE_S1), pods, nodes, 0, SKIP, None, id="with zero weight"),
        pytest.param(spod("p", "subteam1.team2", labels=SERVICE_S1), pods, nodes, 1, SKIP, None,
                     id="with no matching namespace"),
        pytest.param(spod("p", "subteam1.team1", labels=SERVICE_S1), pods, nodes, 1, None, [100, 100, 0],
                     id="with matching NamespaceSelector"),
        pytest.param(spod("p", "subteam2.team2", labels=SERVICE_S1), pods, nodes, 1, None, [100, 100, 0],
                     id="with matching Namespaces"),
    ]


@pytest.mark.parametrize(("pod", "pods", "nodes", "weight", "want_status", "want_scores"), _hard_weight_cases())
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(fw, pod, pods, nodes, weight, want_status,
                                                                     want_scores):
    pl = (InterPodAffinity, {"hardPodAffinityWeight": weight})
    _check_scores(fw, pl, pod, pods, nodes, want_status, want_scores)
