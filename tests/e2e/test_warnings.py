"""Warnings a real `minik3s server` sends about pods, pod templates and storage, over HTTP and as
kubectl 1.33 prints them (`Warning: <text>` on stderr): v1.33's WarningsOnCreate /
WarningsOnUpdate of pods (GetWarningsForPod, the AppArmor version skew), of the workloads that
carry a pod template (only when an update changes it) and of PersistentVolumeClaims.

The server is the module's API-only process (`minik3s_api`): pods stay Pending, which is all
these need.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from minik3s.testing.server import ServerProcess
from tests.e2e.warning_headers import warnings_of

MERGE = {"Content-Type": "application/merge-patch+json"}
DUP_ENV = 'spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply'
FRACTIONAL = 'spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer'


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        yield c


def container(**extra: Any) -> dict[str, Any]:
    return {"name": "c", "image": "nginx:1.25", **extra}


def noisy_container() -> dict[str, Any]:
    """A duplicate env var that hides the first, and a fractional memory request."""
    return container(env=[{"name": "X", "value": "1"}, {"name": "X", "value": "2"}],
                     resources={"requests": {"memory": "1.5"}})


def deployment(name: str, c: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [c]}}}}


def test_pod_create_warns_about_duplicate_env_and_fractional_memory(http: httpx.Client, ns: str) -> None:
    r = http.post(f"/api/v1/namespaces/{ns}/pods", json={"metadata": {"name": "noisy"},
                                                         "spec": {"containers": [noisy_container()]}})
    assert r.status_code == 201, r.text
    assert warnings_of(r) == [FRACTIONAL, DUP_ENV]
    # a pod without these features gets no Warning header at all
    r = http.post(f"/api/v1/namespaces/{ns}/pods", json={"metadata": {"name": "quiet"},
                                                         "spec": {"containers": [container()]}})
    assert r.status_code == 201, r.text
    assert "Warning" not in r.headers
    # updates of pods never warn (upstream skips them: pods are updated often, by controllers)
    r = http.patch(f"/api/v1/namespaces/{ns}/pods/noisy", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert r.status_code == 200, r.text
    assert "Warning" not in r.headers


def test_pod_name_and_apparmor_annotation_warn(http: httpx.Client, ns: str) -> None:
    """A name that is no DNS label warns (it becomes the hostname); a deprecated AppArmor
    annotation becomes the container's appArmorProfile field and warns."""
    key = "container.apparmor.security.beta.kubernetes.io/c"
    r = http.post(f"/api/v1/namespaces/{ns}/pods", json={
        "metadata": {"name": "a.b", "annotations": {key: "runtime/default"}}, "spec": {"containers": [container()]}})
    assert r.status_code == 201, r.text
    assert warnings_of(r) == [
        f'metadata.annotations[{key}]: deprecated since v1.30; use the "appArmorProfile" field instead',
        "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is "
        "recommended: [must not contain dots]"]
    stored = http.get(f"/api/v1/namespaces/{ns}/pods/a.b").json()
    assert stored["spec"]["containers"][0]["securityContext"] == {"appArmorProfile": {"type": "RuntimeDefault"}}


def test_deployment_warns_on_create_and_when_an_update_changes_the_template(http: httpx.Client, ns: str) -> None:
    base = f"/apis/apps/v1/namespaces/{ns}/deployments"
    r = http.post(base, json=deployment("web", container()))
    assert r.status_code == 201, r.text
    assert "Warning" not in r.headers

    # a template change: warnings under spec.template
    dep = r.json()
    dep["spec"]["template"]["spec"]["containers"] = [noisy_container()]
    r = http.put(f"{base}/web", json=dep)
    assert r.status_code == 200, r.text
    assert warnings_of(r) == ["spec.template." + FRACTIONAL, "spec.template." + DUP_ENV]

    # a label change leaves the generation (and so the template's warnings) alone
    r = http.patch(f"{base}/web", json={"metadata": {"labels": {"tier": "front"}}}, headers=MERGE)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["generation"] == 2
    assert "Warning" not in r.headers

    # a status update gives none
    dep = r.json()
    dep["status"] = {"observedGeneration": 2, "replicas": 0}
    r = http.put(f"{base}/web/status", json=dep)
    assert r.status_code == 200, r.text
    assert "Warning" not in r.headers

    # a create of a deployment whose template is noisy, named with a dot
    r = http.post(base, json=deployment("web.v2", noisy_container()))
    assert r.status_code == 201, r.text
    assert warnings_of(r)[0].startswith("metadata.name: this is used in Pod names and hostnames, which can result in "
                                        "surprising behavior; a DNS label is recommended: [")
    assert warnings_of(r)[1:] == ["spec.template." + FRACTIONAL, "spec.template." + DUP_ENV]


def test_dry_run_create_warns_too(http: httpx.Client, ns: str) -> None:
    r = http.post(f"/api/v1/namespaces/{ns}/pods?dryRun=All",
                  json={"metadata": {"name": "dry"}, "spec": {"containers": [noisy_container()]}})
    assert r.status_code == 201, r.text
    assert warnings_of(r) == [FRACTIONAL, DUP_ENV]
    assert http.get(f"/api/v1/namespaces/{ns}/pods/dry").status_code == 404


def test_pvc_with_fractional_storage_and_beta_class_annotation_warns(http: httpx.Client, ns: str) -> None:
    r = http.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json={
        "metadata": {"name": "claim", "annotations": {"volume.beta.kubernetes.io/storage-class": "standard"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1500m"}}}})
    assert r.status_code == 201, r.text
    assert warnings_of(r) == [
        'metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" '
        "attribute instead",
        'spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer']


def test_kubectl_apply_prints_the_warnings(kubectl_bin: Path, minik3s_api: ServerProcess, tmp_path: Path,
                                           http: httpx.Client, ns: str) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "applied"},
                                        "spec": {"containers": [noisy_container()]}}))
    r = subprocess.run([str(kubectl_bin), "--kubeconfig", str(minik3s_api.kubeconfig), "--cache-dir",
                        str(tmp_path / "cache"), "-n", ns, "apply", "-f", str(manifest)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "pod/applied created"
    assert [line for line in r.stderr.splitlines() if line.startswith("Warning: ")] == [
        f"Warning: {FRACTIONAL}", f"Warning: {DUP_ENV}"]
