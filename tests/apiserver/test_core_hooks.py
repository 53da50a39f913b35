"""Per-kind behaviour that the generic request core runs through the kinds' strategy hooks,
driven through the real core (ApiCore over SQLite, fake clock): what DELETE returns, graceful
pod deletion, namespace termination, events in a terminating namespace, create-on-update,
Service IP allocation under concurrency, and subresources registered by their kind."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.core import ApiCore
from minik3s.api import errors
from minik3s.api.options import DeleteOptions, WriteOptions
from minik3s.api.resources import ResourceInfo


def _info(core: ApiCore, resource: str, group: str = "") -> ResourceInfo:
    info = next((i for i in core.registry.all() if i.group == group and i.resource == resource), None)
    assert info is not None
    return info


BODIES: dict[str, dict] = {
    "pods": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    "services": {"spec": {"ports": [{"port": 80}]}},
    "persistentvolumes": {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                   "hostPath": {"path": "/x"}}},
    "persistentvolumeclaims": {"spec": {"accessModes": ["ReadWriteOnce"],
                                        "resources": {"requests": {"storage": "1Gi"}}}},
}


@pytest.mark.parametrize(("resource", "returns_object"), [
    pytest.param("pods", True, id="pod-returns-the-object"),
    pytest.param("services", True, id="service-returns-the-object"),
    pytest.param("serviceaccounts", True, id="serviceaccount-returns-the-object"),
    pytest.param("persistentvolumes", True, id="persistentvolume-returns-the-object"),
    pytest.param("persistentvolumeclaims", True, id="persistentvolumeclaim-returns-the-object"),
    pytest.param("configmaps", False, id="configmap-returns-a-status"),
    pytest.param("secrets", False, id="secret-returns-a-status"),
    pytest.param("nodes", False, id="node-returns-a-status"),
])
async def test_delete_answers_as_upstreams_return_deleted_object(core: ApiCore, resource: str,
                                                                  returns_object: bool) -> None:
    info = _info(core, resource)
    ns = "default" if info.namespaced else None
    created = await core.create(info, ns, {"metadata": {"name": "x"}, **BODIES.get(resource, {})})
    out, finished = await core.delete(info, ns, "x")
    assert finished
    if returns_object:
        assert (out["kind"], out["metadata"]["uid"]) == (info.kind, created["metadata"]["uid"])
    else:
        assert out["kind"] == "Status" and out["status"] == "Success"
        assert out["details"]["name"] == "x" and out["details"]["kind"] == resource


async def test_namespace_delete_returns_it_terminating_until_finalized(core: ApiCore) -> None:
    nss = _info(core, "namespaces")
    await core.create(nss, None, {"metadata": {"name": "doomed"}})
    out, finished = await core.delete(nss, None, "doomed")
    assert not finished
    assert out["kind"] == "Namespace" and out["status"]["phase"] == "Terminating"
    assert out["metadata"]["deletionTimestamp"]
    # the namespace controller's finalize empties spec.finalizers: the namespace goes
    body = {**out, "spec": {"finalizers": []}}
    await core.update(nss, None, "doomed", body, subresource="finalize")
    with pytest.raises(errors.NotFoundError):
        core.get(nss, None, "doomed")


@pytest.mark.parametrize("resource", [pytest.param("configmaps", id="configmap"),
                                      pytest.param("events", id="event-too-as-upstream-namespacelifecycle")])
async def test_terminating_namespace_refuses_every_create(core: ApiCore, resource: str) -> None:
    nss = _info(core, "namespaces")
    await core.create(nss, None, {"metadata": {"name": "ending"}})
    await core.delete(nss, None, "ending")
    body = {"metadata": {"name": "late"}}
    if resource == "events":
        body.update({"involvedObject": {"kind": "Pod", "name": "p", "namespace": "ending"},
                     "reason": "Killing", "message": "stopping", "type": "Normal"})
    with pytest.raises(errors.ForbiddenError, match="because it is being terminated") as exc:
        await core.create(_info(core, resource), "ending", body)
    assert exc.value.details["causes"][0]["reason"] == "NamespaceTerminating"
    with pytest.raises(errors.NotFoundError):
        core.get(_info(core, resource), "ending", "late")


async def test_pod_delete_is_graceful_only_once_it_runs_on_a_node(core: ApiCore) -> None:
    pods = _info(core, "pods")
    await core.create(pods, "default", {"metadata": {"name": "pending"}, **BODIES["pods"]})
    _, finished = await core.delete(pods, "default", "pending")
    assert finished  # never scheduled: nothing to stop
    await core.create(pods, "default", {"metadata": {"name": "running"},
                                        "spec": {**BODIES["pods"]["spec"], "nodeName": "n1",
                                                 "terminationGracePeriodSeconds": 12}})
    out, finished = await core.delete(pods, "default", "running")
    assert not finished and out["metadata"]["deletionGracePeriodSeconds"] == 12
    out, finished = await core.delete(pods, "default", "running", DeleteOptions(grace_period_seconds=3))
    assert not finished and out["metadata"]["deletionGracePeriodSeconds"] == 3  # may only shorten
    out, finished = await core.delete(pods, "default", "running", DeleteOptions(grace_period_seconds=0))
    assert finished and out["kind"] == "Pod"


@pytest.mark.parametrize(("resource", "body", "creates"), [
    pytest.param("leases", {}, True, id="lease-put-creates"),
    pytest.param("endpoints", {}, True, id="endpoints-put-creates"),
    pytest.param("limitranges", {}, True, id="limitrange-put-creates"),
    pytest.param("configmaps", {}, False, id="configmap-put-is-404"),
])
async def test_put_of_a_missing_object_creates_only_where_upstream_allows(core: ApiCore, resource: str,
                                                                          body: dict, creates: bool) -> None:
    info = _info(core, resource, "coordination.k8s.io" if resource == "leases" else "")
    if creates:
        out = await core.update(info, "default", "fresh", {"metadata": {"name": "fresh"}, **body})
        assert out["metadata"]["uid"]
    else:
        with pytest.raises(errors.NotFoundError):
            await core.update(info, "default", "fresh", {"metadata": {"name": "fresh"}, **body})


async def test_concurrent_service_creates_get_distinct_cluster_ips_and_node_ports(core: ApiCore) -> None:
    svcs = _info(core, "services")
    made = await asyncio.gather(*(core.create(svcs, "default", {
        "metadata": {"name": f"s{i}"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}}) for i in range(20)))
    ips = {s["spec"]["clusterIP"] for s in made}
    ports = {s["spec"]["ports"][0]["nodePort"] for s in made}
    assert len(ips) == 20 and len(ports) == 20
    taken = made[0]["spec"]["ports"][0]["nodePort"]
    with pytest.raises(errors.InvalidError, match="provided port is already allocated"):
        await core.create(svcs, "default", {"metadata": {"name": "dup"}, "spec": {
            "type": "NodePort", "ports": [{"port": 81, "nodePort": taken}]}})
    # a failed or dry-run create holds nothing: its IP is free again for the next one
    ip = "10.43.200.7"
    await core.create(svcs, "default", {"metadata": {"name": "dry"}, "spec": {"clusterIP": ip, "ports": [{"port": 1}]}},
                      WriteOptions(dry_run=True))
    real = await core.create(svcs, "default", {"metadata": {"name": "real"}, "spec": {"clusterIP": ip,
                                                                                         "ports": [{"port": 1}]}})
    assert real["spec"]["clusterIP"] == ip


async def test_subresources_are_the_ones_their_kind_registers(core: ApiCore) -> None:
    pods, cms, nss = _info(core, "pods"), _info(core, "configmaps"), _info(core, "namespaces")
    assert {n for n in ("binding", "eviction", "log", "status") if core.serves_subresource(pods, n)} == \
        {"binding", "eviction", "log", "status"}
    assert core.subresource_names(pods) == ["status", "binding", "eviction", "log", "ephemeralcontainers", "exec",
                                           "attach", "portforward", "resize"]  # discovery's list
    assert core.subresource_names(nss) == ["status", "finalize"]
    assert core.serves_subresource(nss, "finalize") and not core.serves_subresource(pods, "finalize")
    assert not core.serves_subresource(cms, "status")
    with pytest.raises(errors.NotFoundError):
        core.subresource(cms, "scale")
    assert "PATCH" not in core.subresource(nss, "finalize").verbs
    await core.create(pods, "default", {"metadata": {"name": "p"}, **BODIES["pods"]})
    assert core.subresource(pods, "log").get(core, pods, "default", "p") == ""  # not on a node: empty
    assert await core.bind("default", "p", {"metadata": {"name": "p"}, "target": {"name": "n1"}}) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    assert core.get(pods, "default", "p")["spec"]["nodeName"] == "n1"
    # no kubelet here: the bound pod's container has no status yet, so no log (as a kubelet answers)
    with pytest.raises(errors.BadRequestError, match='container "c" in pod "p" is not available'):
        core.subresource(pods, "log").get(core, pods, "default", "p")
    bindings = _info(core, "bindings")
    await core.create(pods, "default", {"metadata": {"name": "q"}, **BODIES["pods"]})
    await core.create(bindings, "default", {"metadata": {"name": "q"}, "target": {"name": "n2"}})
    assert core.get(pods, "default", "q")["spec"]["nodeName"] == "n2"
    with pytest.raises(errors.ConflictError, match="already assigned"):
        await core.create(bindings, "default", {"metadata": {"name": "q"}, "target": {"name": "n3"}})
