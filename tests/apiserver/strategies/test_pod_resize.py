"""pods/resize (in-place resize, Kubernetes 1.33) on the real request core: only the containers'
resources change, the spec change bumps metadata.generation, and ValidatePodResize's rules and
messages; the plain pod update still refuses resource changes; LimitRanger and ResourceQuota
admit the resize."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors
from minik3s.api.options import WriteOptions

SUB = "resize"
RES = {"requests": {"cpu": "500m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}}


def _pods(core: ApiCore) -> Any:
    info = core.registry.get("", "v1", "pods")
    assert info is not None
    return info


async def _running(core: ApiCore, *, resources: dict | None = None, name: str = "p", report: bool = True,
                   extra: dict | None = None, **spec: Any) -> Any:
    """A pod bound to a node whose kubelet reports it running (with its resources, as a 1.33
    kubelet does, unless `report` is False)."""
    pods = _pods(core)
    c = {"name": "web", "image": "nginx", "resources": copy.deepcopy(resources if resources is not None else RES)}
    c.update(extra or {})
    body = {"metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [c], "nodeName": "node-1", **spec}}
    pod = copy.deepcopy(await core.create(pods, "default", body, WriteOptions(field_manager="kubectl")))
    cs = {"name": "web", "image": "nginx", "imageID": "", "ready": True, "restartCount": 0,
          "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}
    if report:
        cs["resources"] = copy.deepcopy(pod["spec"]["containers"][0]["resources"])
    pod["status"] = {**pod["status"], "phase": "Running", "containerStatuses": [cs]}
    await core.update(pods, "default", name, pod, subresource="status")
    return pods


def _causes(e: pytest.ExceptionInfo[errors.InvalidError]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in e.value.details["causes"]]


def _patch(cpu: str | None = None, memory: str | None = None, lcpu: str | None = None,
           lmem: str | None = None) -> dict:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    lim = {k: v for k, v in (("cpu", lcpu), ("memory", lmem)) if v is not None}
    res: dict = {}
    if req:
        res["requests"] = req
    if lim:
        res["limits"] = lim
    return {"spec": {"containers": [{"name": "web", "resources": res}]}}


async def test_a_resize_changes_only_resources_and_bumps_the_generation(core: ApiCore) -> None:
    pods = await _running(core)
    before = core.get(pods, "default", "p")
    got = await core.patch(pods, "default", "p", "strategic", {
        "metadata": {"labels": {"sneaked": "in"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:2", "resources": {"requests": {"cpu": "800m"}}}],
                 "activeDeadlineSeconds": 5},
        "status": {"phase": "Failed"}}, subresource=SUB)
    assert got["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "800m", "memory": "128Mi"}
    assert got["spec"]["containers"][0]["image"] == "nginx"  # silently the stored pod's
    assert "activeDeadlineSeconds" not in got["spec"]
    assert got["metadata"]["labels"] == {"app": "web"} and got["status"]["phase"] == "Running"
    assert got["metadata"]["generation"] == before["metadata"]["generation"] + 1
    # the same values again: no write, no new generation
    again = await core.patch(pods, "default", "p", "strategic", _patch(cpu="800m"), subresource=SUB)
    assert again["metadata"]["generation"] == got["metadata"]["generation"]
    assert again["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]
    served = core.subresource(pods, SUB).get(core, pods, "default", "p")  # GET pods/p/resize
    assert isinstance(served, dict) and served["spec"] == got["spec"]


async def test_the_plain_pod_update_still_refuses_resource_changes(core: ApiCore) -> None:
    pods = await _running(core)
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(pods, "default", "p", "strategic", _patch(cpu="800m"))
    [(field, message)] = _causes(e)
    assert field == "spec" and message.startswith("Forbidden: pod updates may not change fields other than")


@pytest.mark.parametrize("patch, expected", [
    # Burstable -> Guaranteed (requests raised to the limits)
    ({"spec": {"containers": [{"name": "web", "resources": {"requests": {"cpu": "1", "memory": "256Mi"}}}]}},
     [("spec", 'Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing')]),
    ({"spec": {"containers": [{"name": "web", "resources": {"limits": {"cpu": None}}}]}},
     [("spec.containers[0].resources.limits", "Forbidden: resource limits cannot be removed")]),
    (_patch(lmem="200Mi"),
     [("spec.containers[0].resources.limits[memory]",
       "Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer")]),
    ({"spec": {"containers": [{"name": "web", "resources": {"requests": {"ephemeral-storage": "1Gi"}}}]}},
     [("spec", "Forbidden: only cpu and memory resources are mutable")]),
    ({"spec": {"containers": [{"name": "web", "resizePolicy": [
        {"resourceName": "cpu", "restartPolicy": "RestartContainer"}]}]}},
     [("spec", "Forbidden: only cpu and memory resources are mutable")]),
    # ordinary pod validation runs on the resized pod
    (_patch(cpu="2"),
     [("spec.containers[0].resources.requests", 'Invalid value: "2": must be less than or equal to cpu limit of 1')]),
])
async def test_resize_rules(core: ApiCore, patch: dict, expected: list[tuple[str, str]]) -> None:
    pods = await _running(core)
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(pods, "default", "p", "strategic", patch, subresource=SUB)
    assert _causes(e) == expected
    assert e.value.message.startswith('Pod "p" is invalid: ')


async def test_a_request_cannot_be_removed_and_a_removed_one_with_a_limit_defaults_back(core: ApiCore) -> None:
    pods = await _running(core, resources={"requests": {"cpu": "500m", "memory": "128Mi"}, "limits": {"cpu": "1"}})
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(pods, "default", "p", "strategic", {"spec": {"containers": [
            {"name": "web", "resources": {"requests": {"memory": None}}}]}}, subresource=SUB)
    assert _causes(e) == [("spec.containers[0].resources.requests", "Forbidden: resource requests cannot be removed")]
    # the body is decoded with the pod's defaults: a request left out where a limit is set is the limit
    got = await core.patch(pods, "default", "p", "strategic", {"spec": {"containers": [
        {"name": "web", "resources": {"requests": {"cpu": None}}}]}}, subresource=SUB)
    assert got["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "128Mi"}


async def test_memory_limits_may_shrink_or_appear_with_restart_container(core: ApiCore) -> None:
    policy = {"resizePolicy": [{"resourceName": "memory", "restartPolicy": "RestartContainer"}]}
    pods = await _running(core, extra=policy)
    got = await core.patch(pods, "default", "p", "strategic", _patch(lmem="200Mi"), subresource=SUB)
    assert got["spec"]["containers"][0]["resources"]["limits"]["memory"] == "200Mi"
    # without a memory limit, adding one needs RestartContainer too
    await _running(core, name="q", resources={"requests": {"cpu": "100m", "memory": "64Mi"}})
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(pods, "default", "q", "strategic", _patch(lmem="1Gi"), subresource=SUB)
    assert _causes(e) == [("spec.containers[0].resources.limits[memory]",
                           "Forbidden: memory limits cannot be added unless resizePolicy is RestartContainer")]


async def test_a_node_without_resize_support_and_windows_pods(core: ApiCore) -> None:
    pods = await _running(core, report=False)
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(pods, "default", "p", "strategic", _patch(cpu="600m"), subresource=SUB)
    assert _causes(e) == [("spec", "Forbidden: Pod running on node without support for resize")]
    await _running(core, name="win", os={"name": "windows"})
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(pods, "default", "win", "strategic", _patch(cpu="600m"), subresource=SUB)
    assert _causes(e) == [("", "Forbidden: windows pods cannot be resized")]


async def test_init_containers_only_sidecars_resize(core: ApiCore) -> None:
    pods = _pods(core)
    await core.create(pods, "default", {"metadata": {"name": "s"}, "spec": {
        "containers": [{"name": "web", "image": "nginx", "resources": RES}],
        "initContainers": [
            {"name": "setup", "image": "busybox", "resources": RES},
            {"name": "proxy", "image": "envoy", "restartPolicy": "Always", "resources": RES}]}})
    got = await core.patch(pods, "default", "s", "strategic", {"spec": {"initContainers": [
        {"name": "proxy", "resources": {"requests": {"cpu": "700m"}}}]}}, subresource=SUB)
    assert got["spec"]["initContainers"][1]["resources"]["requests"]["cpu"] == "700m"
    with pytest.raises(errors.InvalidError) as e:
        await core.patch(pods, "default", "s", "strategic", {"spec": {"initContainers": [
            {"name": "setup", "resources": {"requests": {"cpu": "700m"}}}]}}, subresource=SUB)
    assert _causes(e) == [("spec", "Forbidden: resources for non-sidecar init containers are immutable")]


async def test_limit_ranger_and_quota_admit_the_resize(core: ApiCore) -> None:
    pods = await _running(core)
    lr = core.registry.get("", "v1", "limitranges")
    quota = core.registry.get("", "v1", "resourcequotas")
    assert lr is not None and quota is not None
    await core.create(lr, "default", {"metadata": {"name": "max"}, "spec": {"limits": [
        {"type": "Container", "max": {"cpu": "2"}}]}})
    with pytest.raises(errors.ForbiddenError) as fe:
        await core.patch(pods, "default", "p", "strategic", _patch(cpu="2", lcpu="3"), subresource=SUB)
    assert "maximum cpu usage per Container is 2, but limit is 3" in fe.value.message
    q = await core.create(quota, "default", {"metadata": {"name": "q"}, "spec": {"hard": {"requests.cpu": "1"}}})
    q["status"] = {"hard": {"requests.cpu": "1"}, "used": {"requests.cpu": "500m"}}
    await core.update(quota, "default", "q", q, subresource="status")
    got = await core.patch(pods, "default", "p", "strategic", _patch(cpu="900m"), subresource=SUB)
    assert got["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "900m"
    assert core.get(quota, "default", "q")["status"]["used"]["requests.cpu"] == "900m"  # the increase charged
    with pytest.raises(errors.ForbiddenError) as fe:
        await core.patch(pods, "default", "p", "strategic", _patch(cpu="1100m", lcpu="1500m"), subresource=SUB)
    assert 'exceeded quota: q, requested: requests.cpu=200m, used: requests.cpu=900m, limited: requests.cpu=1' \
        in fe.value.message
