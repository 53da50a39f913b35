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
