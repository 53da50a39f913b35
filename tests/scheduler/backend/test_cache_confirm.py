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


class _PatchDuringBind(PreBindPlugin):
    """Patches the pod through the API during its binding cycle with `PATCH` (a user's change
    racing the bind), so the bound pod differs from the assumed one."""

    PATCH: dict[str, Any] = {}

    async def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status:
        assert self.handle is not None
        await self.handle.client.patch(PODS, pod.name, self.PATCH, pod.namespace, patch_type="strategic")
        return Status.success()


class Relabel(_PatchDuringBind):
    """The pod's `app` label changes: its parse (affinity terms with matchLabelKeys) too."""

    NAME = "Relabel"
    PATCH = {"metadata": {"labels": {"app": "new"}}}


class Annotate(_PatchDuringBind):
    """An annotation is added: the parse stays, but the metadata differs beyond what the
    binding writes."""

    NAME = "Annotate"
    PATCH = {"metadata": {"annotations": {"note": "x"}}}


def _affinity_values(pi: PodInfo) -> list[Any]:
    """The `app` values the pod's preferred affinity term selects (matchLabelKeys merges them in)."""
    [w] = pi.preferred_affinity_terms
    return [e["values"] for e in w.term.selector["matchExpressions"] if e["key"] == "app"]


async def _assume_then_confirm(s: Any, api: Any) -> tuple[PodInfo, int, int]:
    """One cycle; the assumed PodInfo and the node's generation after the assumption and after
    the bound pod reached the cache."""
    await s.schedule_one()
    [uid] = [u for u in s.cache._pods if s.cache.is_assumed(u)]
    assumed = s.cache.get_pod(uid)
    assert assumed is not None
    gen = s.cache.get_node_info(assumed.node_name).generation
    s.cache.update_snapshot(s.snapshot)  # as the next cycle would: the snapshot holds the assumed pod
    assert s.snapshot.get(assumed.node_name).pods[-1] is assumed
    await s.wait_for_bindings()
    await s.writer.flush()
    await api.settle()
    return assumed, gen, s.cache.get_node_info(assumed.node_name).generation


async def _bind_one(s: Any, api: Any) -> PodInfo:
    """One scheduling cycle; returns the assumed PodInfo, then lets the bind reach the cache."""
    return (await _assume_then_confirm(s, api))[0]


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


async def test_confirming_an_unchanged_binding_leaves_the_node_as_it_was(real_api, env, make_scheduler):
    """The bound pod differs from the assumed one only by resourceVersion, managedFields and
    the PodScheduled condition: the node's aggregate is the same, so its generation stays and
    the next cycle's snapshot copies nothing for it; the cache still holds the stored pod."""
    s = make_scheduler()
    await env.add(make_node("n1").capacity(cpu="4", memory="8Gi").obj(), _web().obj())
    assumed, gen_assumed, gen_confirmed = await _assume_then_confirm(s, real_api)
    stored = env.pod("web")
    assert stored["spec"]["nodeName"] == "n1"
    assert gen_confirmed == gen_assumed
    pi = s.cache.get_pod(stored["metadata"]["uid"])
    assert pi is not None and not s.cache.is_assumed(pi.uid)
    assert pi.pod["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    ni = s.cache.get_node_info("n1")
    assert ni.pods == [pi] and ni.pods_with_affinity == [pi]
    assert (ni.requested.milli_cpu, ni.requested.memory) == (1000, 1 << 30)
    # the next snapshot holds the stored pod too (what preemption reads of a victim), its node
    # not copied again: the same generation
    s.cache.update_snapshot(s.snapshot)
    snap_ni = s.snapshot.get("n1")
    assert snap_ni is not None and snap_ni.generation == gen_assumed
    assert snap_ni.pods == [pi] and snap_ni.pods_with_affinity == [pi] and snap_ni.pods[0] is not assumed
    # the next pod sees the first one's requests on the node (4 CPU: three more fit, not four)
    for i in range(4):
        await env.add(make_pod(f"more-{i}").req(cpu="1", memory="1Gi").obj())
    for _ in range(4):
        await s.schedule_one()
    await s.wait_for_bindings()
    await real_api.settle()
    placed = [env.pod(f"more-{i}")["spec"].get("nodeName") for i in range(4)]
    assert placed.count("n1") == 3 and placed.count(None) == 1


async def test_confirming_a_binding_that_changed_more_redoes_the_node(real_api, env, make_scheduler, base_config,
                                                                     base_registry):
    base_config["profiles"][0]["plugins"]["multiPoint"]["enabled"].append({"name": "Annotate"})
    s = make_scheduler(base_config, registry={**base_registry, "Annotate": Annotate})
    await env.add(make_node("n1").capacity(cpu="4", memory="8Gi").obj(), _web().obj())
    assumed, gen_assumed, gen_confirmed = await _assume_then_confirm(s, real_api)
    stored = env.pod("web")
    assert stored["metadata"]["annotations"] == {"note": "x"}
    assert gen_confirmed != gen_assumed
    pi = s.cache.get_pod(stored["metadata"]["uid"])
    assert pi is not None and pi.pod["metadata"]["annotations"] == {"note": "x"}
    assert s.cache.get_node_info("n1").pods == [pi]


def test_confirms_alike_ignores_only_what_the_binding_writes():
    from scheduler.backend.cache import confirms_alike

    def pod(**over: Any) -> dict[str, Any]:
        p: dict[str, Any] = {
            "metadata": {"name": "p", "namespace": "d", "uid": "u", "resourceVersion": "5",
                         "labels": {"a": "1"}},
            "spec": {"nodeName": "n1"},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
        }
        for k, v in over.items():
            p[k] = v
        return p

    assumed = pod()
    bound = pod(metadata={**assumed["metadata"], "resourceVersion": "9", "managedFields": [{"manager": "m"}]},
                status={"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]})
    assert confirms_alike(assumed, bound)
    # anything else a plugin or preemption could read makes it a full update
    for changed in (
        {"metadata": {**assumed["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}},
        {"metadata": {**assumed["metadata"], "annotations": {"x": "y"}}},
        {"status": {"phase": "Running", "conditions": []}},
        {"status": {"phase": "Pending", "startTime": "2026-01-01T00:00:00Z", "conditions": []}},
        {"status": {"phase": "Pending", "conditions": [{"type": "DisruptionTarget", "status": "True"}]}},
        {"extra": {}},
    ):
        assert not confirms_alike(assumed, pod(**changed)), changed
