"""The patched object is decoded as upstream decodes it into the Go type (422 on field "patch"
for a wrongly typed value), through the real ApiCore: every field a merge or strategic merge
patch touches is checked whole; the fields it cannot touch are the stored object's own, checked
when they were written."""

from __future__ import annotations

import pytest

from minik3s.api.errors import InvalidError
from minik3s.api.options import WriteOptions
from minik3s.api.resources import DEPLOYMENTS, PODS


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def deployment(name: str, replicas: object) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


@pytest.mark.parametrize(("patch_type", "body", "message"), [
    pytest.param("merge", {"spec": {"replicas": 2**31}},
                 "json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of "
                 "type int32", id="merge-patch-overflow"),
    pytest.param("strategic", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": 5}]}}}},
                 "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image "
                 "of type string", id="strategic-patch-into-a-merged-list-item"),
    pytest.param("json", [{"op": "add", "path": "/spec/paused", "value": "yes"}],
                 "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool",
                 id="json-patch-checks-the-whole-object"),
])
async def test_patched_fields_are_decoded(real_api, patch_type, body, message):
    core = real_api.core
    await core.create(DEPLOYMENTS, "default", deployment("d", 1), WriteOptions())
    with pytest.raises(InvalidError) as ei:
        await core.patch(DEPLOYMENTS, "default", "d", patch_type, body, WriteOptions())
    assert ei.value.message.endswith(message)
    assert ei.value.details["causes"][0]["field"] == "patch"
    assert core.get(DEPLOYMENTS, "default", "d")["spec"]["replicas"] == 1  # nothing stored


async def test_a_patch_is_decoded_in_the_fields_it_touches(real_api):
    core = real_api.core
    # an in-process (trusted) write is not decoded: a wrongly typed value can be stored
    bad = deployment("d", 1)
    bad["spec"]["paused"] = "yes"
    await core.create(DEPLOYMENTS, "default", bad, WriteOptions())
    # a patch of metadata cannot have brought that value: it is decoded and succeeds
    out = await core.patch(DEPLOYMENTS, "default", "d", "merge", {"metadata": {"labels": {"a": "b"}}},
                           WriteOptions())
    assert out["metadata"]["labels"] == {"a": "b"}
    # a patch of spec has the whole patched spec decoded, as upstream decodes the patched object
    with pytest.raises(InvalidError) as ei:
        await core.patch(DEPLOYMENTS, "default", "d", "merge", {"spec": {"replicas": 2}}, WriteOptions())
    assert ei.value.message.endswith(
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool")
    # a status patch of a pod is decoded in status only, and a bad status value is refused
    await core.create(PODS, "default", pod("p"), WriteOptions())
    out = await core.patch(PODS, "default", "p", "strategic",
                           {"status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}},
                           WriteOptions(), subresource="status")
    assert [c["type"] for c in out["status"]["conditions"]] == ["PodScheduled"]
    with pytest.raises(InvalidError) as ei:
        await core.patch(PODS, "default", "p", "strategic", {"status": {"podIP": 7}}, WriteOptions(),
                         subresource="status")
    assert ei.value.message.endswith(
        "json: cannot unmarshal number into Go struct field PodStatus.status.podIP of type string")
