"""DefaultPreemption (upstream defaultpreemption/default_preemption_test.go and preemption_test.go core cases)."""

import asyncio
import copy

import pytest

from minik3s.api.resources import PODS, PRIORITYCLASSES
from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import Code, Status
from scheduler.framework.runtime import WaitingPod
from scheduler.framework.types import PodInfo
from scheduler.plugins.default_preemption import (
    Candidate,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
    pick_one_node_for_preemption,
)
from scheduler.plugins.node_resources.fit import NodeResourcesFit
from scheduler.plugins.taint_toleration import TaintToleration

LOW, MID, HIGH = 10, 100, 1000


def _node(name, cpu="4"):
    return make_node(name).capacity(cpu=cpu, memory="8Gi").obj()


def _pod(name, node, prio, cpu="2", start="2026-01-01T00:00:00Z", labels=None):
    b = make_pod(name).req(cpu=cpu).priority(prio).node(node).start_time(start)
    if labels:
        b.labels(labels)
    return b.obj()


class PreemptionClient:
    """The real in-process API, recording the writes preemption makes (as upstream's tests record
    a fake clientset's actions): ("patch", resource, namespace, name, body, subresource) and
    ("delete", resource, namespace, name)."""

    def __init__(self, api):
        self.api = api
        self.calls = []

    async def patch(self, res, name, patch, namespace=None, **kw):
        self.calls.append(("patch", res.resource, namespace, name, patch, kw.get("subresource")))
        return await self.api.patch(res, name, patch, namespace, **kw)

    async def delete(self, res, name, namespace=None, **kw):
        self.calls.append(("delete", res.resource, namespace, name))
        return await self.api.delete(res, name, namespace, **kw)


async def _stored(api, pod):
    """`pod` as the API keeps it: created under a PriorityClass of its priority and policy (the
    priority admission plugin computes spec.priority from it), its status (start time, conditions,
    nomination) reported through the status subresource, a terminating pod deleted gracefully."""
    spec = pod["spec"]
    prio, policy = spec.get("priority", 0), spec.get("preemptionPolicy", "PreemptLowerPriority")
    pc = f"prio-{prio}-{policy.lower()}"
    if api.obj(PRIORITYCLASSES, pc) is None:
        await api.create(PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                           "metadata": {"name": pc}, "value": prio, "preemptionPolicy": policy})
    body = copy.deepcopy(pod)
    meta = body["metadata"]
    meta.pop("uid", None)
    terminating = meta.pop("deletionTimestamp", None)
    status = body.pop("status", None) or {}
    body["spec"]["priorityClassName"] = pc
    created = await api.create(PODS, body)
    if status:
        created["status"] = {**(created.get("status") or {}), **status}
        await api.update_status(PODS, created)
    if terminating:
        await api.delete(PODS, meta["name"], meta["namespace"], grace_period_seconds=30)
    return api.obj(PODS, meta["name"], meta["namespace"])


async def _preempt(fw, api, nodes, pods, preemptor, *, pdbs=None, nominated=None, waiting=None, parked=None,
                   plugins=None):
    """Schedule `preemptor` through a real framework holding the Filter plugins and
    DefaultPreemption, over pods stored in the real API: PreFilter/Filter (with nominated pods),
    then the runtime's PostFilter. `waiting`: pod name -> Permit timeouts, parked at Permit (the
    WaitingPods are put into `parked`)."""
    stored = [await _stored(api, p) for p in pods]
    noms = {node: [PodInfo(await _stored(api, p)) for p in ps] for node, ps in (nominated or {}).items()}
    preemptor = await _stored(api, preemptor)
    cluster = fw.Snapshot(nodes, stored, informers={"poddisruptionbudgets": pdbs or []}, nominated=noms)
    client = PreemptionClient(api)
    run = fw.Run([*(plugins or [NodeResourcesFit]), DefaultPreemption], cluster, client=client, clock=api.clock)
    for name, timeouts in (waiting or {}).items():
        pi = PodInfo(next(p for p in stored if p["metadata"]["name"] == name))
        run.waiting_pods[pi.uid] = parked[name] = WaitingPod(pi, timeouts)
    statuses, _, _, state = run.filter(preemptor)
    result, st = await run.framework.run_post_filter(
        state, PodInfo(preemptor), {k: v for k, v in statuses.items() if not v.is_success()}
    )
    # the API calls run in the preemption task the plugin spawned through the scheduler
    while pending := [t for t in asyncio.all_tasks() if t.get_name().startswith("preemption:")]:
        await asyncio.gather(*pending, return_exceptions=True)
    return result, st, client.calls


async def test_preemption_policy_never(fw, real_api):
    preemptor = make_pod("p").req(cpu="3").priority(HIGH).preemption_policy("Never").obj()
    result, st, calls = await _preempt(fw, real_api, [_node("n1")], [_pod("low", "n1", LOW, cpu="2")], preemptor)
    assert (st.code, st.reasons) == (
        Code.UNSCHEDULABLE,
        ["preemption: not eligible due to preemptionPolicy=Never."],
    )
    assert result is None and calls == []


async def test_unresolvable_nodes_are_not_candidates(fw, real_api):
    nodes = [make_node("n1").capacity(cpu="4", memory="8Gi").taints(("k", "v", "NoSchedule")).obj()]
    preemptor = make_pod("p").req(cpu="1").priority(HIGH).obj()
    result, st, calls = await _preempt(
        fw, real_api, nodes, [_pod("low", "n1", LOW)], preemptor, plugins=[TaintToleration, NodeResourcesFit]
    )
    assert st.reasons == ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."]
    assert result.nominated_node_name == "" and calls == []


async def test_no_lower_priority_pods(fw, real_api):
    preemptor = make_pod("p").req(cpu="3").priority(MID).obj()
    nodes = [_node("n1"), _node("n2"), _node("n3")]
    pods = [_pod(f"h{i}", f"n{i}", HIGH) for i in (1, 2, 3)] + [
        _pod(f"m{i}", f"n{i}", MID) for i in (1, 2, 3)
    ]
    result, st, calls = await _preempt(fw, real_api, nodes, pods, preemptor)
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == [
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    ]
    assert result.nominated_node_name == ""


async def test_still_does_not_fit_after_removing_all(fw, real_api):
    preemptor = make_pod("p").req(cpu="5").priority(HIGH).obj()
    result, st, _ = await _preempt(fw, real_api, [_node("n1")], [_pod("low", "n1", LOW)], preemptor)
    assert st.reasons == ["preemption: 0/1 nodes are available: 1 Insufficient cpu."]


async def test_victim_deleted_and_node_nominated(fw, real_api):
    preemptor = make_pod("p").req(cpu="3").priority(HIGH).obj()
    result, st, calls = await _preempt(fw, real_api, [_node("n1")], [_pod("low", "n1", LOW, cpu="3")], preemptor)
    assert st.is_success() and result.nominated_node_name == "n1"
    assert calls == [
        (
            "patch",
            "pods",
            "default",
            "low",
            {
                "status": {
                    "conditions": [
                        {
                            "type": "DisruptionTarget",
                            "status": "True",
                            "reason": "PreemptionByScheduler",
                            "message": "default-scheduler: preempting to accommodate a higher priority pod",
                            "lastTransitionTime": "2026-01-01T00:00:00Z",
                        }
                    ]
                }
            },
            "status",
        ),
        ("delete", "pods", "default", "low"),
    ]
    # what the API made of it: the victim is Terminating (its kubelet has the grace period to stop
    # it) and carries the condition that tells its controllers why
    low = real_api.obj(PODS, "low", "default")
    assert low["metadata"]["deletionTimestamp"] and low["metadata"]["deletionGracePeriodSeconds"] == 30
    assert [(c["type"], c["reason"], c["lastTransitionTime"]) for c in low["status"]["conditions"]] == [
        ("DisruptionTarget", "PreemptionByScheduler", "2026-01-01T00:00:00Z")]


async def test_victims_existing_disruption_condition_keeps_its_transition_time(fw, real_api):
    # upstream UpdatePodCondition: the status stays True, so only reason/message change
    victim = _pod("low", "n1", LOW, cpu="3")
    victim["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                                       "message": "Eviction API: evicting", "lastTransitionTime": "2025-12-31T00:00:00Z"}]
    preemptor = make_pod("p").req(cpu="3").priority(HIGH).obj()
    result, st, calls = await _preempt(fw, real_api, [_node("n1")], [victim], preemptor)
    assert st.is_success() and result.nominated_node_name == "n1"
    (cond,) = real_api.obj(PODS, "low", "default")["status"]["conditions"]
    assert (cond["reason"], cond["lastTransitionTime"]) == ("PreemptionByScheduler", "2025-12-31T00:00:00Z")


async def test_reprieve_keeps_higher_priority_victim(fw, real_api):
    # node has 4 cpu: low (2) + mid (2) running; preemptor needs 2 -> only the lowest must go
    preemptor = make_pod("p").req(cpu="2").priority(HIGH).obj()
    pods = [_pod("low", "n1", LOW), _pod("mid", "n1", MID)]
    result, st, calls = await _preempt(fw, real_api, [_node("n1")], pods, preemptor)
    assert result.nominated_node_name == "n1"
    assert [c[3] for c in calls if c[0] == "delete"] == ["low"]


@pytest.mark.parametrize(
    ("pods", "want"),
    [
        pytest.param(
            [_pod("a", "n1", MID, cpu="4"), _pod("b", "n2", LOW, cpu="4")],
            "n2",
            id="lowest-highest-victim-priority",
        ),
        pytest.param(
            [_pod("a1", "n1", LOW, cpu="2"), _pod("a2", "n1", LOW, cpu="2"), _pod("b", "n2", LOW, cpu="4")],
            "n2",
            id="fewest-victims",
        ),
        pytest.param(
            [
                _pod("a", "n1", LOW, cpu="4", start="2026-01-01T00:00:00Z"),
                _pod("b", "n2", LOW, cpu="4", start="2026-01-02T00:00:00Z"),
            ],
            "n2",
            id="latest-start-time",
        ),
    ],
)
async def test_node_choice(fw, real_api, pods, want):
    preemptor = make_pod("p").req(cpu="3").priority(HIGH).obj()
    result, st, _ = await _preempt(fw, real_api, [_node("n1"), _node("n2")], pods, preemptor)
    assert st.is_success() and result.nominated_node_name == want


async def test_pdb_violation_avoided(fw, real_api):
    pdb = {
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 0},
    }
    pods = [_pod("a", "n1", LOW, cpu="4", labels={"app": "db"}), _pod("b", "n2", MID, cpu="4")]
    preemptor = make_pod("p").req(cpu="3").priority(HIGH).obj()
    result, st, _ = await _preempt(fw, real_api, [_node("n1"), _node("n2")], pods, preemptor, pdbs=[pdb])
    assert result.nominated_node_name == "n2"


async def test_terminating_victim_on_nominated_node_blocks_new_preemption(fw, real_api):
    victim = (
        make_pod("low")
        .req(cpu="3")
        .priority(LOW)
        .node("n1")
        .terminating()
        .condition("DisruptionTarget", reason="PreemptionByScheduler")
        .obj()
    )
    preemptor = make_pod("p").req(cpu="3").priority(HIGH).nominated("n1").obj()
    result, st, calls = await _preempt(fw, real_api, [_node("n1")], [victim], preemptor)
    assert st.reasons == ["preemption: not eligible due to a terminating pod on the nominated node."]
    assert calls == []


async def test_waiting_pod_is_rejected_not_deleted(fw, real_api):
    parked = {}
    preemptor = make_pod("p").req(cpu="3").priority(HIGH).obj()
    result, st, calls = await _preempt(
        fw, real_api, [_node("n1")], [_pod("low", "n1", LOW, cpu="3")], preemptor,
        waiting={"low": {"SomePermit": 30.0}}, parked=parked,
    )
    verdict = await parked["low"].wait()
    assert (verdict.code, verdict.reasons, verdict.plugin) == (Code.UNSCHEDULABLE, ["preempted"], "DefaultPreemption")
    assert calls == []
    assert not real_api.obj(PODS, "low", "default")["metadata"].get("deletionTimestamp")


async def test_lower_priority_nominations_cleared(fw, real_api):
    other = make_pod("other").req(cpu="1").priority(LOW).nominated("n1").obj()
    preemptor = make_pod("p").req(cpu="3").priority(HIGH).obj()
    result, st, calls = await _preempt(
        fw, real_api, [_node("n1")], [_pod("low", "n1", LOW, cpu="3")], preemptor, nominated={"n1": [other]}
    )
    assert ("patch", "pods", "default", "other", {"status": {"nominatedNodeName": None}}, "status") in calls
    assert "nominatedNodeName" not in real_api.obj(PODS, "other", "default")["status"]


def test_pdb_split_spends_budget_in_order():
    pdb = {
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 1},
    }
    pods = [PodInfo(make_pod(n).labels(app="db").obj()) for n in ("a", "b")] + [PodInfo(make_pod("c").obj())]
    violating, ok = filter_pods_with_pdb_violation(pods, [pdb])
    assert [p.name for p in violating] == ["b"] and [p.name for p in ok] == ["a", "c"]


def _cand(name, prios, pdb=0, start="2026-01-01T00:00:00Z"):
    return Candidate(
        name,
        [PodInfo(make_pod(f"{name}-{i}").priority(p).start_time(start).obj()) for i, p in enumerate(prios)],
        pdb,
    )


@pytest.mark.parametrize(
    ("cands", "want"),
    [
        pytest.param([_cand("a", [1], pdb=1), _cand("b", [5])], "b", id="fewest-pdb-violations"),
        pytest.param([_cand("a", [5, 1]), _cand("b", [4, 4])], "b", id="lowest-highest-priority"),
        pytest.param([_cand("a", [3, 3]), _cand("b", [3, 1])], "b", id="smallest-priority-sum"),
        pytest.param([_cand("a", [-5, -5]), _cand("b", [-5])], "b", id="negative-priorities-shifted"),
        pytest.param([_cand("a", [2, 2]), _cand("b", [2])], "b", id="fewest-victims"),
        pytest.param(
            [_cand("a", [2], start="2026-01-01T00:00:00Z"), _cand("b", [2], start="2026-02-01T00:00:00Z")],
            "b",
            id="latest-start-time",
        ),
        pytest.param([_cand("a", [2]), _cand("b", [2])], "a", id="first-on-full-tie"),
    ],
)
def test_pick_one_node(cands, want):
    assert pick_one_node_for_preemption(cands).name == want


def test_args_validation():
    with pytest.raises(ValueError):
        DefaultPreemption.Args.model_validate(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}
        )
    assert DefaultPreemption().calculate_num_candidates(5000) == 500
    assert DefaultPreemption().calculate_num_candidates(50) == 50


def test_select_victims_reports_no_victims():
    pl = DefaultPreemption()
    from scheduler.framework.types import NodeInfo

    node = NodeInfo(_node("n1"))
    victims, n, st = pl.select_victims_on_node(
        CycleState(), PodInfo(make_pod("p").priority(0).obj()), node, []
    )
    assert (victims, n, st.code) == ([], 0, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    assert isinstance(st, Status)


# --- many nodes: the dry run's shortcuts decided over the node arrays --------------------------
# (upstream: a node without a lower-priority pod answers "No preemption victims found for incoming
# pod"; any other node's simulation removes every lower-priority pod and reports the Filter
# failure on what is left, here NodeResourcesFit's; candidates are the nodes where it then fits)


def _counting_fit_calls(monkeypatch):
    calls = []
    full = DefaultPreemption._fit_without_lower

    def counting(self, fit, state, pod, node, lower, memo):
        calls.append(node.name)
        return full(self, fit, state, pod, node, lower, memo)

    monkeypatch.setattr(DefaultPreemption, "_fit_without_lower", counting)
    return calls


async def test_fits_nowhere_message_over_many_nodes(fw, real_api, monkeypatch):
    """The benchmark's shape at small scale: a 9-CPU pod, 4-CPU nodes with lower-priority pods,
    empty nodes, a node holding only a higher-priority pod, a tainted node. NodeResourcesFit runs
    once per distinct allocatable for the nodes every lower-priority pod would leave, not once
    per node, and no node is cloned and simulated."""
    nodes = [_node(f"n{i:02d}") for i in range(30)]
    nodes += [_node(f"e{i}") for i in range(5)]  # no pods
    nodes += [_node("big", cpu="8")]  # 8 CPU: still short of 9
    nodes.append(make_node("t").capacity(cpu="4", memory="8Gi").taints(("k", "v", "NoSchedule")).obj())
    pods = [_pod(f"low{i:02d}-{j}", f"n{i:02d}", LOW, cpu="100m") for i in range(30) for j in range(2)]
    pods += [_pod("lowbig", "big", LOW, cpu="1"), _pod("high", "n00", HIGH, cpu="100m")]
    calls = _counting_fit_calls(monkeypatch)
    simulated = []
    full_select = DefaultPreemption.select_victims_on_node
    monkeypatch.setattr(DefaultPreemption, "select_victims_on_node",
                        lambda self, *a, **kw: simulated.append(a[2].name) or full_select(self, *a, **kw))
    preemptor = make_pod("big-pod").req(cpu="9").priority(MID).obj()
    result, st, calls_api = await _preempt(fw, real_api, nodes, pods, preemptor,
                                           plugins=[TaintToleration, NodeResourcesFit])
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == [
        "preemption: 0/37 nodes are available: 1 Preemption is not helpful for scheduling, "
        "31 Insufficient cpu, 5 No preemption victims found for incoming pod."
    ]
    assert result.nominated_node_name == "" and calls_api == []
    # n00 keeps its higher-priority pod (its own call); n01..n29 share one 4-CPU allocatable, big has 8
    assert len(calls) == 3 and {"n00", "big"} < set(calls)
    assert simulated == []


async def test_fits_after_preemption_on_some_nodes(fw, real_api):
    """Most nodes cannot hold the pod even when emptied; two larger nodes can, after evicting their
    lower-priority pods: the one with the lower-priority victims is nominated and only its
    victims are preempted."""
    nodes = [_node(f"n{i:02d}") for i in range(40)] + [_node("b1", cpu="12"), _node("b2", cpu="12")]
    pods = [_pod(f"low{i:02d}", f"n{i:02d}", LOW, cpu="1") for i in range(40)]
    pods += [_pod("b1-a", "b1", LOW, cpu="2"), _pod("b1-b", "b1", LOW, cpu="6")]
    pods += [_pod("b2-a", "b2", MID, cpu="6"), _pod("b2-b", "b2", MID, cpu="6")]
    preemptor = make_pod("p").req(cpu="9").priority(HIGH).obj()
    result, st, calls = await _preempt(fw, real_api, nodes, pods, preemptor)
    assert st.is_success()
    assert result.nominated_node_name == "b1"
    # 9 of 12 CPU: the 2-CPU pod may stay (the reprieve keeps it), the 6-CPU one goes
    assert [c[3] for c in calls if c[0] == "delete"] == ["b1-b"]


async def test_mixed_priorities_nominations_and_sizes(fw, real_api):
    """Mixed nodes: some hold a pod at the preemptor's priority (not a victim, so the node keeps
    its requests), one has a higher-priority pod nominated to it (the dry run filters it with
    that pod), one is larger: the only place the pod fits after preemption is `fit`, where only
    the lower-priority pod goes."""
    nodes = [_node(f"n{i}") for i in range(12)] + [_node("fit", cpu="6"), _node("nom", cpu="6")]
    pods = [_pod(f"low{i}", f"n{i}", LOW, cpu="1") for i in range(12)]
    pods += [_pod(f"same{i}", f"n{i}", HIGH, cpu="1") for i in range(0, 12, 3)]
    pods += [_pod("fit-low", "fit", LOW, cpu="3"), _pod("nom-low", "nom", LOW, cpu="3")]
    nominated = {"nom": [make_pod("other").req(cpu="2").priority(HIGH).obj()]}
    preemptor = make_pod("p").req(cpu="5").priority(HIGH).obj()
    result, st, calls = await _preempt(fw, real_api, nodes, pods, preemptor, nominated=nominated)
    assert st.is_success() and result.nominated_node_name == "fit"
    assert [c[3] for c in calls if c[0] == "delete"] == ["fit-low"]


async def test_fits_nowhere_mixed_reasons(fw, real_api):
    """Nothing fits even after preemption, for every reason at once: nodes whose pods would all
    go, nodes keeping a pod of the preemptor's priority, an empty node, a node whose nominated
    higher-priority pod keeps the room, a tainted node (not a candidate)."""
    nodes = [_node(f"n{i}") for i in range(6)] + [_node("e0"), _node("nom", cpu="6")]
    nodes.append(make_node("t").capacity(cpu="8", memory="8Gi").taints(("k", "v", "NoSchedule")).obj())
    pods = [_pod(f"low{i}", f"n{i}", LOW, cpu="1") for i in range(6)]
    pods += [_pod("same0", "n0", HIGH, cpu="1"), _pod("same3", "n3", HIGH, cpu="1"), _pod("nom-low", "nom", LOW, cpu="3")]
    nominated = {"nom": [make_pod("other").req(cpu="2").priority(HIGH).obj()]}
    preemptor = make_pod("p").req(cpu="5").priority(HIGH).obj()
    result, st, calls = await _preempt(fw, real_api, nodes, pods, preemptor, nominated=nominated,
                                       plugins=[TaintToleration, NodeResourcesFit])
    assert st.code == Code.UNSCHEDULABLE
    assert st.reasons == [
        "preemption: 0/9 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling, 7 Insufficient cpu."
    ]
    assert result.nominated_node_name == "" and calls == []
