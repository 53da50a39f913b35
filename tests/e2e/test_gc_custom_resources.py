"""Garbage collection through custom-resource owners over HTTP, in the full cluster: a CRD
created while the cluster runs, an object owned by one of its custom resources, the owner
deleted with each propagation policy (as upstream's collector handles any kind)."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from minik3s.testing.wait import wait_for


def crd(group: str) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"crontabs.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]},
    }


@pytest.fixture(scope="module")
def group(http: httpx.Client) -> str:
    g = f"gc{uuid.uuid4().hex[:6]}.example.com"
    http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd(g)).raise_for_status()
    wait_for(lambda: http.get(f"/apis/{g}/v1").status_code == 200)
    return g


@pytest.mark.parametrize(("policy", "dependent_survives"), [
    pytest.param("Background", False, id="background-collects-the-dependent"),
    pytest.param("Foreground", False, id="foreground-collects-the-dependent-first"),
    pytest.param("Orphan", True, id="orphan-keeps-the-dependent-without-its-reference"),
])
def test_owner_custom_resource_deleted(http, ns, group, policy, dependent_survives):
    base = f"/apis/{group}/v1/namespaces/{ns}/crontabs"
    r = http.post(base, json={"apiVersion": f"{group}/v1", "kind": "CronTab", "metadata": {"name": "ct"}})
    assert r.status_code == 201, r.text
    owner = r.json()
    ref = {"apiVersion": f"{group}/v1", "kind": "CronTab", "name": "ct", "uid": owner["metadata"]["uid"],
           "blockOwnerDeletion": True}
    cm = f"/api/v1/namespaces/{ns}/configmaps"
    http.post(cm, json={"metadata": {"name": "dep", "ownerReferences": [ref]}}).raise_for_status()
    r = http.request("DELETE", f"{base}/ct", json={"propagationPolicy": policy})
    assert r.status_code in (200, 202), r.text
    wait_for(lambda: http.get(f"{base}/ct").status_code == 404)
    if dependent_survives:
        dep = wait_for(lambda: (d := http.get(f"{cm}/dep").json()) and not d["metadata"].get("ownerReferences")
                       and d)
        assert dep["metadata"]["name"] == "dep"
    else:
        wait_for(lambda: http.get(f"{cm}/dep").status_code == 404)


def test_deleting_the_crd_deletes_its_objects_then_the_kind_is_forgotten(http, ns):
    """The CRD's cleanup finalizer deletes every custom object (seen on a watch), their
    dependents follow them, the CRD goes, and then the kind is unknown: to discovery (404) and
    to the collector, which keeps an object whose owner is of that kind (upstream: a REST-mapping
    error, retried, never a deletion)."""
    g = f"gone{uuid.uuid4().hex[:6]}.example.com"
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    http.post(crds, json=crd(g)).raise_for_status()
    wait_for(lambda: http.get(f"/apis/{g}/v1").status_code == 200)
    base = f"/apis/{g}/v1/namespaces/{ns}/crontabs"
    cm = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(3):
        r = http.post(base, json={"apiVersion": f"{g}/v1", "kind": "CronTab", "metadata": {"name": f"ct{i}"}})
        assert r.status_code == 201, r.text
        ref = {"apiVersion": f"{g}/v1", "kind": "CronTab", "name": f"ct{i}", "uid": r.json()["metadata"]["uid"]}
        http.post(cm, json={"metadata": {"name": f"dep{i}", "ownerReferences": [ref]}}).raise_for_status()
    rv = http.get(base).json()["metadata"]["resourceVersion"]
    deleted: list[str] = []
    with http.stream("GET", base, params={"watch": "1", "resourceVersion": rv}, timeout=60) as resp:
        assert http.delete(f"{crds}/crontabs.{g}").status_code == 200
        for line in resp.iter_lines():
            ev = json.loads(line)
            if ev["type"] == "DELETED":
                deleted.append(ev["object"]["metadata"]["name"])
            if len(deleted) == 3:
                break
    assert sorted(deleted) == ["ct0", "ct1", "ct2"]
    wait_for(lambda: http.get(f"{crds}/crontabs.{g}").status_code == 404)
    for i in range(3):
        wait_for(lambda i=i: http.get(f"{cm}/dep{i}").status_code == 404)
    assert http.get(f"/apis/{g}/v1").status_code == 404
    assert http.get(base).status_code == 404
    assert all(x["name"] != g for x in http.get("/apis").json()["groups"])

    # the kind is unknown now: an object naming an owner of that kind stays, while a dangling
    # owner of a known kind is still collected (the collector is working)
    stale = {"apiVersion": f"{g}/v1", "kind": "CronTab", "name": "ct0", "uid": str(uuid.uuid4())}
    http.post(cm, json={"metadata": {"name": "stale", "ownerReferences": [stale]}}).raise_for_status()
    dangling = {"apiVersion": "v1", "kind": "ConfigMap", "name": "nope", "uid": str(uuid.uuid4())}
    http.post(cm, json={"metadata": {"name": "control", "ownerReferences": [dangling]}}).raise_for_status()
    wait_for(lambda: http.get(f"{cm}/control").status_code == 404)
    assert http.get(f"{cm}/stale").status_code == 200
