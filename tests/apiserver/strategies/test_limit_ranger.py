"""LimitRanger on the real in-process API: a LimitRange's defaults (SetDefaults_LimitRangeItem)
and validation, the containers' requests and limits it fills in on a pod create (with the
kubernetes.io/limit-ranger annotation), and the limits it enforces (403 with upstream's
messages). Upstream: plugin/pkg/admission/limitranger, pkg/apis/core/validation."""

from __future__ import annotations

import re
from typing import Any

import pytest

from minik3s.api.errors import ForbiddenError, InvalidError
from minik3s.api.resources import PODS
from minik3s.api.types import JsonDict


def limit_range(name: str = "limits", *items: JsonDict) -> JsonDict:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name, "namespace": "default"},
            "spec": {"limits": list(items)}}


def pod(name: str = "p", *containers: JsonDict, **spec: Any) -> JsonDict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": list(containers) or [{"name": "c", "image": "nginx"}], **spec}}


def limit_ranges(real_api: Any) -> Any:
    info = real_api.core.registry.get_resource("", "limitranges")
    assert info is not None
    return info


async def test_a_container_item_gets_its_defaults_from_max_default_and_min(real_api: Any) -> None:
    made = await real_api._client.create(limit_ranges(real_api), limit_range(
        "l", {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}},
        {"type": "Pod", "max": {"cpu": "4"}}))
    container, pod_item = made["spec"]["limits"]
    assert container["default"] == {"cpu": "2"}  # the max
    assert container["defaultRequest"] == {"cpu": "2", "memory": "64Mi"}  # the default, then the min
    assert "default" not in pod_item and "defaultRequest" not in pod_item


@pytest.mark.parametrize(("item", "field", "message"), [
    pytest.param({"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}, "spec.limits[0].min[cpu]",
                 'Invalid value: "2": min value 2 is greater than max value 1', id="min over max"),
    pytest.param({"type": "Container", "default": {"cpu": "3"}, "max": {"cpu": "1"}}, "spec.limits[0].default[cpu]",
                 'Invalid value: "3": default value 3 is greater than max value 1', id="default over max"),
    pytest.param({"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}},
                 "spec.limits[0].defaultRequest[cpu]",
                 'Invalid value: "2": default request value 2 is greater than default limit value 1',
                 id="request over limit"),
    pytest.param({"type": "Pod", "default": {"cpu": "1"}}, "spec.limits[0].default",
                 "Forbidden: may not be specified when `type` is 'Pod'", id="a pod item's default"),
    pytest.param({"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}},
                 "spec.limits[0].maxLimitRequestRatio[cpu]", 'Invalid value: "500m": ratio 500m is less than 1',
                 id="ratio under 1"),
    pytest.param({"type": "Node"}, "spec.limits[0].type",
                 'Unsupported value: "Node": supported values: "Pod", "Container", "PersistentVolumeClaim"',
                 id="unknown type"),
])
async def test_an_invalid_limit_range_is_refused(real_api: Any, item: JsonDict, field: str, message: str) -> None:
    with pytest.raises(InvalidError) as e:
        await real_api._client.create(limit_ranges(real_api), limit_range("bad", item))
    assert (field, message) in [(c["field"], c["message"]) for c in e.value.details["causes"]]


async def test_a_pod_without_resources_gets_the_defaults_and_the_annotation(real_api: Any) -> None:
    await real_api._client.create(limit_ranges(real_api), limit_range(
        "l", {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
              "defaultRequest": {"cpu": "100m"}}))
    made = await real_api._client.create(PODS, pod(
        "p", {"name": "web", "image": "nginx"},
        {"name": "side", "image": "nginx", "resources": {"limits": {"memory": "1Gi"}}},
        initContainers=[{"name": "setup", "image": "busybox"}]))
    web, side = made["spec"]["containers"]
    assert web["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                "requests": {"cpu": "100m", "memory": "256Mi"}}
    # its own limit stays; the request defaulting from that limit (API defaults) came first
    assert side["resources"] == {"limits": {"memory": "1Gi", "cpu": "500m"}, "requests": {"memory": "1Gi", "cpu": "100m"}}
    assert made["spec"]["initContainers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "256Mi"}
    assert made["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web; "
        "cpu request for container side; cpu limit for container side; "
        "cpu, memory request for init container setup; cpu, memory limit for init container setup")


@pytest.mark.parametrize(("containers", "message"), [
    pytest.param([{"name": "c", "image": "i", "resources": {"limits": {"cpu": "2"}}}],
                 "maximum cpu usage per Container is 1, but limit is 2", id="over the container max"),
    pytest.param([{"name": "c", "image": "i", "resources": {"requests": {"cpu": "10m"}, "limits": {"cpu": "1"}}}],
                 "cpu max limit to request ratio per Container is 4, but provided ratio is 100.000000",
                 id="ratio"),
    pytest.param([{"name": "c", "image": "i", "resources": {"requests": {"memory": "16Mi"},
                                                               "limits": {"cpu": "500m"}}}],
                 "minimum memory usage per Container is 32Mi, but request is 16Mi", id="under the min"),
    pytest.param([{"name": "a", "image": "i", "resources": {"limits": {"cpu": "800m"}}},
                  {"name": "b", "image": "i", "resources": {"limits": {"cpu": "800m"}}}],
                 "maximum cpu usage per Pod is 1500m, but limit is 1600m", id="over the pod max"),
])
async def test_limits_are_enforced_with_upstreams_messages(real_api: Any, containers: list[JsonDict],
                                                           message: str) -> None:
    await real_api._client.create(limit_ranges(real_api), limit_range(
        "l", {"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "32Mi"},
              "maxLimitRequestRatio": {"cpu": "4"}},
        {"type": "Pod", "max": {"cpu": "1500m"}}))
    with pytest.raises(ForbiddenError) as e:
        await real_api._client.create(PODS, pod("p", *containers))
    assert str(e.value).startswith('pods "p" is forbidden: ')
    assert message in str(e.value)
    # a validating refusal names a generateName pod by its generated name (upstream generates it
    # before validating admission)
    body = pod("p", *containers)
    body["metadata"] = {"generateName": "web-", "namespace": "default"}
    with pytest.raises(ForbiddenError) as e:
        await real_api._client.create(PODS, body)
    assert re.match(r'^pods "web-[a-z0-9]{5}" is forbidden: ', str(e.value))
    # within every limit: admitted
    ok = await real_api._client.create(PODS, pod("q", {"name": "c", "image": "i", "resources": {
        "requests": {"cpu": "500m", "memory": "64Mi"}, "limits": {"cpu": "1"}}}))
    assert ok["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "1"


async def test_a_namespace_without_limit_ranges_changes_nothing(real_api: Any) -> None:
    made = await real_api._client.create(PODS, pod())
    assert "annotations" not in made["metadata"]
    assert made["spec"]["containers"][0]["resources"] == {}


async def test_a_pod_limit_counts_sidecars_with_the_containers_and_init_containers_alone(real_api: Any) -> None:
    """PodLimits: a sidecar (restartPolicy Always) runs beside the containers and adds to them;
    an ordinary init container runs before them and only has to fit on its own."""
    await real_api._client.create(limit_ranges(real_api), limit_range(
        "l", {"type": "Pod", "max": {"memory": "1Gi"}}))

    def box(name: str, memory: str, **extra: Any) -> JsonDict:
        return {"name": name, "image": "i", "resources": {"limits": {"memory": memory}}, **extra}

    with pytest.raises(ForbiddenError) as e:
        await real_api._client.create(PODS, pod("p", box("c", "768Mi"),
                                                initContainers=[box("proxy", "512Mi", restartPolicy="Always")]))
    assert str(e.value) == 'pods "p" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1280Mi'
    ok = await real_api._client.create(PODS, pod("q", box("c", "768Mi"), initContainers=[box("setup", "1Gi")]))
    assert ok["metadata"]["name"] == "q"


def claim(name: str, storage: str | None) -> JsonDict:
    spec: JsonDict = {"accessModes": ["ReadWriteOnce"]}
    spec["resources"] = {"requests": {"storage": storage}} if storage else {}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


async def test_claims_are_held_to_persistent_volume_claim_items_on_create_and_resize(real_api: Any) -> None:
    from minik3s.api.resources import PERSISTENTVOLUMECLAIMS as PVCS

    await real_api._client.create(limit_ranges(real_api), limit_range(
        "storage", {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "2Gi"}}))
    with pytest.raises(ForbiddenError) as e:
        await real_api._client.create(PVCS, claim("big", "5Gi"))
    assert str(e.value) == ('persistentvolumeclaims "big" is forbidden: maximum storage usage per '
                            'PersistentVolumeClaim is 2Gi, but request is 5Gi')
    with pytest.raises(ForbiddenError, match="minimum storage usage per PersistentVolumeClaim is 1Gi, but request "
                                             "is 500Mi"):
        await real_api._client.create(PVCS, claim("small", "500Mi"))
    made = await real_api._client.create(PVCS, claim("ok", "1536Mi"))
    assert made["spec"]["resources"]["requests"] == {"storage": "1536Mi"}  # no defaults for claims
    made["status"] = {"phase": "Bound", "capacity": {"storage": "1536Mi"}}
    made = await real_api._client.update_status(PVCS, made)
    made["spec"]["resources"]["requests"]["storage"] = "3Gi"  # a bound claim's resize beyond the max
    with pytest.raises(ForbiddenError, match="maximum storage usage per PersistentVolumeClaim is 2Gi, but request "
                                             "is 3Gi"):
        await real_api._client.update(PVCS, made)
