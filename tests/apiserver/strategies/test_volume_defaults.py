"""Volume source defaults (pkg/apis/core/v1 SetDefaults_Volume, SetDefaults_*VolumeSource and the
v1 types' `+default` markers), as a created Pod and a Deployment's template store them. Through
the real `ApiCore` (tests/apiserver/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.core import ApiCore

MOUNT = [{"name": "v", "mountPath": "/data"}]


def _pod(volume: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p"},
            "spec": {"serviceAccountName": "default",
                     "containers": [{"name": "c", "image": "busybox", "volumeMounts": MOUNT}],
                     "volumes": [{"name": "v", **volume}]}}


CASES = [
    pytest.param({}, {"emptyDir": {}}, id="no-source-is-emptyDir"),
    pytest.param({"secret": {"secretName": "s"}}, {"secret": {"secretName": "s", "defaultMode": 420}},
                 id="secret-defaultMode"),
    pytest.param({"secret": {"secretName": "s", "defaultMode": 256}},
                 {"secret": {"secretName": "s", "defaultMode": 256}}, id="secret-defaultMode-kept"),
    pytest.param({"configMap": {"name": "c"}}, {"configMap": {"name": "c", "defaultMode": 420}},
                 id="configMap-defaultMode"),
    pytest.param({"hostPath": {"path": "/tmp"}}, {"hostPath": {"path": "/tmp", "type": ""}}, id="hostPath-type"),
    pytest.param({"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                 {"downwardAPI": {"defaultMode": 420, "items": [
                     {"path": "n", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}]}},
                 id="downwardAPI-defaultMode-and-fieldRef-apiVersion"),
    pytest.param({"projected": {"sources": [
                     {"serviceAccountToken": {"path": "t", "audience": "vault"}},
                     {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}},
                 {"projected": {"defaultMode": 420, "sources": [
                     {"serviceAccountToken": {"path": "t", "audience": "vault", "expirationSeconds": 3600}},
                     {"downwardAPI": {"items": [
                         {"path": "ns", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}},
                 id="projected-token-expiration-and-defaultMode"),
    pytest.param({"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0}},
                 {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0,
                            "iscsiInterface": "default"}}, id="iscsi-interface"),
    pytest.param({"rbd": {"monitors": ["10.0.0.1:6789"], "image": "img"}},
                 {"rbd": {"monitors": ["10.0.0.1:6789"], "image": "img", "pool": "rbd", "user": "admin",
                          "keyring": "/etc/ceph/keyring"}}, id="rbd-pool-user-keyring"),
    pytest.param({"azureDisk": {"diskName": "d", "diskURI": "https://example.blob.core.windows.net/vhds/d.vhd"}},
                 {"azureDisk": {"diskName": "d", "diskURI": "https://example.blob.core.windows.net/vhds/d.vhd",
                                "cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False, "kind": "Shared"}},
                 id="azureDisk-pointer-defaults"),
    pytest.param({"scaleIO": {"gateway": "https://gateway", "system": "sys", "secretRef": {"name": "s"},
                              "volumeName": "v"}},
                 {"scaleIO": {"gateway": "https://gateway", "system": "sys", "secretRef": {"name": "s"},
                              "volumeName": "v", "storageMode": "ThinProvisioned", "fsType": "xfs"}},
                 id="scaleIO-mode-and-fsType"),
    pytest.param({"ephemeral": {"volumeClaimTemplate": {"spec": {
                     "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
                 {"ephemeral": {"volumeClaimTemplate": {"spec": {
                     "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                     "volumeMode": "Filesystem"}}}}, id="ephemeral-claim-volumeMode"),
]


@pytest.mark.parametrize(("volume", "stored"), CASES)
async def test_a_pods_volume_is_stored_with_its_sources_defaults(core: ApiCore, volume: dict[str, Any],
                                                                 stored: dict[str, Any]) -> None:
    pods = core.registry.get("", "v1", "pods")
    assert pods is not None
    out = await core.create(pods, "default", _pod(volume))
    assert out["spec"]["volumes"][0] == {"name": "v", **stored}


async def test_a_templates_volumes_get_the_same_defaults(core: ApiCore) -> None:
    deployments = core.registry.get("apps", "v1", "deployments")
    assert deployments is not None
    pod = _pod({"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}})
    pod["metadata"] = {"labels": {"app": "a"}}
    body = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": pod}}
    out = await core.create(deployments, "default", body)
    assert out["spec"]["template"]["spec"]["volumes"][0] == {"name": "v", "downwardAPI": {
        "defaultMode": 420, "items": [{"path": "n", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}]}}
