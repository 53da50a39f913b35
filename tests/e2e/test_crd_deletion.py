"""Deleting a CustomResourceDefinition on a real server, as kube-apiserver does it: the
`customresourcecleanup.apiextensions.k8s.io` finalizer removes the custom objects (condition
Terminating), a user finalizer keeps the CRD until it is removed, then the resource leaves
discovery and routing, and a re-created CRD starts empty."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from minik3s.testing.server import ServerProcess
from minik3s.testing.wait import wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CLEANUP = "customresourcecleanup.apiextensions.k8s.io"


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


def crd(group: str, *, finalizers: list[str] | None = None) -> dict:
    meta: dict = {"name": f"gadgets.{group}"}
    if finalizers:
        meta["finalizers"] = finalizers
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": meta,
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]},
    }


def served(http: httpx.Client, group: str) -> bool:
    return http.get(f"/apis/{group}/v1").status_code == 200


def in_discovery(http: httpx.Client, group: str) -> bool:
    return any(g["name"] == group for g in http.get("/apis").json()["groups"])


def make_gadgets(http: httpx.Client, group: str, ns: str, n: int) -> None:
    wait_for(lambda: served(http, group))
    for i in range(n):
        r = http.post(f"/apis/{group}/v1/namespaces/{ns}/gadgets",
                      json={"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": f"g{i}"},
                            "spec": {"size": i}})
        assert r.status_code == 201, r.text


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}


def test_a_user_finalizer_holds_the_crd_until_removed_then_it_leaves_discovery(http: httpx.Client, ns: str) -> None:
    group = f"hold-{uuid.uuid4().hex[:6]}.example.com"
    name = f"gadgets.{group}"
    r = http.post(CRDS, json=crd(group, finalizers=["example.com/hold"]))
    assert r.status_code == 201, r.text
    make_gadgets(http, group, ns, 3)

    r = http.delete(f"{CRDS}/{name}")
    assert r.status_code == 200, r.text
    assert r.json()["kind"] == "CustomResourceDefinition"  # the CRD, marked for deletion
    assert r.json()["metadata"]["deletionTimestamp"]

    # the cleanup finalizer removed every custom object and then itself; the user's stays
    def cleaned() -> bool:
        cur = http.get(f"{CRDS}/{name}").json()
        return cur["metadata"].get("finalizers") == ["example.com/hold"]

    wait_for(cleaned)
    cur = http.get(f"{CRDS}/{name}").json()
    term = conditions(cur)["Terminating"]
    assert (term["status"], term["reason"]) == ("True", "InstanceDeletionCompleted")
    assert served(http, group) and in_discovery(http, group)  # still served while it exists
    lst = http.get(f"/apis/{group}/v1/namespaces/{ns}/gadgets")
    assert lst.status_code == 200 and lst.json()["items"] == []
    r = http.post(f"/apis/{group}/v1/namespaces/{ns}/gadgets",
                  json={"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "late"}})
    assert r.status_code == 405, r.text
    assert r.json()["message"] == "create not allowed while custom resource definition is terminating"

    # the user removes their finalizer: the CRD goes, and with it the resource
    r = http.patch(f"{CRDS}/{name}", content=b'{"metadata":{"finalizers":null}}',
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    assert http.get(f"{CRDS}/{name}").status_code == 404
    assert not served(http, group)
    assert not in_discovery(http, group)
    assert http.get(f"/apis/{group}/v1/namespaces/{ns}/gadgets").status_code == 404


def test_a_held_custom_object_keeps_the_crd_terminating_until_it_goes(http: httpx.Client, ns: str) -> None:
    group = f"obj-{uuid.uuid4().hex[:6]}.example.com"
    name = f"gadgets.{group}"
    http.post(CRDS, json=crd(group)).raise_for_status()
    make_gadgets(http, group, ns, 2)
    obj_url = f"/apis/{group}/v1/namespaces/{ns}/gadgets/g1"
    r = http.patch(obj_url, content=b'{"metadata":{"finalizers":["example.com/keep"]}}',
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text

    assert http.delete(f"{CRDS}/{name}").status_code == 200
    cur = http.get(f"{CRDS}/{name}").json()
    assert CLEANUP in cur["metadata"]["finalizers"]
    assert conditions(cur)["Terminating"]["reason"] == "InstanceDeletionInProgress"
    held = http.get(obj_url).json()
    assert held["metadata"]["deletionTimestamp"]  # deleted, held by its own finalizer
    assert http.get(f"/apis/{group}/v1/namespaces/{ns}/gadgets/g0").status_code == 404

    r = http.patch(obj_url, content=b'{"metadata":{"finalizers":null}}',
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    wait_for(lambda: http.get(f"{CRDS}/{name}").status_code == 404)
    assert not in_discovery(http, group)


def test_a_recreated_crd_starts_empty(http: httpx.Client, ns: str) -> None:
    group = f"again-{uuid.uuid4().hex[:6]}.example.com"
    name = f"gadgets.{group}"
    http.post(CRDS, json=crd(group, finalizers=["example.com/hold"])).raise_for_status()
    make_gadgets(http, group, ns, 4)
    assert http.delete(f"{CRDS}/{name}").status_code == 200
    http.patch(f"{CRDS}/{name}", content=b'{"metadata":{"finalizers":null}}',
               headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
    wait_for(lambda: http.get(f"{CRDS}/{name}").status_code == 404)

    r = http.post(CRDS, json=crd(group))
    assert r.status_code == 201, r.text
    wait_for(lambda: served(http, group))
    lst = http.get(f"/apis/{group}/v1/namespaces/{ns}/gadgets")
    assert lst.status_code == 200 and lst.json()["items"] == []
    all_ns = http.get(f"/apis/{group}/v1/gadgets").json()
    assert all_ns["items"] == []
    assert conditions(http.get(f"{CRDS}/{name}").json())["Established"]["status"] == "True"


def test_deleting_a_crd_without_finalizers_removes_it_and_its_objects(http: httpx.Client, ns: str) -> None:
    group = f"plain-{uuid.uuid4().hex[:6]}.example.com"
    name = f"gadgets.{group}"
    http.post(CRDS, json=crd(group)).raise_for_status()
    make_gadgets(http, group, ns, 2)
    r = http.delete(f"{CRDS}/{name}")
    assert r.status_code == 200, r.text
    wait_for(lambda: http.get(f"{CRDS}/{name}").status_code == 404)
    assert not served(http, group) and not in_discovery(http, group)
    r = http.delete(f"{CRDS}/{name}")
    assert r.status_code == 404 and r.json()["reason"] == "NotFound"


def test_a_crd_recreated_with_another_schema_validates_with_the_new_one(http: httpx.Client, ns: str) -> None:
    group = f"schema-{uuid.uuid4().hex[:6]}.example.com"
    name = f"gadgets.{group}"
    url = f"/apis/{group}/v1/namespaces/{ns}/gadgets"
    http.post(CRDS, json=crd(group)).raise_for_status()
    make_gadgets(http, group, ns, 1)  # size: integer
    assert http.delete(f"{CRDS}/{name}").status_code == 200
    wait_for(lambda: http.get(f"{CRDS}/{name}").status_code == 404)

    again = crd(group)
    again["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = {
        "size": {"type": "string", "enum": ["small", "big"]}, "color": {"type": "string"}}
    r = http.post(CRDS, json=again)
    assert r.status_code == 201, r.text
    wait_for(lambda: served(http, group))
    body = {"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "new"},
            "spec": {"size": "big", "color": "red", "weight": 3}}
    r = http.post(url, json=body)
    assert r.status_code == 201, r.text
    assert r.json()["spec"] == {"size": "big", "color": "red"}  # pruned by the new schema
    r = http.post(url, json={**body, "metadata": {"name": "old-shape"}, "spec": {"size": 3}})
    assert r.status_code == 422, r.text
    causes = r.json()["details"]["causes"]
    assert [c["field"] for c in causes] == ["spec.size"], causes
    # what clients read from OpenAPI is the new schema too
    doc = http.get(f"/openapi/v3/apis/{group}/v1").json()
    schema = next(v for k, v in doc["components"]["schemas"].items() if k.endswith(".Gadget"))
    assert set(schema["properties"]["spec"]["properties"]) == {"size", "color"}
    # and the kind resolves to the new definition in discovery
    res = next(r for r in http.get(f"/apis/{group}/v1").json()["resources"] if r["name"] == "gadgets")
    assert res["kind"] == "Gadget"
