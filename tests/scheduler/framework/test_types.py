"""PodInfo.on_node (the assumed pod of a scheduling cycle) copies every parsed field and only
moves the copy onto the node."""

from __future__ import annotations

from minik3s.testing.builders import make_pod
from scheduler.framework.types import PodInfo


def test_on_node_copies_every_field_and_leaves_the_original_alone() -> None:
    pod = make_pod("web").req(cpu="250m", memory="64Mi").labels(app="web").priority(7).obj()
    pi = PodInfo(pod)
    pi._extra = {"gang": (None,)}
    out = pi.on_node("n1")
    assert out.node_name == "n1" and out.pod["spec"]["nodeName"] == "n1"
    assert "nodeName" not in pod["spec"] and pi.node_name == "" and pi.pod is pod
    for slot in PodInfo.__slots__:
        if slot not in ("pod", "node_name"):
            assert getattr(out, slot) is getattr(pi, slot), slot
    assert {k: v for k, v in out.pod.items() if k != "spec"} == {k: v for k, v in pod.items() if k != "spec"}


def test_sharing_carries_every_slot_but_the_pod() -> None:
    """The one copy both the assume path (on_node) and the cache's confirm (reparsed) use: a
    slot added to PodInfo and forgotten there fails here."""
    pod = make_pod("web").req(cpu="250m").labels(app="web").node("n2").obj()
    pi = PodInfo(pod)
    pi._extra = {"memo": 1}
    newer = {**pod, "status": {"phase": "Running"}}
    out = pi.sharing(newer)
    assert out.pod is newer
    for slot in PodInfo.__slots__:
        if slot != "pod":
            assert getattr(out, slot) is getattr(pi, slot), slot


def test_clone_into_copies_every_slot_and_owns_what_the_cache_mutates() -> None:
    """The snapshot refresh copies a changed NodeInfo into the snapshot's object in place
    (clone_into): every slot equal to the live one (a slot added to NodeInfo and forgotten there
    fails here); the pod lists, ports and requested sums are the copy's own, so the cache adding a
    pod to the live NodeInfo afterwards leaves the snapshot as it was."""
    from minik3s.testing.builders import make_node
    from scheduler.framework.types import NodeInfo

    live = NodeInfo(make_node("n1").capacity(cpu="4", memory="8Gi").labels(zone="a").obj())
    live.add_pod(PodInfo(make_pod("a").req(cpu="1").node("n1").host_port(8080).obj()))
    snap = NodeInfo(make_node("n1").capacity(cpu="1").obj())
    live.clone_into(snap)
    for slot in NodeInfo.__slots__:
        assert getattr(snap, slot) == getattr(live, slot), slot
    own = ("pods", "pods_with_affinity", "pods_with_required_anti_affinity", "used_ports", "requested",
           "non_zero_requested")
    for slot in own:
        assert getattr(snap, slot) is not getattr(live, slot), slot
    before = (len(snap.pods), snap.requested.milli_cpu, dict(snap.used_ports), snap.generation)
    live.add_pod(PodInfo(make_pod("b").req(cpu="2").node("n1").host_port(9090).obj()))
    assert (len(snap.pods), snap.requested.milli_cpu, dict(snap.used_ports), snap.generation) == before
    assert len(live.pods) == 2 and live.requested.milli_cpu == 3000
