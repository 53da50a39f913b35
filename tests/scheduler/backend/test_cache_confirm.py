"""The cache's confirmation of an assumed pod and its updates of bound pods, on the real API.

When the informer delivers the bound pod, the cache swaps it in for the assumed one (upstream
cache.AddPod). If the pod's spec, labels, name and namespace are what the scheduler assumed, the
parsed fields (requests, affinity terms, host ports) are the assumed PodInfo's; otherwise the pod
is parsed again. Either way the cache holds the stored object and what the plugins see matches it.
"""

from __future__ import annotations

from typing import Any

from minik3s.api.resources import PODS
from minik3s.testing.builders import make_node, make_pod
from scheduler.framework.interface import PreBindPlugin, Status
from scheduler.framework.types import PodInfo


class Relabel(PreBindPlugin):
    """Patches the pod's `app` label through the API during its binding cycle (a user's label
    change racing the bind), so the bound pod differs from the assumed one."""

    NAME = "Relabel"

    async def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status:
        assert self.handle is not None
        await self.handle.client.patch(PODS, pod.name, {"metadata": {"labels": {"app": "new"}}}, pod.namespace,
                                       patch_type="strategic")
        return Status.success()


def _affinity_values(pi: PodInfo) -> list[Any]:
    """The `app` values the pod's preferred affinity term selects (matchLabelKeys merges them in)."""
    [w] = pi.preferred_affinity_terms
    return [e["values"] for e in w.term.selector["matchExpressions"] if e["key"] == "app"]


async def _bind_one(s: Any, api: Any) -> PodInfo:
    """One scheduling cycle; returns the assumed PodInfo, then lets the bind reach the cache."""
    await s.schedule_one()
    [uid] = [u for u in s.cache._pods if s.cache.is_assumed(u)]
    assumed = s.cache.get_pod(uid)
    assert assumed is not None
    await s.wait_for_bindings()
    await s.writer.flush()
    await api.settle()
    return assumed


def _web() -> Any:
    return (make_pod("web").labels(app="old").req(cpu="1", memory="1Gi")
            .pod_affinity("kubernetes.io/hostname", {"tier": "db"}, weight=10, match_label_keys=["app"]))


async def test_bound_pod_as_assumed_reuses_the_parse(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="4", memory="8Gi").obj(), _web().obj())
    assumed = await _bind_one(s, real_api)
    stored = env.pod("web")
    pi = s.cache.get_pod(stored["metadata"]["uid"])
    assert pi is not None and pi is not assumed and not s.cache.is_assumed(pi.uid)
    # the cache holds the bound pod as stored, the plugins' memo starts empty
    assert pi.pod["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    assert pi.pod["spec"]["nodeName"] == "n1" and pi.node_name == "n1"
    assert pi._extra is None
    # the parse is the assumed one's, shared
    assert pi.requests is assumed.requests and pi.preferred_affinity_terms is assumed.preferred_affinity_terms
    ni = s.cache.get_node_info("n1")
    assert [p.name for p in ni.pods] == ["web"] and ni.pods[0] is pi
    assert (ni.requested.milli_cpu, ni.requested.memory) == (1000, 1 << 30)
    assert ni.pods_with_affinity == [pi]
    assert _affinity_values(pi) == [["old"]]


async def test_bound_pod_changed_since_assumed_is_parsed_again(real_api, env, make_scheduler, base_config,
                                                              base_registry):
    base_config["profiles"][0]["plugins"]["multiPoint"]["enabled"].append({"name": "Relabel"})
    s = make_scheduler(base_config, registry={**base_registry, "Relabel": Relabel})
    await env.add(make_node("n1").capacity(cpu="4", memory="8Gi").obj(), _web().obj())
    assumed = await _bind_one(s, real_api)
    assert _affinity_values(assumed) == [["old"]]
    stored = env.pod("web")
    assert stored["metadata"]["labels"] == {"app": "new"} and stored["spec"]["nodeName"] == "n1"
    pi = s.cache.get_pod(stored["metadata"]["uid"])
    assert pi is not None and not s.cache.is_assumed(pi.uid)
    assert pi.pod["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    # labels changed: parsed again, the term merges the new label value
    assert pi.labels == {"app": "new"} and _affinity_values(pi) == [["new"]]
    assert pi.preferred_affinity_terms is not assumed.preferred_affinity_terms
    ni = s.cache.get_node_info("n1")
    assert ni.pods == [pi] and ni.pods_with_affinity == [pi]
    assert (ni.requested.milli_cpu, ni.requested.memory) == (1000, 1 << 30)


async def test_bound_pod_updates_keep_or_redo_the_parse(real_api, env, make_scheduler):
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="4", memory="8Gi").obj(), _web().node("n1").obj())
    uid = env.uid("web")
    first = s.cache.get_pod(uid)
    assert first is not None and not s.cache.is_assumed(uid)
    # a status update (as the kubelet writes): same spec and labels, the parse is kept
    await env.patch_pod("web", {"status": {"phase": "Running"}}, subresource="status")
    second = s.cache.get_pod(uid)
    assert second is not None and second is not first
    assert second.pod["status"]["phase"] == "Running"
    assert second.requests is first.requests and _affinity_values(second) == [["old"]]
    # a label change: parsed again
    await env.patch_pod("web", {"metadata": {"labels": {"app": "other"}}})
    third = s.cache.get_pod(uid)
    assert third is not None and third.labels == {"app": "other"} and _affinity_values(third) == [["other"]]
    ni = s.cache.get_node_info("n1")
    assert ni.pods == [third] and ni.pods_with_affinity == [third]
    assert ni.requested.milli_cpu == 1000 and ni.non_zero_requested.milli_cpu == 1000
