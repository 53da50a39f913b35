"""Decoding reaches every nested field of the built-in kinds: volume sources, projections,
security contexts, lifecycle handlers, DNS options, the Service, Node, PersistentVolume(Claim),
Endpoints and workload structs are typed as upstream's Go structs (k8s.io/api v1.33), so

- a value of the wrong JSON type deep inside is kube-apiserver's 400, naming the innermost Go
  struct, the dotted JSON path without indexes and the field's Go type (named string types and
  ResourceList included): `json: cannot unmarshal bool into Go struct field
  DownwardAPIVolumeFile.spec.volumes.downwardAPI.items.path of type string` (what `kubectl apply`
  of `path: n`, a YAML 1.1 boolean, got);
- a field a nested struct does not declare is an unknown field with its full path
  (`spec.volumes[0].secret.bogus`): refused under fieldValidation=Strict, dropped with a warning
  under Warn;
- every field of every volume source (and persistent volume source) is kept, and maps that are
  free-form upstream (a CSI volume's `volumeAttributes`, flexVolume `options`, template labels,
  a ControllerRevision's `data`) stay free-form.

Wrong types go through the HTTP handler's decode check (a real API server, `minik3s_api`) and
`kubectl apply` (the real kubectl 1.33); unknown fields and round trips through the real `ApiCore`.
"""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from apiserver.core import ApiCore
from minik3s.api.errors import BadRequestError, NotFoundError
from minik3s.api.options import WriteOptions
from minik3s.testing.server import ServerProcess

JsonDict = dict[str, Any]


def res(core: ApiCore, group: str, version: str, resource: str):
    info = core.registry.get(group, version, resource)
    assert info is not None
    return info


def pod(name: str = "p", *, volumes: list[JsonDict] | None = None, **spec: Any) -> JsonDict:
    body: JsonDict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                      "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}
    if volumes is not None:
        body["spec"]["volumes"] = volumes
    return body


def container(**fields: Any) -> list[JsonDict]:
    return [{"name": "c", "image": "nginx", **fields}]


def deployment(name: str, template_spec: JsonDict) -> JsonDict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": template_spec}}}


def statefulset(name: str, **spec: Any) -> JsonDict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, "serviceName": name,
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, **spec}}


# ---------------------------------------------------------------- wrong JSON types, over HTTP
POD = ("/api/v1/namespaces/{ns}/pods", 'Pod in version "v1" cannot be handled as a Pod: ')
SERVICE = ("/api/v1/namespaces/{ns}/services", 'Service in version "v1" cannot be handled as a Service: ')
PVC = ("/api/v1/namespaces/{ns}/persistentvolumeclaims",
       'PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: ')
PV = ("/api/v1/persistentvolumes",
      'PersistentVolume in version "v1" cannot be handled as a PersistentVolume: ')
ENDPOINTS = ("/api/v1/namespaces/{ns}/endpoints", 'Endpoints in version "v1" cannot be handled as a Endpoints: ')
NODE = ("/api/v1/nodes", 'Node in version "v1" cannot be handled as a Node: ')
QUOTA = ("/api/v1/namespaces/{ns}/resourcequotas",
         'ResourceQuota in version "v1" cannot be handled as a ResourceQuota: ')
DEPLOYMENT = ("/apis/apps/v1/namespaces/{ns}/deployments",
              'Deployment in version "v1" cannot be handled as a Deployment: ')
STATEFULSET = ("/apis/apps/v1/namespaces/{ns}/statefulsets",
               'StatefulSet in version "v1" cannot be handled as a StatefulSet: ')
SECRET = ("/api/v1/namespaces/{ns}/secrets", 'Secret in version "v1" cannot be handled as a Secret: ')
PDB = ("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
       'PodDisruptionBudget in version "v1" cannot be handled as a PodDisruptionBudget: ')


def _pvc(name: str, **spec: Any) -> JsonDict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}


def _pv(name: str, **spec: Any) -> JsonDict:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], **spec}}


WRONG_TYPES = [
    pytest.param(POD, pod("dapi-path", volumes=[{"name": "v", "downwardAPI": {"items": [
        {"path": False, "fieldRef": {"fieldPath": "metadata.name"}}]}}]),
        "json: cannot unmarshal bool into Go struct field DownwardAPIVolumeFile.spec.volumes.downwardAPI.items.path "
        "of type string", id="downwardAPI-item-path-yaml-boolean"),
    pytest.param(POD, pod("secret-name", volumes=[{"name": "v", "secret": {"secretName": 5}}]),
                 "json: cannot unmarshal number into Go struct field SecretVolumeSource.spec.volumes.secret.secretName "
                 "of type string", id="secret-secretName-number"),
    pytest.param(POD, pod("secret-scalar", volumes=[{"name": "v", "secret": "s"}]),
                 "json: cannot unmarshal string into Go struct field Volume.spec.volumes.secret of type "
                 "v1.SecretVolumeSource", id="secret-source-not-an-object"),
    pytest.param(POD, pod("secret-mode", volumes=[{"name": "v", "secret": {"secretName": "s", "defaultMode": "0644"}}]),
                 "json: cannot unmarshal string into Go struct field SecretVolumeSource.spec.volumes.secret.defaultMode "
                 "of type int32", id="secret-defaultMode-string"),
    pytest.param(POD, pod("cm-key", volumes=[{"name": "v", "configMap": {"name": "c", "items": [
        {"key": 1, "path": "p"}]}}]),
        "json: cannot unmarshal number into Go struct field KeyToPath.spec.volumes.configMap.items.key of type string",
        id="configMap-item-key-number"),
    pytest.param(POD, pod("cm-optional", volumes=[{"name": "v", "configMap": {"name": "c", "optional": "yes"}}]),
                 "json: cannot unmarshal string into Go struct field ConfigMapVolumeSource.spec.volumes.configMap."
                 "optional of type bool", id="configMap-optional-string"),
    pytest.param(POD, pod("token-exp", volumes=[{"name": "v", "projected": {"sources": [
        {"serviceAccountToken": {"path": "t", "expirationSeconds": "1h"}}]}}]),
        "json: cannot unmarshal string into Go struct field ServiceAccountTokenProjection.spec.volumes.projected."
        "sources.serviceAccountToken.expirationSeconds of type int64", id="projected-token-expirationSeconds-string"),
    pytest.param(POD, pod("proj-mode", volumes=[{"name": "v", "projected": {"sources": [
        {"configMap": {"name": "c", "items": [{"key": "k", "path": "p", "mode": 1.5}]}}]}}]),
        "json: cannot unmarshal number 1.5 into Go struct field KeyToPath.spec.volumes.projected.sources.configMap."
        "items.mode of type int32", id="projected-configMap-item-mode-fraction"),
    pytest.param(POD, pod("proj-sources", volumes=[{"name": "v", "projected": {"sources": {"secret": {}}}}]),
                 "json: cannot unmarshal object into Go struct field ProjectedVolumeSource.spec.volumes.projected."
                 "sources of type []v1.VolumeProjection", id="projected-sources-object"),
    pytest.param(POD, pod("hostpath-type", volumes=[{"name": "v", "hostPath": {"path": "/d", "type": True}}]),
                 "json: cannot unmarshal bool into Go struct field HostPathVolumeSource.spec.volumes.hostPath.type of "
                 "type v1.HostPathType", id="hostPath-type-named-string-type"),
    pytest.param(POD, pod("emptydir-medium", volumes=[{"name": "v", "emptyDir": {"medium": 1}}]),
                 "json: cannot unmarshal number into Go struct field EmptyDirVolumeSource.spec.volumes.emptyDir.medium "
                 "of type v1.StorageMedium", id="emptyDir-medium-number"),
    pytest.param(POD, pod("nfs-ro", volumes=[{"name": "v", "nfs": {"server": "s", "path": "/", "readOnly": "true"}}]),
                 "json: cannot unmarshal string into Go struct field NFSVolumeSource.spec.volumes.nfs.readOnly of type "
                 "bool", id="nfs-readOnly-string"),
    pytest.param(POD, pod("iscsi-lun", volumes=[{"name": "v", "iscsi": {"targetPortal": "t", "iqn": "i", "lun": "0"}}]),
                 "json: cannot unmarshal string into Go struct field ISCSIVolumeSource.spec.volumes.iscsi.lun of type "
                 "int32", id="iscsi-lun-string"),
    pytest.param(POD, pod("csi-attrs", volumes=[{"name": "v", "csi": {"driver": "d", "volumeAttributes": {"a": 1}}}]),
                 "json: cannot unmarshal number into Go struct field CSIVolumeSource.spec.volumes.csi.volumeAttributes "
                 "of type string", id="csi-volumeAttributes-value-number"),
    pytest.param(POD, pod("eph-modes", volumes=[{"name": "v", "ephemeral": {"volumeClaimTemplate": {
        "spec": {"accessModes": "ReadWriteOnce"}}}}]),
        "json: cannot unmarshal string into Go struct field PersistentVolumeClaimSpec.spec.volumes.ephemeral."
        "volumeClaimTemplate.spec.accessModes of type []v1.PersistentVolumeAccessMode",
        id="ephemeral-accessModes-not-a-list"),
    pytest.param(POD, pod("caps", containers=container(securityContext={"capabilities": {"drop": "ALL"}})),
                 "json: cannot unmarshal string into Go struct field Capabilities.spec.containers.securityContext."
                 "capabilities.drop of type []v1.Capability", id="capabilities-drop-not-a-list"),
    pytest.param(POD, pod("selinux", containers=container(securityContext={"seLinuxOptions": {"level": True}})),
                 "json: cannot unmarshal bool into Go struct field SELinuxOptions.spec.containers.securityContext."
                 "seLinuxOptions.level of type string", id="seLinuxOptions-level-bool"),
    pytest.param(POD, pod("windows", containers=container(securityContext={"windowsOptions": {"hostProcess": "no"}})),
                 "json: cannot unmarshal string into Go struct field WindowsSecurityContextOptions.spec.containers."
                 "securityContext.windowsOptions.hostProcess of type bool", id="windowsOptions-hostProcess-string"),
    pytest.param(POD, pod("seccomp", securityContext={"seccompProfile": {"type": 1}}),
                 "json: cannot unmarshal number into Go struct field SeccompProfile.spec.securityContext.seccompProfile."
                 "type of type v1.SeccompProfileType", id="pod-seccompProfile-type-number"),
    pytest.param(POD, pod("sysctl", securityContext={"sysctls": [{"name": "kernel.shm_rmid_forced", "value": 1}]}),
                 "json: cannot unmarshal number into Go struct field Sysctl.spec.securityContext.sysctls.value of type "
                 "string", id="sysctl-value-number"),
    pytest.param(POD, pod("dns", dnsConfig={"options": [{"name": "ndots", "value": 2}]}),
                 "json: cannot unmarshal number into Go struct field PodDNSConfigOption.spec.dnsConfig.options.value of "
                 "type string", id="dnsConfig-option-value-number"),
    pytest.param(POD, pod("sleep", containers=container(lifecycle={"preStop": {"sleep": {"seconds": "5"}}})),
                 "json: cannot unmarshal string into Go struct field SleepAction.spec.containers.lifecycle.preStop.sleep."
                 "seconds of type int64", id="preStop-sleep-seconds-string"),
    pytest.param(POD, pod("envfrom", containers=container(envFrom=[{"secretRef": {"name": "s", "optional": "y"}}])),
                 "json: cannot unmarshal string into Go struct field SecretEnvSource.spec.containers.envFrom.secretRef."
                 "optional of type bool", id="envFrom-secretRef-optional-string"),
    pytest.param(POD, pod("envkey", containers=container(env=[{"name": "E", "valueFrom": {
        "configMapKeyRef": {"name": "c", "key": 1}}}])),
        "json: cannot unmarshal number into Go struct field ConfigMapKeySelector.spec.containers.env.valueFrom."
        "configMapKeyRef.key of type string", id="configMapKeyRef-key-number"),
    pytest.param(POD, pod("pull", containers=container(imagePullPolicy=1)),
                 "json: cannot unmarshal number into Go struct field Container.spec.containers.imagePullPolicy of type "
                 "v1.PullPolicy", id="imagePullPolicy-named-string-type"),
    pytest.param(POD, pod("limits", containers=container(resources={"limits": "1"})),
                 "json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources."
                 "limits of type v1.ResourceList", id="resources-limits-not-a-map"),
    pytest.param(POD, pod("anti", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}),
                 "json: cannot unmarshal object into Go struct field PodAntiAffinity.spec.affinity.podAntiAffinity."
                 "requiredDuringSchedulingIgnoredDuringExecution of type []v1.PodAffinityTerm",
                 id="podAntiAffinity-terms-object"),
    pytest.param(SERVICE, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "affinity"}, "spec": {
        "ports": [{"port": 80}], "sessionAffinity": "ClientIP",
        "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": "3h"}}}},
        "json: cannot unmarshal string into Go struct field ClientIPConfig.spec.sessionAffinityConfig.clientIP."
        "timeoutSeconds of type int32", id="service-clientIP-timeoutSeconds-string"),
    pytest.param(SERVICE, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "family"}, "spec": {
        "ports": [{"port": 80}], "ipFamilyPolicy": True}},
        "json: cannot unmarshal bool into Go struct field ServiceSpec.spec.ipFamilyPolicy of type v1.IPFamilyPolicy",
        id="service-ipFamilyPolicy-bool"),
    pytest.param(PVC, _pvc("modes", accessModes="ReadWriteOnce"),
                 "json: cannot unmarshal string into Go struct field PersistentVolumeClaimSpec.spec.accessModes of type "
                 "[]v1.PersistentVolumeAccessMode", id="pvc-accessModes-not-a-list"),
    pytest.param(PVC, _pvc("source", dataSource={"kind": "VolumeSnapshot", "name": 3}),
                 "json: cannot unmarshal number into Go struct field TypedLocalObjectReference.spec.dataSource.name of "
                 "type string", id="pvc-dataSource-name-number"),
    pytest.param(PV, _pv("nfs", nfs={"server": 1, "path": "/"}),
                 "json: cannot unmarshal number into Go struct field NFSVolumeSource.spec.nfs.server of type string",
                 id="pv-nfs-server-number"),
    pytest.param(PV, _pv("csi", csi={"driver": "d", "volumeHandle": "h",
                                     "nodePublishSecretRef": {"name": "s", "namespace": False}}),
                 "json: cannot unmarshal bool into Go struct field SecretReference.spec.csi.nodePublishSecretRef."
                 "namespace of type string", id="pv-csi-secretRef-namespace-bool"),
    pytest.param(ENDPOINTS, {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep"}, "subsets": [
        {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": "80"}]}]},
        "json: cannot unmarshal string into Go struct field EndpointPort.subsets.ports.port of type int32",
        id="endpoints-port-string"),
    pytest.param(NODE, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-config"}, "spec": {
        "configSource": {"configMap": {"namespace": "kube-system", "name": 1, "kubeletConfigKey": "k"}}}},
        "json: cannot unmarshal number into Go struct field ConfigMapNodeConfigSource.spec.configSource.configMap."
        "name of type string", id="node-configSource-name-number"),
    pytest.param(QUOTA, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {
        "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": "high"}]}}},
        "json: cannot unmarshal string into Go struct field ScopedResourceSelectorRequirement.spec.scopeSelector."
        "matchExpressions.values of type []string", id="quota-scopeSelector-values-not-a-list"),
    pytest.param(DEPLOYMENT, deployment("tmpl", {"containers": container(), "volumes": [
        {"name": "v", "secret": {"secretName": 5}}]}),
        "json: cannot unmarshal number into Go struct field SecretVolumeSource.spec.template.spec.volumes.secret."
        "secretName of type string", id="deployment-template-secret-secretName-number"),
    pytest.param(STATEFULSET, statefulset("claims", volumeClaimTemplates=[
        {"metadata": {"name": "data"}, "spec": {"accessModes": "ReadWriteOnce"}}]),
        "json: cannot unmarshal string into Go struct field PersistentVolumeClaimSpec.spec.volumeClaimTemplates.spec."
        "accessModes of type []v1.PersistentVolumeAccessMode", id="statefulset-claim-template-accessModes"),
    pytest.param(STATEFULSET, statefulset("retention", persistentVolumeClaimRetentionPolicy={"whenDeleted": 1}),
                 "json: cannot unmarshal number into Go struct field StatefulSetPersistentVolumeClaimRetentionPolicy."
                 "spec.persistentVolumeClaimRetentionPolicy.whenDeleted of type "
                 "v1.PersistentVolumeClaimRetentionPolicyType", id="statefulset-retention-policy-number"),
    pytest.param(SECRET, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bytes"}, "data": {"k": 1}},
                 "json: cannot unmarshal number into Go struct field Secret.data of type []uint8",
                 id="secret-data-value-number-into-bytes"),
    pytest.param(PDB, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
                       "spec": {"minAvailable": 1, "unhealthyPodEvictionPolicy": False}},
                 "json: cannot unmarshal bool into Go struct field PodDisruptionBudgetSpec.spec."
                 "unhealthyPodEvictionPolicy of type v1.UnhealthyPodEvictionPolicyType",
                 id="pdb-unhealthyPodEvictionPolicy-bool"),
]


@pytest.fixture(scope="module")
def http(minik3s_api: ServerProcess):
    with httpx.Client(base_url=minik3s_api.url, timeout=30) as c:
        c.post("/api/v1/namespaces", json={"metadata": {"name": "nested"}}).raise_for_status()
        yield c


@pytest.mark.parametrize(("where", "body", "message"), WRONG_TYPES)
def test_a_wrongly_typed_nested_value_is_kube_apiservers_400(http: httpx.Client, where: tuple[str, str],
                                                             body: JsonDict, message: str) -> None:
    path, prefix = where
    url = path.format(ns="nested")
    r = http.post(url, json=body)
    assert r.status_code == 400, r.text
    st = r.json()
    assert (st["kind"], st["status"], st["reason"], st["code"]) == ("Status", "Failure", "BadRequest", 400)
    assert st["message"] == prefix + message
    assert http.get(f"{url}/{body['metadata']['name']}").status_code == 404


def test_kubectl_apply_of_a_yaml_boolean_path_is_refused(kubectl_bin: Path, minik3s_api: ServerProcess,
                                                         http: httpx.Client, tmp_path: Path) -> None:
    """The report: `path: n` is YAML 1.1's false; kubectl sends `"path": false` and kube-apiserver
    refuses the pod instead of storing a boolean in a string field."""
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: yaml-bool\n  namespace: nested\nspec:\n"
        "  containers:\n  - name: c\n    image: nginx\n  volumes:\n  - name: info\n    downwardAPI:\n"
        "      items:\n      - path: n\n        fieldRef:\n          fieldPath: metadata.name\n")
    r = subprocess.run([str(kubectl_bin), "--kubeconfig", str(minik3s_api.kubeconfig), "--cache-dir",
                        str(tmp_path / "cache"), "apply", "-f", str(manifest)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    assert ('Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal bool into Go struct field '
            'DownwardAPIVolumeFile.spec.volumes.downwardAPI.items.path of type string') in r.stderr
    assert http.get("/api/v1/namespaces/nested/pods/yaml-bool").status_code == 404


# ---------------------------------------------------------------- unknown nested fields
UNKNOWN = [
    pytest.param(("", "v1", "pods"), pod("u-secret", volumes=[{"name": "v", "secret": {"secretName": "s", "bogus": 1}}]),
                 ["spec.volumes[0].secret.bogus"], id="secret-volume"),
    pytest.param(("", "v1", "pods"), pod("u-proj", serviceAccountName="default", volumes=[{"name": "v", "projected": {
        "sources": [{"serviceAccountToken": {"path": "t", "audiance": "x"}},
                    {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name", "x": 1}}]}}]}}]),
        ["spec.volumes[0].projected.sources[0].serviceAccountToken.audiance",
         "spec.volumes[0].projected.sources[1].downwardAPI.items[0].fieldRef.x"], id="projected-sources"),
    pytest.param(("", "v1", "pods"), pod("u-sec", containers=container(securityContext={
        "seccompProfile": {"type": "RuntimeDefault", "profile": "x"}, "capabilities": {"remove": ["ALL"]}}),
        dnsConfig={"options": [{"name": "ndots", "val": "2"}]}),
        ["spec.containers[0].securityContext.capabilities.remove",
         "spec.containers[0].securityContext.seccompProfile.profile", "spec.dnsConfig.options[0].val"],
        id="security-context-and-dns-options"),
    pytest.param(("", "v1", "pods"), pod("u-life", containers=container(lifecycle={"preStop": {"sleep": {
        "seconds": 1, "ms": 5}}}, envFrom=[{"configMapRef": {"name": "c", "optinal": True}}])),
        ["spec.containers[0].envFrom[0].configMapRef.optinal", "spec.containers[0].lifecycle.preStop.sleep.ms"],
        id="sleep-action-and-env-source"),
    pytest.param(("", "v1", "services"), {"metadata": {"name": "u-svc"}, "spec": {
        "ports": [{"port": 80}], "sessionAffinity": "ClientIP",
        "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60, "timeout": 1}}}},
        ["spec.sessionAffinityConfig.clientIP.timeout"], id="service-session-affinity"),
    pytest.param(("", "v1", "persistentvolumeclaims"), {"metadata": {"name": "u-pvc"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}, "min": {"storage": "1"}},
        "storageClass": "fast"}},
        ["spec.resources.min", "spec.storageClass"], id="pvc-spec"),
    pytest.param(("", "v1", "endpoints"), {"metadata": {"name": "u-ep"}, "subsets": [
        {"addresses": [{"ip": "10.0.0.1", "zone": "a"}], "ports": [{"port": 80, "targetPort": 8080}]}]},
        ["subsets[0].addresses[0].zone", "subsets[0].ports[0].targetPort"], id="endpoints-subsets"),
    pytest.param(("apps", "v1", "statefulsets"), statefulset("u-sts", volumeClaimTemplates=[
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "size": "1Gi",
                                                "resources": {"requests": {"storage": "1Gi"}}}}]),
        ["spec.volumeClaimTemplates[0].spec.size"], id="statefulset-claim-template"),
    pytest.param(("apps", "v1", "deployments"), deployment("u-dep", {"containers": container(), "volumes": [
        {"name": "v", "emptyDir": {"sizelimit": "1Gi"}}]}),
        ["spec.template.spec.volumes[0].emptyDir.sizelimit"], id="deployment-template-volume"),
]


@pytest.mark.parametrize(("gvr", "body", "unknown"), UNKNOWN)
async def test_an_unknown_nested_field_is_refused_under_strict(core: ApiCore, gvr: tuple[str, str, str],
                                                               body: JsonDict, unknown: list[str]) -> None:
    info = res(core, *gvr)
    with pytest.raises(BadRequestError) as e:
        await core.create(info, "default", copy.deepcopy(body), WriteOptions(field_validation="Strict"))
    # (kube-apiserver prefixes the create's message with `<Kind> in version "v1" cannot be handled as ...: `)
    assert e.value.message.endswith("strict decoding error: " + ", ".join(f'unknown field "{f}"' for f in unknown))
    with pytest.raises(NotFoundError):
        core.get(info, "default", body["metadata"]["name"])


def _without(obj: Any, paths: list[str]) -> Any:
    """`obj` less the fields at `paths` (dotted, `[i]` list indexes)."""
    out = copy.deepcopy(obj)
    for p in paths:
        parts = [int(x) if x.isdigit() else x for x in re.findall(r"[^.\[\]]+", p)]
        parent = out
        for k in parts[:-1]:
            parent = parent[k]
        del parent[parts[-1]]
    return out


def _contains(small: Any, big: Any) -> bool:
    """Every field of `small` is in `big` with the same value (`big` may add defaults)."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(k in big and _contains(v, big[k]) for k, v in small.items())
    if isinstance(small, list):
        return isinstance(big, list) and len(small) == len(big) and all(map(_contains, small, big))
    return small == big


@pytest.mark.parametrize(("gvr", "body", "unknown"), UNKNOWN)
async def test_an_unknown_nested_field_is_dropped_with_a_warning(core: ApiCore, gvr: tuple[str, str, str],
                                                                 body: JsonDict, unknown: list[str]) -> None:
    info = res(core, *gvr)
    opts = WriteOptions()
    out = await core.create(info, "default", copy.deepcopy(body), opts)
    assert [w for w in opts.warnings if w.startswith("unknown field")] == [f'unknown field "{f}"' for f in unknown]
    stored = core.get(info, "default", body["metadata"]["name"])
    expected = _without({k: v for k, v in body.items() if k not in ("apiVersion", "kind", "metadata")}, unknown)
    for top in expected:
        assert _contains(expected[top], stored[top]), (top, stored[top])
        assert _contains(expected[top], out[top])


async def test_every_pod_of_one_spec_with_a_nested_unknown_field_warns(core: ApiCore) -> None:
    """The decode memo remembers only specs that decode to themselves: the tenth pod of a spec
    with a bad nested field still gets the warning and still loses the field."""
    pods = res(core, "", "v1", "pods")
    spec = {"containers": container(), "volumes": [{"name": "v", "configMap": {"name": "c", "bogus": True}}]}
    for i in range(10):
        opts = WriteOptions()
        out = await core.create(pods, "default", {"metadata": {"name": f"same-{i}"}, "spec": copy.deepcopy(spec)}, opts)
        assert opts.warnings == ['unknown field "spec.volumes[0].configMap.bogus"']
        assert "bogus" not in out["spec"]["volumes"][0]["configMap"]


# ---------------------------------------------------------------- every volume source round-trips
VOLUME_SOURCES: dict[str, JsonDict] = {
    "hostPath": {"path": "/var/data", "type": "DirectoryOrCreate"},
    "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"},
    "gcePersistentDisk": {"pdName": "disk-1", "fsType": "ext4", "partition": 1, "readOnly": True},
    "awsElasticBlockStore": {"volumeID": "vol-1", "fsType": "ext4", "partition": 1, "readOnly": True},
    "gitRepo": {"repository": "https://example.com/r.git", "revision": "main", "directory": "."},
    "secret": {"secretName": "s", "items": [{"key": "k", "path": "p", "mode": 256}], "defaultMode": 420,
               "optional": True},
    "nfs": {"server": "nfs.example.com", "path": "/exports", "readOnly": True},
    "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0,
              "iscsiInterface": "default", "fsType": "ext4", "readOnly": True, "portals": ["10.0.0.2:3260"],
              "chapAuthDiscovery": True, "chapAuthSession": True, "secretRef": {"name": "chap"},
              "initiatorName": "iqn.1996-04.de.suse:01:19b2b43ac2b"},
    "glusterfs": {"endpoints": "gluster", "path": "vol", "readOnly": True},
    "persistentVolumeClaim": {"claimName": "data", "readOnly": True},
    "rbd": {"monitors": ["10.0.0.1:6789"], "image": "img", "fsType": "ext4", "pool": "kube", "user": "admin",
            "keyring": "/etc/ceph/keyring", "secretRef": {"name": "ceph"}, "readOnly": True},
    "flexVolume": {"driver": "example/lvm", "fsType": "ext4", "secretRef": {"name": "flex"}, "readOnly": True,
                   "options": {"volumeID": "v1", "anyKey": "anyValue"}},
    "cinder": {"volumeID": "vol-1", "fsType": "ext4", "readOnly": True, "secretRef": {"name": "os"}},
    "cephfs": {"monitors": ["10.0.0.1:6789"], "path": "/", "user": "admin", "secretFile": "/etc/ceph/secret",
               "secretRef": {"name": "ceph"}, "readOnly": True},
    "flocker": {"datasetName": "ds"},
    "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"},
                               "mode": 256},
                              {"path": "cpu", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu",
                                                                   "divisor": "1m"}}],
                    "defaultMode": 420},
    "fc": {"targetWWNs": ["500a0982991b8dc5"], "lun": 2, "fsType": "ext4", "readOnly": True},
    "azureFile": {"secretName": "s", "shareName": "share", "readOnly": True},
    "configMap": {"name": "cm", "items": [{"key": "k", "path": "p", "mode": 256}], "defaultMode": 420,
                  "optional": True},
    "vsphereVolume": {"volumePath": "[ds] vol.vmdk", "fsType": "ext4", "storagePolicyName": "gold",
                      "storagePolicyID": "id-1"},
    "quobyte": {"registry": "registry:7861", "volume": "v", "readOnly": True, "user": "root", "group": "root",
                "tenant": "t"},
    "azureDisk": {"diskName": "d", "diskURI": "https://example.blob.core.windows.net/vhds/d.vhd",
                  "cachingMode": "ReadOnly", "fsType": "ext4", "readOnly": True, "kind": "Shared"},
    "photonPersistentDisk": {"pdID": "pd-1", "fsType": "ext4"},
    "projected": {"sources": [
        {"secret": {"name": "s", "items": [{"key": "k", "path": "s/p"}], "optional": True}},
        {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"apiVersion": "v1",
                                                               "fieldPath": "metadata.namespace"}}]}},
        {"configMap": {"name": "cm", "items": [{"key": "k", "path": "c/p", "mode": 256}], "optional": True}},
        {"serviceAccountToken": {"audience": "vault", "expirationSeconds": 3600, "path": "token"}},
        {"clusterTrustBundle": {"signerName": "example.com/signer", "labelSelector": {"matchLabels": {"a": "b"}},
                                "optional": True, "path": "bundle.pem"}}],
        "defaultMode": 420},
    "portworxVolume": {"volumeID": "vol-1", "fsType": "ext4", "readOnly": True},
    "scaleIO": {"gateway": "https://gateway", "system": "sys", "secretRef": {"name": "s"}, "sslEnabled": True,
                "protectionDomain": "pd", "storagePool": "sp", "storageMode": "ThinProvisioned",
                "volumeName": "vol", "fsType": "xfs", "readOnly": True},
    "storageos": {"volumeName": "v", "volumeNamespace": "ns", "fsType": "ext4", "readOnly": True,
                  "secretRef": {"name": "s"}},
    "csi": {"driver": "csi.example.com", "readOnly": True, "fsType": "ext4",
            "volumeAttributes": {"any.key/with-slash": "value"}, "nodePublishSecretRef": {"name": "s"}},
    "ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {"a": "b"}, "annotations": {"k": "v"}},
                                          "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                                                   "volumeMode": "Filesystem",
                                                   "resources": {"requests": {"storage": "1Gi"},
                                                                 "limits": {"storage": "2Gi"}},
                                                   "selector": {"matchLabels": {"tier": "db"}},
                                                   "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"},
                                                   "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "src"},
                                                   "volumeAttributesClassName": "gold"}}},
    "image": {"reference": "registry.example.com/data:1", "pullPolicy": "IfNotPresent"},
}


def test_the_table_names_every_volume_source_of_the_wire_model() -> None:
    from minik3s.api.core import Volume

    assert set(VOLUME_SOURCES) == set(Volume.model_fields) - {"name"}


@pytest.mark.parametrize("source", list(VOLUME_SOURCES))
async def test_every_field_of_every_volume_source_round_trips_under_strict(core: ApiCore, source: str) -> None:
    pods = res(core, "", "v1", "pods")
    body = pod(f"src-{source.lower()}", serviceAccountName="default", volumes=[{"name": "v", source: VOLUME_SOURCES[source]}],
               containers=container(resources={"limits": {"cpu": "1"}}, volumeMounts=[{"name": "v", "mountPath": "/d"}]))
    opts = WriteOptions(field_validation="Strict")
    out = await core.create(pods, "default", copy.deepcopy(body), opts)
    assert not [w for w in opts.warnings if w.startswith("unknown field")]
    for got in (out, core.get(pods, "default", body["metadata"]["name"])):
        (vol,) = got["spec"]["volumes"]
        assert set(vol) == {"name", source}
        assert _contains(VOLUME_SOURCES[source], vol[source]), vol[source]


PV_SOURCES: dict[str, JsonDict] = {
    "csi": {"driver": "csi.example.com", "volumeHandle": "h-1", "readOnly": True, "fsType": "ext4",
            "volumeAttributes": {"free/form": "yes"},
            **{ref: {"name": "s", "namespace": "kube-system"} for ref in (
                "controllerPublishSecretRef", "nodeStageSecretRef", "nodePublishSecretRef",
                "controllerExpandSecretRef", "nodeExpandSecretRef")}},
    "glusterfs": {"endpoints": "gluster", "path": "vol", "readOnly": True, "endpointsNamespace": "storage"},
    "azureFile": {"secretName": "s", "shareName": "share", "readOnly": True, "secretNamespace": "storage"},
    "cephfs": {"monitors": ["10.0.0.1:6789"], "secretRef": {"name": "ceph", "namespace": "storage"}},
    "storageos": {"volumeName": "v", "secretRef": {"kind": "Secret", "name": "s", "namespace": "storage"}},
    "local": {"path": "/mnt/disks/ssd1", "fsType": "ext4"},
}


@pytest.mark.parametrize("source", list(PV_SOURCES))
async def test_persistent_volume_sources_keep_their_own_fields_under_strict(core: ApiCore, source: str) -> None:
    """A PersistentVolume's sources are PersistentVolumeSource's types (SecretReference with a
    namespace, a CSI volume's five secret references, ...), not the pod volume's."""
    pvs = res(core, "", "v1", "persistentvolumes")
    spec: JsonDict = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                      "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "manual",
                      "mountOptions": ["ro"], source: PV_SOURCES[source]}
    if source == "local":
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}
    out = await core.create(pvs, None, {"metadata": {"name": f"pv-{source.lower()}"}, "spec": copy.deepcopy(spec)},
                            WriteOptions(field_validation="Strict"))
    assert _contains(spec, out["spec"]), out["spec"]


async def test_free_form_fields_stay_free_form(core: ApiCore) -> None:
    """A ControllerRevision's `data` is a RawExtension: any JSON, kept as written under Strict
    (the free-form maps of volume sources are in the round trips above)."""
    revisions = res(core, "apps", "v1", "controllerrevisions")
    data = {"spec": {"template": {"anything": [1, {"goes": True}]}}, "x-extra": None}
    out = await core.create(revisions, "default", {"metadata": {"name": "rev-1"}, "data": copy.deepcopy(data),
                                                   "revision": 1}, WriteOptions(field_validation="Strict"))
    assert out["data"] == data and out["revision"] == 1
