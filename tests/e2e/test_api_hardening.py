"""Hardening (issue 17): out-of-range integers, malformed DeleteOptions, size limits, YAML
alias bombs, watch parameters and contended writes, all answered as kube-apiserver answers them,
over HTTP against a real server; nothing bad is stored and /readyz stays up."""

from __future__ import annotations

import uuid

import httpx
import pytest

from minik3s.testing.server import ServerProcess


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess):
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


@pytest.fixture(scope="module")
def ns(http) -> str:
    name = "hard-" + uuid.uuid4().hex[:6]
    http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
    return name


def status_of(r: httpx.Response, code: int, reason: str) -> dict:
    assert r.status_code == code, r.text
    st = r.json()
    assert st["kind"] == "Status" and st["status"] == "Failure" and st["code"] == code and st["reason"] == reason, st
    return st


def deployment(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def job(name: str, **spec: int) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {**spec, "template": {"spec": {"restartPolicy": "Never",
                                                   "containers": [{"name": "c", "image": "busybox"}]}}}}


# ---------------------------------------------------------------- int32 / int64 ranges
def test_int32_overflow_is_refused_at_decoding(http, ns):
    r = http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("big", 2**31))
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
                             'number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32')
    assert http.get(f"/apis/apps/v1/namespaces/{ns}/deployments/big").status_code == 404
    # the largest int32 decodes (validation, not decoding, has the last word on it)
    r = http.post(f"/apis/apps/v1/namespaces/{ns}/deployments?dryRun=All", json=deployment("edge", 2**31 - 1))
    assert r.status_code == 201, r.text


def test_job_parallelism_and_int64_fields_are_range_checked(http, ns):
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("par", parallelism=2**31))
    st = status_of(r, 400, "BadRequest")
    assert "number 2147483648 into Go struct field JobSpec.spec.parallelism of type int32" in st["message"]
    # activeDeadlineSeconds is an int64: 2^40 is fine, 2^63 is not
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs?dryRun=All", json=job("ads", activeDeadlineSeconds=2**40))
    assert r.status_code == 201, r.text
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("ads", activeDeadlineSeconds=2**63))
    st = status_of(r, 400, "BadRequest")
    assert "JobSpec.spec.activeDeadlineSeconds of type int64" in st["message"]
    assert http.get(f"/apis/batch/v1/namespaces/{ns}/jobs").json()["items"] == []


def test_patch_and_scale_cannot_overflow_replicas(http, ns):
    http.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web", 0)).raise_for_status()
    base = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
    r = http.patch(base, json={"spec": {"replicas": 2**31}}, headers={"Content-Type": "application/merge-patch+json"})
    st = status_of(r, 422, "Invalid")
    assert "of type int32" in st["message"]
    r = http.put(base + "/scale", json={"apiVersion": "autoscaling/v1", "kind": "Scale",
                                        "metadata": {"name": "web", "namespace": ns}, "spec": {"replicas": 2**40}})
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == ('Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal number '
                             '1099511627776 into Go struct field ScaleSpec.spec.replicas of type int32')
    r = http.patch(base + "/scale", json={"spec": {"replicas": 2**40}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 400 and "ScaleSpec.spec.replicas of type int32" in r.json()["message"]
    assert http.get(base).json()["spec"]["replicas"] == 0


# ---------------------------------------------------------------- DeleteOptions
@pytest.mark.parametrize(("body", "message"), [
    ({"preconditions": "x"},
     "json: cannot unmarshal string into Go struct field DeleteOptions.preconditions of type v1.Preconditions"),
    ({"gracePeriodSeconds": "soon"},
     "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
    ({"preconditions": {"uid": 5}},
     "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type string"),
    ({"dryRun": "All"}, "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string"),
])
def test_malformed_delete_options_are_400(http, ns, body, message):
    name = "keep-" + uuid.uuid4().hex[:6]
    http.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": name}}).raise_for_status()
    r = http.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/{name}", json=body)
    st = status_of(r, 400, "BadRequest")
    assert st["message"] == message
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/{name}").status_code == 200
    assert http.get("/readyz").status_code == 200
