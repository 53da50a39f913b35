"""Endpoints + EndpointSlice controller against a real in-process API server (no scheduler,
no kubelet: pods are bound and given status by the test), plus its pure helpers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minik3s.api.errors import NotFoundError
from minik3s.api.resources import ENDPOINTS, ENDPOINTSLICES, NODES, PODS, SERVICES
from minik3s.controllers.endpoints import (
    ANNOTATION_OVER_CAPACITY,
    ANNOTATION_TRIGGER_TIME,
    EndpointsController,
    find_port,
    labels_correct_for_endpoints,
    repack_subsets,
    truncate_subsets,
)
from minik3s.utils.clock import rfc3339

ZONES = {"n1": "zone-a", "n2": "zone-b"}


async def add_nodes(h) -> None:
    for name, zone in ZONES.items():
        await h.client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}}})


def service(name: str, *, selector: dict | None = None, ports: list | None = None, **spec: Any) -> dict:
    s: dict = {"ports": ports if ports is not None else [{"name": "http", "port": 80, "targetPort": "web"}]}
    if selector is not None:
        s["selector"] = selector
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": {"tier": "front"}}, "spec": s}


async def make_pod(h, name: str, *, node: str = "n1", ip: str | None = "10.0.0.1", ready: bool = True,
                   phase: str = "Running", labels: dict | None = None, finalizer: bool = False) -> dict:
    meta: dict = {"name": name, "labels": labels if labels is not None else {"app": "web"}}
    if finalizer:
        meta["finalizers"] = ["test/hold"]
    pod = await h.client.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {
        "nodeName": node,
        "containers": [{"name": "c", "image": "nginx", "ports": [{"name": "web", "containerPort": 8080}]}]}},
        "default")
    now = rfc3339(h.rs.core.clock.now())
    body = copy.deepcopy(pod)
    status: dict = {"phase": phase, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": now}]}
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    body["status"] = status
    return await h.client.update_status(PODS, body)


async def get_or_none(h, res, name: str, ns: str = "default") -> dict | None:
    try:
        return await h.client.get(res, name, ns)
    except NotFoundError:
        return None


async def slices(h, svc: str) -> list[dict]:
    return (await h.client.list(ENDPOINTSLICES, "default",
                                label_selector=f"kubernetes.io/service-name={svc}"))["items"]


def addr_names(ep: dict, field: str) -> list[str]:
    return sorted(a["targetRef"]["name"] for s in ep.get("subsets") or [] for a in s.get(field) or [])


@pytest.fixture
def start(harness):
    def go() -> EndpointsController:
        c = EndpointsController(harness.client, harness.informers)
        harness.start(c.run)
        return c
    return go


async def test_ready_and_not_ready_pods_fill_endpoints_and_slice(harness, start):
    h = harness
    await add_nodes(h)
    await make_pod(h, "ready-1", node="n1", ip="10.0.0.1")
    await make_pod(h, "ready-2", node="n2", ip="10.0.0.2")
    await make_pod(h, "not-ready", node="n1", ip="10.0.0.3", ready=False)
    await make_pod(h, "no-ip", ip=None)
    await make_pod(h, "succeeded", ip="10.0.0.9", phase="Succeeded", ready=False)
    await make_pod(h, "other-app", ip="10.0.0.8", labels={"app": "db"})
    start()
    svc = await h.client.create(SERVICES, service("web", selector={"app": "web"}), "default")

    async def endpoints_ready():
        ep = await get_or_none(h, ENDPOINTS, "web")
        return ep if ep and addr_names(ep, "addresses") == ["ready-1", "ready-2"] \
            and addr_names(ep, "notReadyAddresses") == ["not-ready"] else None

    ep = await h.eventually(endpoints_ready, what="endpoints with 2 ready, 1 not ready")
    assert ep["metadata"]["labels"] == {"tier": "front", "endpoints.kubernetes.io/managed-by": "endpoint-controller"}
    assert ep["metadata"]["annotations"][ANNOTATION_TRIGGER_TIME]
    [subset] = ep["subsets"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    first = subset["addresses"][0]
    assert first["ip"] == "10.0.0.1" and first["nodeName"] == "n1"
    assert first["targetRef"]["kind"] == "Pod" and first["targetRef"]["name"] == "ready-1"
    assert first["targetRef"]["namespace"] == "default" and first["targetRef"]["uid"]

    async def one_slice():
        items = await slices(h, "web")
        return items if len(items) == 1 and len(items[0].get("endpoints") or []) == 3 else None

    [sl] = await h.eventually(one_slice, what="one slice with 3 endpoints")
    assert sl["metadata"]["name"].startswith("web-") and len(sl["metadata"]["name"]) == len("web-") + 5
    assert sl["metadata"]["labels"] == {"tier": "front", "kubernetes.io/service-name": "web",
                                        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    [owner] = sl["metadata"]["ownerReferences"]
    assert owner == {"apiVersion": "v1", "kind": "Service", "name": "web", "uid": svc["metadata"]["uid"],
                     "controller": True, "blockOwnerDeletion": True}
    assert sl["addressType"] == "IPv4"
    assert sl["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    by_pod = {e["targetRef"]["name"]: e for e in sl["endpoints"]}
    assert by_pod["ready-2"] == {"addresses": ["10.0.0.2"],
                                 "conditions": {"ready": True, "serving": True, "terminating": False},
                                 "nodeName": "n2", "zone": "zone-b",
                                 "targetRef": {"kind": "Pod", "namespace": "default", "name": "ready-2",
                                               "uid": by_pod["ready-2"]["targetRef"]["uid"]}}
    assert by_pod["not-ready"]["conditions"] == {"ready": False, "serving": False, "terminating": False}


async def test_pod_changes_flow_to_endpoints_and_service_deletion_removes_them(harness, start):
    h = harness
    await add_nodes(h)
    await make_pod(h, "a", ip="10.0.0.1")
    await make_pod(h, "b", ip="10.0.0.2", finalizer=True)
    start()
    await h.client.create(SERVICES, service("web", selector={"app": "web"}), "default")

    async def names(want: list[str], field: str = "addresses"):
        ep = await get_or_none(h, ENDPOINTS, "web")
        return ep if ep and addr_names(ep, field) == want else None

    await h.eventually(lambda: names(["a", "b"]), what="both pods ready")

    # an unrelated pod change (annotation) writes nothing
    before = await h.client.get(ENDPOINTS, "web", "default")
    await h.mutate(PODS, "a", lambda p: p["metadata"].setdefault("annotations", {}).update({"x": "1"}))
    await make_pod(h, "c", ip="10.0.0.3")
    await h.eventually(lambda: names(["a", "b", "c"]), what="new pod c added")
    await h.client.delete(PODS, "c", "default", grace_period_seconds=0)
    after = await h.eventually(lambda: names(["a", "b"]), what="deleted pod c removed")
    assert after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]

    # a terminating pod leaves Endpoints; its slice entry is not ready but still serving
    await h.client.delete(PODS, "b", "default")
    await h.eventually(lambda: names(["a"]), what="terminating pod b removed from Endpoints")

    async def terminating_in_slice():
        [sl] = await slices(h, "web") or [None]
        eps = {e["targetRef"]["name"]: e for e in (sl or {}).get("endpoints") or []}
        return eps if "b" in eps and eps["b"]["conditions"]["terminating"] else None

    eps = await h.eventually(terminating_in_slice, what="slice marks b terminating")
    assert eps["b"]["conditions"] == {"ready": False, "serving": True, "terminating": True}

    # losing readiness moves a pod to notReadyAddresses
    pod_a = await h.client.get(PODS, "a", "default")
    pod_a["status"]["conditions"][0]["status"] = "False"
    await h.client.update_status(PODS, pod_a)
    await h.eventually(lambda: names(["a"], "notReadyAddresses"), what="a not ready")

    await h.client.delete(SERVICES, "web", "default")

    async def gone():
        return await get_or_none(h, ENDPOINTS, "web") is None

    await h.eventually(gone, what="endpoints deleted with the service")


async def test_steady_state_writes_nothing(harness, start):
    h = harness
    await add_nodes(h)
    await make_pod(h, "a", ip="10.0.0.1")
    c = start()
    await h.client.create(SERVICES, service("web", selector={"app": "web"}), "default")

    async def settled():
        ep = await get_or_none(h, ENDPOINTS, "web")
        sl = await slices(h, "web")
        return (ep, sl) if ep and addr_names(ep, "addresses") == ["a"] and len(sl) == 1 and sl[0]["endpoints"] \
            else None

    ep, [sl] = await h.eventually(settled, what="endpoints and slice written")
    await h.eventually(lambda: _async(len(c.queue) == 0), what="queue drained")
    await c.sync("default/web")  # a forced resync with nothing changed
    assert (await h.client.get(ENDPOINTS, "web", "default"))["metadata"]["resourceVersion"] \
        == ep["metadata"]["resourceVersion"]
    [again] = await slices(h, "web")
    assert again["metadata"]["resourceVersion"] == sl["metadata"]["resourceVersion"]


async def _async(v: Any) -> Any:
    return v


@pytest.mark.parametrize("svc", [
    pytest.param(service("manual", ports=[{"port": 80}]), id="service-without-selector-gets-no-endpoints"),
    pytest.param(service("ext", selector={"app": "web"}, ports=[], type="ExternalName",
                         externalName="example.com"), id="externalname-service-gets-no-endpoints"),
])
async def test_services_the_controller_leaves_alone(harness, start, svc):
    h = harness
    await add_nodes(h)
    await make_pod(h, "a", ip="10.0.0.1")
    c = start()
    await h.client.create(SERVICES, svc, "default")
    await h.client.create(SERVICES, service("probe", selector={"app": "web"}), "default")
    # once the later probe service has Endpoints the informers have both services; a direct
    # sync of the one under test then settles it deterministically
    await h.eventually(lambda: get_or_none(h, ENDPOINTS, "probe"), what="probe endpoints")
    name = svc["metadata"]["name"]
    await c.sync(f"default/{name}")
    assert await get_or_none(h, ENDPOINTS, name) is None
    assert await slices(h, name) == []


async def test_service_without_pods_gets_empty_endpoints_and_placeholder_slice(harness, start):
    h = harness
    await add_nodes(h)
    start()
    await h.client.create(SERVICES, service("empty", selector={"app": "none"}), "default")
    ep = await h.eventually(lambda: get_or_none(h, ENDPOINTS, "empty"), what="empty endpoints")
    assert not ep.get("subsets")
    [sl] = await h.eventually(lambda: slices(h, "empty"), what="placeholder slice")
    assert not sl.get("endpoints") and not sl.get("ports")

    # a pod arriving replaces the placeholder with a real slice
    await make_pod(h, "late", ip="10.0.0.7", labels={"app": "none"})

    async def real():
        items = await slices(h, "empty")
        return items if len(items) == 1 and items[0].get("endpoints") else None

    [sl2] = await h.eventually(real, what="placeholder replaced")
    assert sl2["endpoints"][0]["addresses"] == ["10.0.0.7"]


def test_pod_port_lookup():
    pod = {"metadata": {"uid": "u"}, "spec": {
        "containers": [{"name": "c", "ports": [{"name": "web", "containerPort": 8080},
                                               {"name": "dns", "containerPort": 53, "protocol": "UDP"}]}],
        "initContainers": [{"name": "side", "restartPolicy": "Always",
                            "ports": [{"name": "metrics", "containerPort": 9090}]}]}}
    assert find_port(pod, {"port": 80, "targetPort": 8081}) == 8081
    assert find_port(pod, {"port": 80}) == 80
    assert find_port(pod, {"port": 80, "targetPort": "web"}) == 8080
    assert find_port(pod, {"port": 53, "targetPort": "dns", "protocol": "UDP"}) == 53
    assert find_port(pod, {"port": 53, "targetPort": "dns", "protocol": "TCP"}) is None
    assert find_port(pod, {"port": 9, "targetPort": "metrics"}) == 9090
    assert find_port(pod, {"port": 9, "targetPort": "missing"}) is None


def _addr(ip: str) -> dict:
    return {"ip": ip, "targetRef": {"kind": "Pod", "name": ip, "uid": ip}}


@pytest.mark.parametrize(("entries", "want"), [
    pytest.param([(_addr("10.0.0.2"), {"port": 80}, True), (_addr("10.0.0.1"), {"port": 80}, True)],
                 [{"addresses": [_addr("10.0.0.1"), _addr("10.0.0.2")], "ports": [{"port": 80}]}],
                 id="same-port-merges-and-sorts-by-ip"),
    pytest.param([(_addr("10.0.0.1"), {"port": 80}, True), (_addr("10.0.0.1"), {"port": 443}, True)],
                 [{"addresses": [_addr("10.0.0.1")], "ports": [{"port": 80}, {"port": 443}]}],
                 id="one-address-two-ports-is-one-subset"),
    pytest.param([(_addr("10.0.0.1"), {"port": 80}, True), (_addr("10.0.0.2"), {"port": 80}, False),
                  (_addr("10.0.0.2"), {"port": 443}, True)],
                 [{"addresses": [_addr("10.0.0.1")], "notReadyAddresses": [_addr("10.0.0.2")], "ports": [{"port": 80}]},
                  {"addresses": [_addr("10.0.0.2")], "ports": [{"port": 443}]}],
                 id="different-address-sets-split-subsets"),
    pytest.param([(_addr("10.0.0.1"), None, False)], [{"notReadyAddresses": [_addr("10.0.0.1")]}],
                 id="headless-without-ports"),
])
def test_repack_subsets(entries, want):
    got = repack_subsets(entries)
    assert sorted(got, key=repr) == sorted(want, key=repr)


def test_truncation_keeps_ready_first():
    subsets = [{"addresses": [_addr(f"10.0.{i // 250}.{i % 250}") for i in range(900)],
                "notReadyAddresses": [_addr(f"10.1.{i // 250}.{i % 250}") for i in range(200)]}]
    out, truncated = truncate_subsets(subsets)
    assert truncated
    assert len(out[0]["addresses"]) == 900 and len(out[0]["notReadyAddresses"]) == 100
    small, truncated = truncate_subsets([{"addresses": [_addr("10.0.0.1")]}])
    assert not truncated and small == [{"addresses": [_addr("10.0.0.1")]}]
    assert ANNOTATION_OVER_CAPACITY == "endpoints.kubernetes.io/over-capacity"


async def test_slices_split_at_max_endpoints_per_slice(harness):
    h = harness
    await add_nodes(h)
    for i in range(5):
        await make_pod(h, f"p{i}", ip=f"10.0.0.{i + 1}", node="n1" if i % 2 else "n2")
    c = EndpointsController(h.client, h.informers, max_endpoints_per_slice=2)
    h.start(c.run)
    await h.client.create(SERVICES, service("web", selector={"app": "web"}), "default")

    async def spread(total: int):
        items = await slices(h, "web")
        counts = sorted(len(s.get("endpoints") or []) for s in items)
        return items if sum(counts) == total and all(0 < n <= 2 for n in counts) else None

    items = await h.eventually(lambda: spread(5), what="5 endpoints over slices of at most 2")
    assert len(items) == 3
    for name in ("p0", "p1", "p2"):
        await h.client.delete(PODS, name, "default", grace_period_seconds=0)
    items = await h.eventually(lambda: spread(2), what="2 endpoints left, no empty slices")
    names = sorted(e["targetRef"]["name"] for s in items for e in s["endpoints"])
    assert names == ["p3", "p4"]


def _pod_for_change(**over: Any) -> dict:
    pod = {"metadata": {"name": "p", "namespace": "default", "resourceVersion": "1", "labels": {"app": "web"}},
           "spec": {"nodeName": "", "hostname": "", "containers": [{"name": "c"}]},
           "status": {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}],
                      "conditions": [{"type": "Ready", "status": "True"}]}}
    for path, value in over.items():
        part, key = path.split("__")
        pod[part][key] = value
    return pod


@pytest.mark.parametrize(("change", "want"), [
    ({"spec__nodeName": "n1"}, (False, False)),  # a bind: no Service woken
    ({"metadata__annotations": {"a": "b"}}, (False, False)),
    ({"metadata__deletionTimestamp": "2026-01-01T00:00:00Z"}, (True, False)),
    ({"status__conditions": [{"type": "Ready", "status": "False"}]}, (True, False)),
    ({"status__podIPs": [{"ip": "10.0.0.2"}]}, (True, False)),
    ({"status__podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}, (True, False)),
    ({"metadata__labels": {"app": "db"}}, (False, True)),
    ({"spec__hostname": "web-0"}, (False, True)),
    ({"spec__subdomain": "web"}, (False, True)),
])
def test_which_pod_updates_wake_its_services(change, want):
    """upstream podEndpointsChanged (endpointslice util): (endpoint changed, membership changed)."""
    from minik3s.controllers.endpoints import _pod_endpoints_changed
    assert _pod_endpoints_changed(_pod_for_change(), _pod_for_change(**change)) == want


MANAGED = {"endpoints.kubernetes.io/managed-by": "endpoint-controller"}
HEADLESS = {"service.kubernetes.io/headless": ""}


@pytest.mark.parametrize(("ep_labels", "svc_labels", "want"), [
    pytest.param({**MANAGED, "tier": "front"}, {"tier": "front"}, True, id="service-labels-plus-managed-by"),
    pytest.param({**MANAGED, **HEADLESS}, {}, True, id="headless-label-ignored"),
    pytest.param({"tier": "front"}, {"tier": "front"}, False, id="missing-managed-by"),
    pytest.param({"endpoints.kubernetes.io/managed-by": "someone-else"}, {}, False, id="other-manager"),
    pytest.param({**MANAGED, "tier": "back"}, {"tier": "front"}, False, id="label-value-changed"),
    pytest.param({**MANAGED}, {"tier": "front"}, False, id="service-label-added"),
    pytest.param({**MANAGED, "tier": "front"}, {}, False, id="service-label-removed"),
])
def test_labels_correct_for_endpoints(ep_labels, svc_labels, want):
    """labelsCorrectForEndpoints (v1.33, kubernetes#130564)."""
    assert labels_correct_for_endpoints(ep_labels, svc_labels) is want


async def test_endpoints_without_managed_by_label_are_relabelled_once(harness, start):
    """Endpoints written before the label existed (or stripped by a user) get it back; the
    write after that is the last one."""
    h = harness
    await add_nodes(h)
    await make_pod(h, "a", ip="10.0.0.1")
    c = start()
    await h.client.create(SERVICES, service("web", selector={"app": "web"}), "default")

    async def written():
        ep = await get_or_none(h, ENDPOINTS, "web")
        return ep if ep and addr_names(ep, "addresses") == ["a"] else None

    ep = await h.eventually(written, what="endpoints written")
    assert ep["metadata"]["labels"] == {"tier": "front", **MANAGED}
    await h.eventually(lambda: _async(len(c.queue) == 0), what="queue drained")
    stripped = await h.mutate(ENDPOINTS, "web", lambda e: e["metadata"].update(labels={"tier": "front"}))
    # the running controller sees the change and writes the label back (driving `sync` by hand
    # as well would race it)
    async def relabelled():
        ep = await h.client.get(ENDPOINTS, "web", "default")
        return ep if ep["metadata"]["labels"] == {"tier": "front", **MANAGED} else None

    again = await h.eventually(relabelled, what="label restored")
    assert int(again["metadata"]["resourceVersion"]) > int(stripped["metadata"]["resourceVersion"])
    await h.eventually(lambda: _async(len(c.queue) == 0), what="queue drained")
    again = await h.client.get(ENDPOINTS, "web", "default")
    await _cached(h, c, again)
    await c.sync("default/web")  # steady state: no further write
    assert (await h.client.get(ENDPOINTS, "web", "default"))["metadata"]["resourceVersion"] \
        == again["metadata"]["resourceVersion"]


async def _cached(h, c: EndpointsController, obj: dict) -> None:
    rv = obj["metadata"]["resourceVersion"]

    async def seen():
        cur = c._ep_inf.store.get("default/web")
        return cur is not None and cur["metadata"]["resourceVersion"] == rv

    await h.eventually(seen, what=f"informer at {rv}")
