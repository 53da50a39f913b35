"""A Node reads back as kube-apiserver writes it: Go's encoding of a Node always has `spec` and,
in the status, the daemon endpoints and the node info with their zero values, in the Go
struct's field order. A hand-made Node (what people simulating clusters post) therefore looks
the same from minik3s as from a real cluster. Through the real `ApiCore`."""

from __future__ import annotations

import orjson

from apiserver.core import ApiCore

ZERO_INFO = {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
             "containerRuntimeVersion": "", "kubeletVersion": "", "kubeProxyVersion": "", "operatingSystem": "",
             "architecture": ""}


def nodes(core: ApiCore):
    info = core.registry.get("", "v1", "nodes")
    assert info is not None
    return info


async def test_a_bare_node_has_go_s_zero_spec_and_status(core: ApiCore) -> None:
    node = await core.create(nodes(core), None, {"metadata": {"name": "bare"}})
    assert node["spec"] == {}
    assert node["status"] == {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": ZERO_INFO}
    assert list(node) == ["kind", "apiVersion", "metadata", "spec", "status"]


async def test_a_partial_status_is_completed_in_go_s_field_order(core: ApiCore) -> None:
    node = await core.create(nodes(core), None, {"metadata": {"name": "partial"}, "status": {
        "nodeInfo": {"kubeletVersion": "v1.33.0", "architecture": "amd64"}, "capacity": {"cpu": "4"},
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}})
    status = node["status"]
    assert list(status) == ["capacity", "allocatable", "daemonEndpoints", "nodeInfo"]
    assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    assert status["nodeInfo"] == {**ZERO_INFO, "kubeletVersion": "v1.33.0", "architecture": "amd64"}
    assert list(status["nodeInfo"]) == list(ZERO_INFO)
    stored = orjson.loads(core.store.encoded("core/nodes//partial") or b"{}")
    assert stored["status"] == status
