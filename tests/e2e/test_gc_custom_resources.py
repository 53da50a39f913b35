"""Garbage collection through custom-resource owners over HTTP, in the full cluster: a CRD
created while the cluster runs, an object owned by one of its custom resources, the owner
deleted with each propagation policy (as upstream's collector handles any kind)."""

from __future__ import annotations

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
