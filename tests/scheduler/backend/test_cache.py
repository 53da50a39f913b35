"""Cache + snapshot (upstream cache_test.go style): incremental NodeInfo, assumed pods,
image states, generation-based snapshot updates."""

from __future__ import annotations

import pytest

from minik3s.testing.builders import make_node, make_pod
from scheduler.backend.cache import Cache
from scheduler.backend.snapshot import Snapshot
from scheduler.framework.types import PodInfo


def assumed(name: str, node: str, cpu: str = "1") -> PodInfo:
    return PodInfo(make_pod(name).req(cpu=cpu).node(node).obj())


@pytest.fixture
def cache() -> Cache:
    c = Cache()
    for n in ("a", "b", "c"):
        c.add_node(make_node(n).capacity(cpu="4").obj())
    return c


def test_assume_then_confirm_by_informer(cache):
    pi = assumed("p", "a")
    cache.assume_pod(pi)
    assert cache.is_assumed(pi.uid)
    assert cache.get_node_info("a").requested.milli_cpu == 1000
    cache.finish_binding(pi)
    cache.add_pod(make_pod("p").req(cpu="1").node("a").obj())
    assert not cache.is_assumed(pi.uid)
    assert cache.get_node_info("a").requested.milli_cpu == 1000
    assert len(cache.get_node_info("a").pods) == 1


def test_forget_rolls_back_the_assumption(cache):
    pi = assumed("p", "b", "2")
    cache.assume_pod(pi)
    cache.forget_pod(pi)
    assert cache.get_node_info("b").requested.milli_cpu == 0
    assert cache.pod_count() == 0
    with pytest.raises(ValueError):
        cache.assume_pod(pi) or cache.assume_pod(pi)


def test_pod_landing_on_other_node_than_assumed_moves(cache):
    cache.assume_pod(assumed("p", "a"))
    cache.add_pod(make_pod("p").req(cpu="1").node("b").obj())
    assert cache.get_node_info("a").pods == [] and cache.get_node_info("b").pods[0].name == "p"


def test_update_and_remove_pod(cache):
    cache.add_pod(make_pod("p").req(cpu="1").node("c").obj())
    cache.update_pod(None, make_pod("p").req(cpu="3").node("c").obj())
    assert cache.get_node_info("c").requested.milli_cpu == 3000
    # terminating pods keep counting until removed
    cache.update_pod(None, make_pod("p").req(cpu="3").node("c").terminating().obj())
    assert cache.get_node_info("c").requested.milli_cpu == 3000
    cache.remove_pod(make_pod("p").node("c").obj())
    assert cache.get_node_info("c").requested.milli_cpu == 0


def test_pod_before_its_node_is_kept_and_snapshot_skips_placeholder():
    c = Cache()
    c.add_pod(make_pod("p").req(cpu="1").node("late").obj())
    snap = Snapshot()
    c.update_snapshot(snap)
    assert snap.num_nodes() == 0
    c.add_node(make_node("late").capacity(cpu="2").obj())
    c.update_snapshot(snap)
    assert snap.get("late").requested.milli_cpu == 1000


def test_snapshot_copies_only_changed_nodes_in_place(cache):
    snap = Snapshot()
    cache.update_snapshot(snap)
    assert [n.name for n in snap.node_infos()] == ["a", "b", "c"]
    a_obj, b_obj = snap.get("a"), snap.get("b")
    b_pods_list = b_obj.pods
    cache.add_pod(make_pod("p").req(cpu="1").node("a").obj())
    cache.update_snapshot(snap)
    # same NodeInfo objects (list stays valid), a refreshed, b untouched
    assert snap.get("a") is a_obj and snap.get("b") is b_obj
    assert a_obj.requested.milli_cpu == 1000 and b_obj.pods is b_pods_list
    # the snapshot is isolated from later cache changes until the next update
    cache.add_pod(make_pod("q").req(cpu="1").node("a").obj())
    assert a_obj.requested.milli_cpu == 1000
    cache.update_snapshot(snap)
    assert a_obj.requested.milli_cpu == 2000


def test_snapshot_tracks_node_add_remove_and_affinity_lists(cache):
    snap = Snapshot()
    cache.update_snapshot(snap)
    cache.add_node(make_node("d").obj())
    cache.remove_node(make_node("b").obj())
    cache.add_pod(make_pod("aff").node("c").pod_anti_affinity("zone", {"matchLabels": {"x": "y"}}).obj())
    cache.update_snapshot(snap)
    assert [n.name for n in snap.node_infos()] == ["a", "c", "d"]
    assert [n.name for n in snap.have_pods_with_affinity()] == ["c"]
    assert [n.name for n in snap.have_pods_with_required_anti_affinity()] == ["c"]
    cache.remove_pod(make_pod("aff").node("c").obj())
    cache.update_snapshot(snap)
    assert snap.have_pods_with_affinity() == [] and snap.have_pods_with_required_anti_affinity() == []


def test_image_states_count_nodes_across_cluster():
    c = Cache()
    c.add_node(make_node("a").images((["nginx:1", "docker.io/nginx:1"], 100), ("redis", 50)).obj())
    c.add_node(make_node("b").images(("nginx:1", 100),).obj())
    assert c.image_num_nodes("nginx:1") == 2 and c.image_num_nodes("redis") == 1
    ni = c.get_node_info("a")
    assert ni.image_states["nginx:1"].num_nodes == 2 and ni.image_states["nginx:1"].size == 100
    c.remove_node(make_node("b").obj())
    assert ni.image_states["nginx:1"].num_nodes == 1
    c.update_node(None, make_node("a").obj())
    assert c.image_num_nodes("nginx:1") == 0 and c.get_node_info("a").image_states == {}
