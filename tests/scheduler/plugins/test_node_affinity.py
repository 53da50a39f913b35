"""NodeAffinity (upstream nodeaffinity/node_affinity_test.go)."""

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import Code
from scheduler.plugins.node_affinity import NodeAffinity

UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
MSG = "node(s) didn't match Pod's node affinity/selector"


def _e(key, op, *values):
    d = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


@pytest.mark.parametrize(
    ("pod", "labels", "want"),
    [
        pytest.param(make_pod("p").obj(), {"foo": "bar"}, (Code.SUCCESS, []), id="no-selector-or-affinity"),
        pytest.param(
            make_pod("p").node_selector(foo="bar").obj(),
            {"foo": "bar"},
            (Code.SUCCESS, []),
            id="node-selector-matches",
        ),
        pytest.param(
            make_pod("p").node_selector(foo="bar").obj(),
            {"foo": "baz"},
            (UNRES, [MSG]),
            id="node-selector-mismatch",
        ),
        pytest.param(
            make_pod("p").node_affinity_in("foo", ["bar", "value2"]).obj(),
            {"foo": "bar"},
            (Code.SUCCESS, []),
            id="in-operator-matches",
        ),
        pytest.param(
            make_pod("p")
            .node_affinity_terms({"matchExpressions": [_e("kernel-version", "Gt", "0204")]})
            .obj(),
            {"kernel-version": "0206"},
            (Code.SUCCESS, []),
            id="gt-operator",
        ),
        pytest.param(
            make_pod("p")
            .node_affinity_terms({"matchExpressions": [_e("mem-type", "NotIn", "DDR", "DDR2")]})
            .obj(),
            {"mem-type": "DDR3"},
            (Code.SUCCESS, []),
            id="notin-operator",
        ),
        pytest.param(
            make_pod("p").node_affinity_terms({"matchExpressions": [_e("GPU", "Exists")]}).obj(),
            {"GPU": "NVIDIA-GRID-K1"},
            (Code.SUCCESS, []),
            id="exists-operator",
        ),
        pytest.param(
            make_pod("p")
            .node_affinity_terms({"matchExpressions": [_e("foo", "In", "value1", "value2")]})
            .obj(),
            {"foo": "bar"},
            (UNRES, [MSG]),
            id="affinity-mismatch",
        ),
        pytest.param(
            make_pod("p").node_affinity_terms({}).obj(),
            {"foo": "bar"},
            (UNRES, [MSG]),
            id="empty-term-matches-nothing",
        ),
        pytest.param(
            make_pod("p")
            .node_affinity_terms(
                {"matchExpressions": [_e("foo", "In", "x")]},
                {"matchExpressions": [_e("diffkey", "In", "wrong", "value2")]},
                {"matchExpressions": [_e("foo", "Exists")]},
            )
            .obj(),
            {"foo": "bar"},
            (Code.SUCCESS, []),
            id="terms-ored",
        ),
        pytest.param(
            make_pod("p")
            .node_selector(foo="bar")
            .node_affinity_terms({"matchExpressions": [_e("foo", "In", "bar")]})
            .obj(),
            {"foo": "bar"},
            (Code.SUCCESS, []),
            id="selector-and-affinity-both-satisfied",
        ),
        pytest.param(
            make_pod("p")
            .node_selector(foo="bar")
            .node_affinity_terms({"matchExpressions": [_e("foo", "NotIn", "bar")]})
            .obj(),
            {"foo": "bar"},
            (UNRES, [MSG]),
            id="affinity-fails-selector-matches",
        ),
        pytest.param(
            make_pod("p").node_affinity_terms({"matchFields": [_e("metadata.name", "In", "n1")]}).obj(),
            {},
            (Code.SUCCESS, []),
            id="match-fields-own-name",
        ),
    ],
)
def test_filter(fw, pod, labels, want):
    snap = fw.Snapshot([make_node("n1").labels(labels).obj()])
    statuses, *_ = fw.filter_nodes(NodeAffinity, pod, snap)
    assert fw.codes(statuses)["n1"] == want


@pytest.mark.parametrize(
    ("pod", "want_nodes", "want_code"),
    [
        pytest.param(
            make_pod("p").node_affinity_terms({"matchFields": [_e("metadata.name", "In", "n1")]}).obj(),
            {"n1"},
            Code.SUCCESS,
            id="single-name",
        ),
        pytest.param(
            make_pod("p")
            .node_affinity_terms(
                {"matchFields": [_e("metadata.name", "In", "n1")]},
                {"matchFields": [_e("metadata.name", "In", "n2")]},
            )
            .obj(),
            {"n1", "n2"},
            Code.SUCCESS,
            id="union-of-terms",
        ),
        pytest.param(
            make_pod("p")
            .node_affinity_terms(
                {"matchFields": [_e("metadata.name", "In", "n1")]},
                {"matchExpressions": [_e("foo", "Exists")]},
            )
            .obj(),
            None,
            Code.SUCCESS,
            id="term-without-name-allows-all",
        ),
        pytest.param(
            make_pod("p")
            .node_affinity_terms(
                {"matchFields": [_e("metadata.name", "In", "n1"), _e("metadata.name", "In", "n2")]}
            )
            .obj(),
            None,
            UNRES,
            id="conflicting-names-in-one-term",
        ),
    ],
)
def test_pre_filter_result(fw, pod, want_nodes, want_code):
    snap = fw.Snapshot([make_node("n1").obj(), make_node("n2").obj()])
    statuses, result, st, _ = fw.filter_nodes(NodeAffinity, pod, snap)
    assert st.code == want_code
    if want_code == UNRES:
        assert st.reasons == ["pod affinity terms conflict"]
    else:
        assert (result.node_names if result else None) == want_nodes


def test_pre_filter_skips_without_constraints(fw):
    _, _, st, state = fw.filter_nodes(
        NodeAffinity, make_pod("p").obj(), fw.Snapshot([make_node("n1").obj()])
    )
    assert "NodeAffinity" in state.skip_filter_plugins


def test_added_affinity_enforced(fw):
    pl = (NodeAffinity, (
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [_e("zone", "In", "a")]}]
                }
            }
        }
    ))
    snap = fw.Snapshot([make_node("n1").labels(zone="a").obj(), make_node("n2").labels(zone="b").obj()])
    statuses, *_ = fw.filter_nodes(pl, make_pod("p").node_selector(x="y").obj(), snap)
    assert fw.codes(statuses) == {
        "n1": (UNRES, [MSG]),
        "n2": (UNRES, ["node(s) didn't match scheduler-enforced node affinity"]),
    }


def test_invalid_added_affinity_rejected():
    with pytest.raises(ValueError):
        NodeAffinity.Args.model_validate(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [_e("zone", "Foo", "a")]}]
                    }
                }
            }
        )


AFFINITY1 = make_pod("p").preferred_node_affinity(2, [_e("foo", "In", "bar")]).obj()
AFFINITY2 = (
    make_pod("p")
    .preferred_node_affinity(2, [_e("foo", "In", "bar")])
    .preferred_node_affinity(4, [_e("key", "In", "value")])
    .preferred_node_affinity(5, [_e("foo", "In", "bar"), _e("key", "In", "value"), _e("az", "In", "az1")])
    .obj()
)


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        pytest.param(
            make_pod("p").obj(),
            {"n1": {"foo": "bar"}, "n2": {"key": "value"}},
            {"n1": 0, "n2": 0},
            id="no-preferences-all-zero",
        ),
        pytest.param(
            AFFINITY1,
            {"n1": {"foo": "bar"}, "n2": {"key": "value"}, "n3": {"az": "az1"}},
            {"n1": 100, "n2": 0, "n3": 0},
            id="only-matching-node-scores",
        ),
        pytest.param(
            AFFINITY2,
            {"n1": {"foo": "bar"}, "n5": {"foo": "bar", "key": "value", "az": "az1"}, "n2": {"key": "value"}},
            {"n1": 18, "n5": 100, "n2": 36},
            id="weights-sum-and-normalize",
        ),
    ],
)
def test_score(fw, pod, nodes, want):
    snap = fw.Snapshot([make_node(n).labels(lb).obj() for n, lb in nodes.items()])
    assert fw.score_nodes(NodeAffinity, pod, snap) == want


def test_score_with_added_preferred_affinity(fw):
    pl = (NodeAffinity, (
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 5, "preference": {"matchExpressions": [_e("zone", "In", "a")]}}
                ]
            }
        }
    ))
    snap = fw.Snapshot(
        [make_node("n1").labels(zone="a").obj(), make_node("n2").labels(zone="b", foo="bar").obj()]
    )
    assert fw.score_nodes(pl, AFFINITY1, snap) == {"n1": 100, "n2": 40}
