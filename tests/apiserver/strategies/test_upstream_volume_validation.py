"""Upstream's volume validation tables (kubernetes/kubernetes pkg/apis/core/validation/validation_test.go,
v1.33), ported case by case onto `apiserver.strategies.volume_validation` and the pod spec rules
that call it (`apiserver.strategies.podspec`, the Pod strategy, the request core).

Ported: TestValidateVolumes (every case, upstream's names as ids: two pairs share a name upstream,
pytest numbers them; the check is upstream's: the same number of errors, each of the expected type,
its field the expected one or ending in "." + it, its message containing the expected detail; a
valid volume is in the returned map; plus the duplicate-name and hugepages emptyDir cases after
the table), TestValidateKeyToPath, TestValidateNFSVolumeSource, TestValidateGlusterfs,
TestValidateGlusterfsPersistentVolumeSource, TestValidateCSIVolumeSource,
TestValidateCSIPersistentVolumeSource (each: the first error's type and field suffix, as upstream
checks), TestValidateEphemeralVolume (testValidatePVC with ephemeral=true: success or failure),
the volume source cases of TestValidatePersistentVolumes ("good-volume", "missing-volume-source",
"too-many-sources", "bad-hostpath-volume-backsteps") on `validate_persistent_volume_source`, and the
TestValidatePod cases the pod port skipped as volume source validation: the ClusterTrustBundle
projections (success and errors), "ephemeral volume + PVC, no conflict between them", "final PVC
name for ephemeral volume must be valid" and "PersistentVolumeClaimVolumeSource must not reference
a generated PVC" (these two need the pod's name: `validate_pod_spec(..., pod_name=...)`).

Default feature gates of v1.33 where upstream's test sets one: TestValidateEphemeralVolume's
"invalid-volume-attributes-class-name" enables VolumeAttributesClass (beta, off by default in
v1.33), so with the default gates the template is accepted; the case asserts that.

Not ported:
- TestValidatePersistentVolumes / TestValidatePersistentVolumeClaim cases about anything but the
  volume source (capacity, access modes, reclaim policy, node affinity, object metadata): the
  storage strategy's rules (apiserver.strategies.storage), not this module's;
- TestValidatePersistentVolumeClaimUpdate, TestValidationOptionsForPersistentVolumeClaim(Template):
  PVC updates and option plumbing of the storage strategy.

Beyond the tables (each asserting what a client reads): exact messages and field paths of
upstream's quirks (persistentDisk, downwarAPI/cephFS, projected.path, the unindexed downward API
item, csi.name, uID), the defaults a client sees on a created pod, and the 422 a create gets
through the in-process API for a pod and a Deployment template.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

import pytest

from apiserver.strategies import podspec as ps
from apiserver.strategies import strategy_for
from apiserver.strategies import volume_validation as vv
from minik3s.api.types import JsonDict

S = strategy_for("", "Pod")

KIND = {"FieldValueRequired": "Required", "FieldValueInvalid": "Invalid", "FieldValueNotSupported": "NotSupported",
        "FieldValueDuplicate": "Duplicate", "FieldValueForbidden": "Forbidden", "FieldValueNotFound": "NotFound",
        "FieldValueTooLong": "TooLong", "FieldValueTypeInvalid": "Invalid"}
DNS_LABEL = "a lowercase RFC 1123 label must consist of"


class E(NamedTuple):
    """verr: an error's type, its field (or the field's suffix) and a part of its message."""

    etype: str
    field: str
    detail: str = ""


def V(name: str, **source: Any) -> JsonDict:  # noqa: N802 (upstream's core.Volume literal)
    return {"name": name, **source}


def C(name: str, vol: JsonDict, errs: list[E] | None = None, *, pod: bool = False) -> Any:  # noqa: N802
    """One TestValidateVolumes case; `pod`: PodValidationOptions{ResourceIsPod: true}."""
    return pytest.param(vol, errs or [], pod, id=name)


def texts(errs: list[JsonDict]) -> list[str]:
    return [f"{e['field']}: {e['message']}" for e in errs]


def aggregate(errs: list[JsonDict]) -> str:
    return ", ".join(texts(errs))


def matches(errs: list[JsonDict], want: list[E]) -> None:
    """TestValidateVolumes' check: as many errors as expected, each of the expected type, on the
    expected field (or one ending in "." + it), with the expected detail in its message."""
    assert len(errs) == len(want), texts(errs)
    for got, exp in zip(errs, want, strict=True):
        assert KIND[got["reason"]] == exp.etype, texts(errs)
        assert got["field"] == exp.field or got["field"].endswith("." + exp.field), texts(errs)
        assert exp.detail in got["message"], texts(errs)


# =================================================================================================
# TestValidateVolumes
# =================================================================================================

INIT_OK = "iqn.2015-02.example.com:init"
INIT_BAD = "2015-02.example.com:init"
ISCSI = {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test", "lun": 1, "fsType": "ext4"}

CASES_1 = [
    C("valid alpha name", V("empty", emptyDir={})),
    C("valid num name", V("123", emptyDir={})),
    C("valid alphanum name", V("empty-123", emptyDir={})),
    C("valid numalpha name", V("123-empty", emptyDir={})),
    C("zero-length name", V("", emptyDir={}), [E("Required", "name")]),
    C("name > 63 characters", V("a" * 64, emptyDir={}), [E("Invalid", "name", "must be no more than")]),
    C("name has dots", V("a.b.c", emptyDir={}), [E("Invalid", "name", "must not contain dots")]),
    C("name not a DNS label", V("Not a DNS label!", emptyDir={}), [E("Invalid", "name", DNS_LABEL)]),
    C("more than one source", V("dups", emptyDir={}, hostPath={"path": "/mnt/path", "type": "Directory"}),
      [E("Forbidden", "hostPath", "may not specify more than 1 volume")]),
    C("default HostPath", V("hostpath", hostPath={"path": "/mnt/path", "type": "Directory"})),
    C("valid HostPath", V("hostpath", hostPath={"path": "/mnt/path", "type": "Socket"})),
    C("invalid HostPath", V("hostpath", hostPath={"path": "/mnt/path", "type": "invalid"}), [E("NotSupported", "type")]),
    C("invalid HostPath backsteps", V("hostpath", hostPath={"path": "/mnt/path/..", "type": "Directory"}),
      [E("Invalid", "path", "must not contain '..'")]),
    C("valid GcePersistentDisk", V("gce-pd", gcePersistentDisk={"pdName": "my-PD", "fsType": "ext4", "partition": 1})),
    C("valid AWSElasticBlockStore",
      V("aws-ebs", awsElasticBlockStore={"volumeID": "my-PD", "fsType": "ext4", "partition": 1})),
    C("valid GitRepo", V("git-repo", gitRepo={"repository": "my-repo", "revision": "hashstring", "directory": "target"})),
    C("valid GitRepo in .", V("git-repo-dot", gitRepo={"repository": "my-repo", "directory": "."})),
    C("valid GitRepo with .. in name", V("git-repo-dot-dot-foo", gitRepo={"repository": "my-repo", "directory": "..foo"})),
    C("GitRepo starts with ../", V("gitrepo", gitRepo={"repository": "foo", "directory": "../dots/bar"}),
      [E("Invalid", "gitRepo.directory", "must not contain '..'")]),
    C("GitRepo contains ..", V("gitrepo", gitRepo={"repository": "foo", "directory": "dots/../bar"}),
      [E("Invalid", "gitRepo.directory", "must not contain '..'")]),
    C("GitRepo absolute target", V("gitrepo", gitRepo={"repository": "foo", "directory": "/abstarget"}),
      [E("Invalid", "gitRepo.directory")]),
    C("valid ISCSI", V("iscsi", iscsi=ISCSI)),
    C("valid IQN: eui format", V("iscsi", iscsi={**ISCSI, "iqn": "eui.0123456789ABCDEF"})),
    C("valid IQN: naa format", V("iscsi", iscsi={**ISCSI, "iqn": "naa.62004567BA64678D0123456789ABCDEF"})),
    C("empty portal", V("iscsi", iscsi={**ISCSI, "targetPortal": ""}), [E("Required", "iscsi.targetPortal")]),
    C("empty iqn", V("iscsi", iscsi={**ISCSI, "iqn": ""}), [E("Required", "iscsi.iqn")]),
    C("invalid IQN: iqn format", V("iscsi", iscsi={**ISCSI, "iqn": "iqn.2015-02.example.com:test;ls;"}),
      [E("Invalid", "iscsi.iqn")]),
    C("invalid IQN: eui format", V("iscsi", iscsi={**ISCSI, "iqn": "eui.0123456789ABCDEFGHIJ"}),
      [E("Invalid", "iscsi.iqn")]),
    C("invalid IQN: naa format", V("iscsi", iscsi={**ISCSI, "iqn": "naa.62004567BA_4-78D.123456789ABCDEF"}),
      [E("Invalid", "iscsi.iqn")]),
    C("valid initiatorName", V("iscsi", iscsi={**ISCSI, "initiatorName": INIT_OK})),
    C("invalid initiatorName", V("iscsi", iscsi={**ISCSI, "initiatorName": INIT_BAD}),
      [E("Invalid", "iscsi.initiatorname")]),
    C("empty secret", V("iscsi", iscsi={**ISCSI, "chapAuthDiscovery": True}), [E("Required", "iscsi.secretRef")]),
    C("empty secret", V("iscsi", iscsi={**ISCSI, "chapAuthSession": True}),
      [E("Required", "iscsi.secretRef")]),
    C("valid Secret", V("secret", secret={"secretName": "my-secret"})),
    C("valid Secret with defaultMode", V("secret", secret={"secretName": "my-secret", "defaultMode": 0o644})),
    C("valid Secret with projection and mode",
      V("secret", secret={"secretName": "my-secret", "items": [{"key": "key", "path": "filename", "mode": 0o644}]})),
    C("valid Secret with subdir projection",
      V("secret", secret={"secretName": "my-secret", "items": [{"key": "key", "path": "dir/filename"}]})),
    C("secret with missing path", V("secret", secret={"secretName": "s", "items": [{"key": "key", "path": ""}]}),
      [E("Required", "secret.items[0].path")]),
    C("secret with leading ..", V("secret", secret={"secretName": "s", "items": [{"key": "key", "path": "../foo"}]}),
      [E("Invalid", "secret.items[0].path")]),
    C("secret with .. inside", V("secret", secret={"secretName": "s", "items": [{"key": "key", "path": "foo/../bar"}]}),
      [E("Invalid", "secret.items[0].path")]),
    C("secret with invalid positive defaultMode", V("secret", secret={"secretName": "s", "defaultMode": 0o1000}),
      [E("Invalid", "secret.defaultMode")]),
    C("secret with invalid negative defaultMode", V("secret", secret={"secretName": "s", "defaultMode": -1}),
      [E("Invalid", "secret.defaultMode")]),
    C("valid ConfigMap", V("cfgmap", configMap={"name": "my-cfgmap"})),
    C("valid ConfigMap with defaultMode", V("cfgmap", configMap={"name": "my-cfgmap", "defaultMode": 0o644})),
    C("valid ConfigMap with projection and mode",
      V("cfgmap", configMap={"name": "my-cfgmap", "items": [{"key": "key", "path": "filename", "mode": 0o644}]})),
    C("valid ConfigMap with subdir projection",
      V("cfgmap", configMap={"name": "my-cfgmap", "items": [{"key": "key", "path": "dir/filename"}]})),
    C("configmap with missing path", V("cfgmap", configMap={"name": "c", "items": [{"key": "key", "path": ""}]}),
      [E("Required", "configMap.items[0].path")]),
    C("configmap with leading ..", V("cfgmap", configMap={"name": "c", "items": [{"key": "key", "path": "../foo"}]}),
      [E("Invalid", "configMap.items[0].path")]),
    C("configmap with .. inside", V("cfgmap", configMap={"name": "c", "items": [{"key": "key", "path": "foo/../bar"}]}),
      [E("Invalid", "configMap.items[0].path")]),
    C("configmap with invalid positive defaultMode", V("cfgmap", configMap={"name": "c", "defaultMode": 0o1000}),
      [E("Invalid", "configMap.defaultMode")]),
    C("configmap with invalid negative defaultMode", V("cfgmap", configMap={"name": "c", "defaultMode": -1}),
      [E("Invalid", "configMap.defaultMode")]),
    C("valid Glusterfs", V("glusterfs", glusterfs={"endpoints": "host1", "path": "path"})),
    C("empty hosts", V("glusterfs", glusterfs={"endpoints": "", "path": "path"}), [E("Required", "glusterfs.endpoints")]),
    C("empty path", V("glusterfs", glusterfs={"endpoints": "host", "path": ""}), [E("Required", "glusterfs.path")]),
    C("valid Flocker -- datasetUUID", V("flocker", flocker={"datasetUUID": "d846b09d-223d-43df-ab5b-d6db2206a0e4"})),
    C("valid Flocker -- datasetName", V("flocker", flocker={"datasetName": "datasetName"})),
    C("both empty", V("flocker", flocker={"datasetName": ""}), [E("Required", "flocker")]),
    C("both specified",
      V("flocker", flocker={"datasetName": "datasetName", "datasetUUID": "d846b09d-223d-43df-ab5b-d6db2206a0e4"}),
      [E("Invalid", "flocker")]),
    C("slash in flocker datasetName", V("flocker", flocker={"datasetName": "foo/bar"}),
      [E("Invalid", "flocker.datasetName", "must not contain '/'")]),
    C("valid RBD", V("rbd", rbd={"monitors": ["foo"], "image": "bar", "fsType": "ext4"})),
    C("empty rbd monitors", V("rbd", rbd={"monitors": [], "image": "bar", "fsType": "ext4"}),
      [E("Required", "rbd.monitors")]),
    C("empty image", V("rbd", rbd={"monitors": ["foo"], "image": "", "fsType": "ext4"}), [E("Required", "rbd.image")]),
    C("valid Cinder", V("cinder", cinder={"volumeID": "29ea5088-4f60-4757-962e-dba678767887", "fsType": "ext4"})),
    C("valid CephFS", V("cephfs", cephfs={"monitors": ["foo"]})),
    C("empty cephfs monitors", V("cephfs", cephfs={"monitors": []}), [E("Required", "cephfs.monitors")]),
]

def _fr(path: str) -> JsonDict:
    return {"apiVersion": "v1", "fieldPath": path}


def _rf(resource: str) -> JsonDict:
    return {"containerName": "test-container", "resource": resource}


_VALID_DAPI_ITEMS = [
    {"path": "labels", "fieldRef": _fr("metadata.labels")},
    {"path": "labels with subscript", "fieldRef": _fr("metadata.labels['key']")},
    {"path": "labels with complex subscript", "fieldRef": _fr("metadata.labels['test.example.com/key']")},
    {"path": "annotations", "fieldRef": _fr("metadata.annotations")},
    {"path": "annotations with subscript", "fieldRef": _fr("metadata.annotations['key']")},
    {"path": "annotations with complex subscript", "fieldRef": _fr("metadata.annotations['TEST.EXAMPLE.COM/key']")},
    {"path": "namespace", "fieldRef": _fr("metadata.namespace")},
    {"path": "name", "fieldRef": _fr("metadata.name")},
    {"path": "path/with/subdirs", "fieldRef": _fr("metadata.labels")},
    {"path": "path/./withdot", "fieldRef": _fr("metadata.labels")},
    {"path": "path/with/embedded..dotdot", "fieldRef": _fr("metadata.labels")},
    {"path": "path/with/leading/..dotdot", "fieldRef": _fr("metadata.labels")},
    {"path": "cpu_limit", "resourceFieldRef": _rf("limits.cpu")},
    {"path": "cpu_request", "resourceFieldRef": _rf("requests.cpu")},
    {"path": "memory_limit", "resourceFieldRef": _rf("limits.memory")},
    {"path": "memory_request", "resourceFieldRef": _rf("requests.memory")},
]


def _dapi(path: str, **extra: Any) -> JsonDict:
    return {"downwardAPI": {"items": [{"path": path, "fieldRef": _fr("metadata.labels"), **extra}]}}


CASES_2 = [
    C("valid DownwardAPI", V("downwardapi", downwardAPI={"items": _VALID_DAPI_ITEMS})),
    C("hugepages-downwardAPI-enabled", V("downwardapi", downwardAPI={"items": [
        {"path": "hugepages_request", "resourceFieldRef": _rf("requests.hugepages-2Mi")},
        {"path": "hugepages_limit", "resourceFieldRef": _rf("limits.hugepages-2Mi")}]})),
    C("downapi valid defaultMode", V("downapi", downwardAPI={"defaultMode": 0o644})),
    C("downapi valid item mode", V("downapi", **_dapi("path", mode=0o644))),
    C("downapi invalid positive item mode", V("downapi", **_dapi("path", mode=0o1000)),
      [E("Invalid", "downwardAPI.mode")]),
    C("downapi invalid negative item mode", V("downapi", **_dapi("path", mode=-1)), [E("Invalid", "downwardAPI.mode")]),
    C("downapi empty metatada path", V("downapi", **_dapi("")), [E("Required", "downwardAPI.path")]),
    C("downapi absolute path", V("downapi", **_dapi("/absolutepath")), [E("Invalid", "downwardAPI.path")]),
    C("downapi dot dot path", V("downapi", **_dapi("../../passwd")),
      [E("Invalid", "downwardAPI.path", "must not contain '..'")]),
    C("downapi dot dot file name", V("downapi", **_dapi("..badFileName")),
      [E("Invalid", "downwardAPI.path", "must not start with '..'")]),
    C("downapi dot dot first level dirent", V("downapi", **_dapi("..badDirName/goodFileName")),
      [E("Invalid", "downwardAPI.path", "must not start with '..'")]),
    C("downapi fieldRef and ResourceFieldRef together",
      V("downapi", **_dapi("test", resourceFieldRef=_rf("requests.memory"))),
      [E("Invalid", "downwardAPI", "fieldRef and resourceFieldRef can not be specified simultaneously")]),
    C("downapi invalid positive defaultMode", V("downapi", downwardAPI={"defaultMode": 0o1000}),
      [E("Invalid", "downwardAPI.defaultMode")]),
    C("downapi invalid negative defaultMode", V("downapi", downwardAPI={"defaultMode": -1}),
      [E("Invalid", "downwardAPI.defaultMode")]),
    C("FC valid targetWWNs and lun", V("fc", fc={"targetWWNs": ["some_wwn"], "lun": 1, "fsType": "ext4"})),
    C("FC valid wwids", V("fc", fc={"wwids": ["some_wwid"], "fsType": "ext4"})),
    C("FC empty targetWWNs and wwids", V("fc", fc={"targetWWNs": [], "lun": 1, "wwids": [], "fsType": "ext4"}),
      [E("Required", "fc.targetWWNs", "must specify either targetWWNs or wwids")]),
    C("FC invalid: both targetWWNs and wwids simultaneously",
      V("fc", fc={"targetWWNs": ["some_wwn"], "lun": 1, "wwids": ["some_wwid"], "fsType": "ext4"}),
      [E("Invalid", "fc.targetWWNs", "targetWWNs and wwids can not be specified simultaneously")]),
    C("FC valid targetWWNs and empty lun", V("fc", fc={"targetWWNs": ["wwn"], "fsType": "ext4"}),
      [E("Required", "fc.lun", "lun is required if targetWWNs is specified")]),
    C("FC valid targetWWNs and invalid lun", V("fc", fc={"targetWWNs": ["wwn"], "lun": 256, "fsType": "ext4"}),
      [E("Invalid", "fc.lun", "must be between 0 and 255, inclusive")]),
    C("valid FlexVolume", V("flex-volume", flexVolume={"driver": "kubernetes.io/blue", "fsType": "ext4"})),
    C("valid AzureFile", V("azure-file", azureFile={"secretName": "key", "shareName": "share"})),
    C("AzureFile empty secret", V("azure-file", azureFile={"secretName": "", "shareName": "share"}),
      [E("Required", "azureFile.secretName")]),
    C("AzureFile empty share", V("azure-file", azureFile={"secretName": "name", "shareName": ""}),
      [E("Required", "azureFile.shareName")]),
    C("valid Quobyte", V("quobyte", quobyte={"registry": "registry:7861", "volume": "volume", "user": "root",
                                              "group": "root", "tenant": "ThisIsSomeTenantUUID"})),
    C("empty registry quobyte", V("quobyte", quobyte={"volume": "/test", "tenant": "ThisIsSomeTenantUUID"}),
      [E("Required", "quobyte.registry")]),
    C("wrong format registry quobyte",
      V("quobyte", quobyte={"registry": "registry7861", "volume": "/test", "tenant": "ThisIsSomeTenantUUID"}),
      [E("Invalid", "quobyte.registry")]),
    C("wrong format multiple registries quobyte",
      V("quobyte", quobyte={"registry": "registry:7861,reg2", "volume": "/test", "tenant": "ThisIsSomeTenantUUID"}),
      [E("Invalid", "quobyte.registry")]),
    C("empty volume quobyte", V("quobyte", quobyte={"registry": "registry:7861", "tenant": "ThisIsSomeTenantUUID"}),
      [E("Required", "quobyte.volume")]),
    C("empty tenant quobyte", V("quobyte", quobyte={"registry": "registry:7861", "volume": "/test", "tenant": ""})),
    C("too long tenant quobyte", V("quobyte", quobyte={
        "registry": "registry:7861", "volume": "/test",
        "tenant": "this is too long to be a valid uuid so this test has to fail on the maximum length validation "
                  "of the tenant."}), [E("Required", "quobyte.tenant")]),
    C("valid AzureDisk", V("azure-disk", azureDisk={"diskName": "foo", "diskURI": "https://blob/vhds/bar.vhd"})),
    C("AzureDisk empty disk name", V("azure-disk", azureDisk={"diskName": "", "diskURI": "https://blob/vhds/bar.vhd"}),
      [E("Required", "azureDisk.diskName")]),
    C("AzureDisk empty disk uri", V("azure-disk", azureDisk={"diskName": "foo", "diskURI": ""}),
      [E("Required", "azureDisk.diskURI")]),
    C("valid scaleio volume", V("scaleio-volume", scaleIO={"gateway": "http://abcd/efg", "system": "test-system",
                                                           "volumeName": "test-vol-1"})),
    C("ScaleIO with empty name", V("scaleio-volume", scaleIO={"gateway": "http://abcd/efg", "system": "test-system",
                                                              "volumeName": ""}),
      [E("Required", "scaleIO.volumeName")]),
    C("ScaleIO with empty gateway", V("scaleio-volume", scaleIO={"gateway": "", "system": "test-system",
                                                                 "volumeName": "test-vol-1"}),
      [E("Required", "scaleIO.gateway")]),
    C("ScaleIO with empty system", V("scaleio-volume", scaleIO={"gateway": "http://agc/efg/gateway", "system": "",
                                                                "volumeName": "test-vol-1"}),
      [E("Required", "scaleIO.system")]),
    C("ProjectedVolumeSource more than one projection in a source", V("projected-volume", projected={"sources": [
        {"secret": {"name": "foo"}}, {"secret": {"name": "foo"}, "downwardAPI": {}}]}),
      [E("Forbidden", "projected.sources[1]")]),
    C("ProjectedVolumeSource more than one projection in a source", V("projected-volume", projected={"sources": [
        {"secret": {}}, {"secret": {}, "downwardAPI": {}}]}),
      [E("Required", "projected.sources[0].secret.name"), E("Required", "projected.sources[1].secret.name"),
       E("Forbidden", "projected.sources[1]")]),
    C("valid image volume on pod", V("image-volume", image={"reference": "quay.io/my/artifact:v1",
                                                            "pullPolicy": "IfNotPresent"})),
    C("no volume source", V("volume"), [E("Required", "field[0]", "must specify a volume type")]),
    C("image volume with empty name", V("", image={"reference": "quay.io/my/artifact:v1", "pullPolicy": "IfNotPresent"}),
      [E("Required", "name")]),
    C("image volume with empty reference on pod", V("image-volume", image={"reference": "", "pullPolicy": "IfNotPresent"}),
      [E("Required", "image.reference")], pod=True),
    C("image volume with empty reference on other object",
      V("image-volume", image={"reference": "", "pullPolicy": "IfNotPresent"})),
    C("image volume with wrong pullPolicy",
      V("image-volume", image={"reference": "quay.io/my/artifact:v1", "pullPolicy": "wrong"}),
      [E("NotSupported", "image.pullPolicy")]),
]
# after the table: dupsCase -> one Duplicate error; hugePagesCase (emptyDir medium HugePages) valid


@pytest.mark.parametrize(("vol", "want", "resource_is_pod"), CASES_1 + CASES_2)
def test_validate_volumes(vol: JsonDict, want: list[E], resource_is_pod: bool) -> None:
    errs, names = vv.validate_volumes([copy.deepcopy(vol)], "field", resource_is_pod=resource_is_pod)
    matches(errs, want)
    if not errs:
        assert list(names) == [vol["name"]]


def test_validate_volumes_duplicate_names() -> None:
    """dupsCase: two volumes named abc -> one Duplicate error."""
    dups = [V("abc", emptyDir={}), V("abc", emptyDir={})]
    errs, _ = vv.validate_volumes(dups, "field")
    assert texts(errs) == ['field[1].name: Duplicate value: "abc"']


def test_validate_volume_source_hugepages_empty_dir() -> None:
    """hugePagesCase: an emptyDir of medium HugePages is valid."""
    assert vv.validate_volume_source(V("working", emptyDir={"medium": "HugePages"}), "field[0]") == []


# =================================================================================================
# TestValidateKeyToPath and the per-source tables
# =================================================================================================

@pytest.mark.parametrize(("kp", "etype"), [
    ({"key": "k", "path": "p"}, ""),
    ({"key": "k", "path": "p/p/p/p"}, ""),
    ({"key": "k", "path": "p/..p/p../p..p"}, ""),
    ({"key": "k", "path": "p", "mode": 0o644}, ""),
    ({"key": "", "path": "p"}, "Required"),
    ({"key": "k", "path": ""}, "Required"),
    ({"key": "k", "path": "..p"}, "Invalid"),
    ({"key": "k", "path": "../p"}, "Invalid"),
    ({"key": "k", "path": "p/../p"}, "Invalid"),
    ({"key": "k", "path": "p/.."}, "Invalid"),
    ({"key": "k", "path": "p", "mode": 0o1000}, "Invalid"),
    ({"key": "k", "path": "p", "mode": -1}, "Invalid"),
])
def test_validate_key_to_path(kp: JsonDict, etype: str) -> None:
    """TestValidateKeyToPath: no error, or exactly one of the expected type."""
    errs = vv.validate_key_to_path(kp, "field")
    assert [KIND[e["reason"]] for e in errs] == ([etype] if etype else [])


def first_error(errs: list[JsonDict], etype: str, field: str, detail: str = "") -> None:
    """The per-source tables' check: no error when none is expected, else the first error's type,
    its field ending in "." + the expected one, its message containing the detail."""
    if not etype:
        assert errs == []
        return
    assert errs, "expected an error"
    assert KIND[errs[0]["reason"]] == etype, texts(errs)
    assert errs[0]["field"].endswith("." + field), texts(errs)
    assert detail in errs[0]["message"]


@pytest.mark.parametrize(("nfs", "etype", "field", "detail"), [
    pytest.param({"server": "", "path": "/tmp"}, "Required", "server", "", id="missing server"),
    pytest.param({"server": "my-server", "path": ""}, "Required", "path", "", id="missing path"),
    pytest.param({"server": "my-server", "path": "tmp"}, "Invalid", "path", "must be an absolute path", id="abs path"),
])
def test_validate_nfs_volume_source(nfs: JsonDict, etype: str, field: str, detail: str) -> None:
    first_error(vv.validate_nfs_volume_source(nfs, "field"), etype, field, detail)


@pytest.mark.parametrize(("gfs", "etype", "field"), [
    pytest.param({"endpoints": "", "path": "/tmp"}, "Required", "endpoints", id="missing endpointname"),
    pytest.param({"endpoints": "my-endpoint", "path": ""}, "Required", "path", id="missing path"),
    pytest.param({"endpoints": "", "path": ""}, "Required", "endpoints", id="missing endpointname and path"),
])
def test_validate_glusterfs(gfs: JsonDict, etype: str, field: str) -> None:
    first_error(vv.validate_glusterfs_volume_source(gfs, "field"), etype, field)


@pytest.mark.parametrize(("gfs", "etype", "field"), [
    pytest.param({"endpoints": "", "path": "/tmp"}, "Required", "endpoints", id="missing endpointname"),
    pytest.param({"endpoints": "my-endpoint", "path": ""}, "Required", "path", id="missing path"),
    pytest.param({"endpoints": "my-endpoint", "path": "/tmp", "endpointsNamespace": ""}, "Invalid",
                 "endpointsNamespace", id="non null endpointnamespace with empty string"),
    pytest.param({"endpoints": "", "path": ""}, "Required", "endpoints", id="missing endpointname and path"),
])
def test_validate_glusterfs_persistent_volume_source(gfs: JsonDict, etype: str, field: str) -> None:
    first_error(vv.validate_glusterfs_persistent_volume_source(gfs, "field"), etype, field)


def csi(driver: str, **kw: Any) -> JsonDict:
    return {"driver": driver, **kw}


@pytest.mark.parametrize(("src", "etype", "field"), [
    pytest.param(csi("test-driver"), "", "", id="all required fields ok"),
    pytest.param(csi(""), "Required", "driver", id="missing driver name"),
    pytest.param(csi("comgooglestoragecsigcepd"), "", "", id="driver name: ok no punctuations"),
    pytest.param(csi("io.kubernetes.storage.csi.flex"), "", "", id="driver name: ok dot only"),
    pytest.param(csi("io-kubernetes-storage-csi-flex"), "", "", id="driver name: ok dash only"),
    pytest.param(csi("io_kubernetes_storage_csi_flex"), "Invalid", "driver", id="driver name: invalid underscore"),
    pytest.param(csi("io.kubernetes.storage_csi.flex"), "Invalid", "driver",
                 id="driver name: invalid dot underscores"),
    pytest.param(csi("2io.kubernetes.storage-csi.flex"), "", "", id="driver name: ok beginning with number"),
    pytest.param(csi("io.kubernetes.storage-csi.flex2"), "", "", id="driver name: ok ending with number"),
    pytest.param(csi("io.kubernetes-storage.csi_flex"), "Invalid", "driver",
                 id="driver name: invalid dot dash underscores"),
    pytest.param(csi("a"), "", "", id="driver name: ok length 1"),
    pytest.param(csi("g" * 65), "TooLong", "driver", id="driver name: invalid length > 63"),
    pytest.param(csi("_comgooglestoragecsigcepd"), "Invalid", "driver", id="driver name: invalid start char"),
    pytest.param(csi("comgooglestoragecsigcepd/"), "Invalid", "driver", id="driver name: invalid end char"),
    pytest.param(csi("com/google/storage/csi~gcepd"), "Invalid", "driver", id="driver name: invalid separators"),
    pytest.param(csi("com.google.gcepd", nodePublishSecretRef={"name": "foobar"}), "", "",
                 id="valid nodePublishSecretRef"),
    pytest.param(csi("com.google.gcepd", nodePublishSecretRef={"name": ""}), "Required", "nodePublishSecretRef.name",
                 id="nodePublishSecretRef: invalid name missing"),
])
def test_validate_csi_volume_source(src: JsonDict, etype: str, field: str) -> None:
    first_error(vv.validate_csi_volume_source(src, "field"), etype, field)


def csi_pv(driver: str = "com.google.gcepd", handle: str = "foobar", **kw: Any) -> JsonDict:
    return {"driver": driver, "volumeHandle": handle, **kw}


NS = "default"


@pytest.mark.parametrize(("src", "etype", "field"), [
    pytest.param(csi_pv("test-driver", "test-123", readOnly=True), "", "", id="all required fields ok"),
    pytest.param(csi_pv("test-driver", "test-123"), "", "", id="with default values ok"),
    pytest.param({"volumeHandle": "test-123"}, "Required", "driver", id="missing driver name"),
    pytest.param({"driver": "my-driver"}, "Required", "volumeHandle", id="missing volume handle"),
    pytest.param(csi_pv("comgooglestoragecsigcepd", "test-123"), "", "", id="driver name: ok no punctuations"),
    pytest.param(csi_pv("io.kubernetes.storage.csi.flex", "test-123"), "", "", id="driver name: ok dot only"),
    pytest.param(csi_pv("io-kubernetes-storage-csi-flex", "test-123"), "", "", id="driver name: ok dash only"),
    pytest.param(csi_pv("io_kubernetes_storage_csi_flex", "test-123"), "Invalid", "driver",
                 id="driver name: invalid underscore"),
    pytest.param(csi_pv("io.kubernetes.storage_csi.flex", "test-123"), "Invalid", "driver",
                 id="driver name: invalid dot underscores"),
    pytest.param(csi_pv("2io.kubernetes.storage-csi.flex", "test-123"), "", "", id="driver name: ok beginning with number"),
    pytest.param(csi_pv("io.kubernetes.storage-csi.flex2", "test-123"), "", "", id="driver name: ok ending with number"),
    pytest.param(csi_pv("io.kubernetes-storage.csi_flex", "test-123"), "Invalid", "driver",
                 id="driver name: invalid dot dash underscores"),
    pytest.param(csi_pv("", "test-123"), "Required", "driver", id="driver name: invalid length 0"),
    pytest.param(csi_pv("a", "test-123"), "", "", id="driver name: ok length 1"),
    pytest.param(csi_pv("g" * 65, "test-123"), "TooLong", "driver", id="driver name: invalid length > 63"),
    pytest.param(csi_pv("_comgooglestoragecsigcepd", "test-123"), "Invalid", "driver",
                 id="driver name: invalid start char"),
    pytest.param(csi_pv("comgooglestoragecsigcepd/", "test-123"), "Invalid", "driver", id="driver name: invalid end char"),
    pytest.param(csi_pv("com/google/storage/csi~gcepd", "test-123"), "Invalid", "driver",
                 id="driver name: invalid separators"),
    pytest.param(csi_pv(controllerExpandSecretRef={"namespace": NS}), "Required", "controllerExpandSecretRef.name",
                 id="controllerExpandSecretRef: invalid name missing"),
    pytest.param(csi_pv(controllerExpandSecretRef={"name": "foobar"}), "Required",
                 "controllerExpandSecretRef.namespace", id="controllerExpandSecretRef: invalid namespace missing"),
    pytest.param(csi_pv(controllerExpandSecretRef={"name": "foobar", "namespace": NS}), "", "",
                 id="valid controllerExpandSecretRef"),
    pytest.param(csi_pv(controllerPublishSecretRef={"namespace": NS}), "Required", "controllerPublishSecretRef.name",
                 id="controllerPublishSecretRef: invalid name missing"),
    pytest.param(csi_pv(controllerPublishSecretRef={"name": "foobar"}), "Required",
                 "controllerPublishSecretRef.namespace", id="controllerPublishSecretRef: invalid namespace missing"),
    pytest.param(csi_pv(controllerPublishSecretRef={"name": "foobar", "namespace": NS}), "", "",
                 id="valid controllerPublishSecretRef"),
    pytest.param(csi_pv(nodePublishSecretRef={"name": "foobar", "namespace": NS}), "", "",
                 id="valid nodePublishSecretRef"),
    pytest.param(csi_pv(nodePublishSecretRef={"namespace": "foobar"}), "Required", "nodePublishSecretRef.name",
                 id="nodePublishSecretRef: invalid name missing"),
    pytest.param(csi_pv(nodePublishSecretRef={"name": "foobar"}), "Required", "nodePublishSecretRef.namespace",
                 id="nodePublishSecretRef: invalid namespace missing"),
    pytest.param(csi_pv(nodeExpandSecretRef={"namespace": NS}), "Required", "nodeExpandSecretRef.name",
                 id="nodeExpandSecretRef: invalid name missing"),
    pytest.param(csi_pv(nodeExpandSecretRef={"name": "foobar"}), "Required", "nodeExpandSecretRef.namespace",
                 id="nodeExpandSecretRef: invalid namespace missing"),
    pytest.param(csi_pv(nodeExpandSecretRef={"name": "foobar", "namespace": NS}), "", "",
                 id="valid nodeExpandSecretRef"),
    pytest.param(csi_pv(nodePublishSecretRef={"name": "foobar", "namespace": NS}), "", "",
                 id="Invalid nodePublishSecretRef"),
    pytest.param(csi_pv(nodeExpandSecretRef={"name": "g" * 63, "namespace": NS}), "", "",
                 id="valid nodeExpandSecretRef"),
    pytest.param(csi_pv(nodeExpandSecretRef={"name": "g" * 65, "namespace": NS}), "", "",
                 id="valid long nodeExpandSecretRef"),
    pytest.param(csi_pv(nodeExpandSecretRef={"name": "g" * 255, "namespace": NS}), "Invalid",
                 "nodeExpandSecretRef.name", id="Invalid nodeExpandSecretRef"),
    pytest.param(csi_pv(nodePublishSecretRef={"name": "g" * 63, "namespace": NS}), "", "",
                 id="valid nodePublishSecretRef"),
    pytest.param(csi_pv(nodePublishSecretRef={"name": "g" * 65, "namespace": NS}), "", "",
                 id="valid long nodePublishSecretRef"),
    pytest.param(csi_pv(nodePublishSecretRef={"name": "g" * 255, "namespace": NS}), "Invalid",
                 "nodePublishSecretRef.name", id="Invalid nodePublishSecretRef"),
    pytest.param(csi_pv(controllerExpandSecretRef={"name": "g" * 63, "namespace": NS}), "", "",
                 id="valid ControllerExpandSecretRef"),
    pytest.param(csi_pv(controllerExpandSecretRef={"name": "g" * 65, "namespace": NS}), "", "",
                 id="valid long ControllerExpandSecretRef"),
    pytest.param(csi_pv(controllerExpandSecretRef={"name": "g" * 255, "namespace": NS}), "Invalid",
                 "controllerExpandSecretRef.name", id="Invalid ControllerExpandSecretRef"),
])
def test_validate_csi_persistent_volume_source(src: JsonDict, etype: str, field: str) -> None:
    first_error(vv.validate_csi_persistent_volume_source(src, "field"), etype, field)


# =================================================================================================
# TestValidateEphemeralVolume (testValidatePVC with ephemeral=true)
# =================================================================================================

GOOD_CLAIM_SPEC: JsonDict = {
    "selector": {"matchExpressions": [{"key": "key2", "operator": "Exists"}]},
    "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "resources": {"requests": {"storage": "10G"}},
    "storageClassName": "valid", "volumeMode": "Filesystem",
}


def claim(spec: JsonDict | None = None, **meta: Any) -> JsonDict:
    """testVolumeClaim for an ephemeral volume: the name and namespace left empty."""
    return {"metadata": meta, "spec": copy.deepcopy(GOOD_CLAIM_SPEC if spec is None else spec)}


def rwx(*modes: str, storage: str = "10G", **kw: Any) -> JsonDict:
    return {"accessModes": list(modes), "resources": {"requests": {"storage": storage}}, **kw}


SELECTOR_EXISTS = {"matchExpressions": [{"key": "key2", "operator": "Exists"}]}

EPHEMERAL_CASES = [
    pytest.param(claim(), False, id="good-claim"),
    pytest.param(claim(), False, id="missing-name"),
    pytest.param(claim(), False, id="missing-namespace"),
    pytest.param(claim(generateName="pvc-"), True, id="with-generate-name"),
    pytest.param(claim(uid="ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"), True, id="with-uid"),
    pytest.param(claim(resourceVersion="1"), True, id="with-resource-version"),
    pytest.param(claim(generation=100), True, id="with-generation"),
    pytest.param(claim(creationTimestamp="2025-04-23T10:00:00Z"), True, id="with-creation-timestamp"),
    pytest.param(claim(deletionGracePeriodSeconds=10), True, id="with-deletion-grace-period-seconds"),
    pytest.param(claim(ownerReferences=[{"apiVersion": "v1", "kind": "pod", "name": "foo",
                                         "uid": "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"}]), True,
                 id="with-owner-references"),
    pytest.param(claim(finalizers=["example.com/foo"]), True, id="with-finalizers"),
    pytest.param(claim(managedFields=[{"fieldsType": "FieldsV1", "operation": "Apply", "apiVersion": "apps/v1",
                                       "manager": "foo"}]), True, id="with-managed-fields"),
    pytest.param(claim(labels={"apps.kubernetes.io/name": "test"}), False, id="with-good-labels"),
    pytest.param(claim(labels={"hello-world": "hyphen not allowed"}), True, id="with-bad-labels"),
    pytest.param(claim(labels={"foo": "bar"}), False, id="with-good-annotations"),
    pytest.param(claim(labels={"hello-world": "hyphen not allowed"}), True, id="with-bad-annotations"),
    pytest.param(claim(rwx("ReadWriteOncePod")), False, id="with-read-write-once-pod"),
    pytest.param(claim(rwx("ReadWriteOncePod", "ReadWriteMany")), True, id="with-read-write-once-pod-and-others"),
    pytest.param(claim(rwx("ReadWriteOnce", "ReadOnlyMany", storage="0G", selector=SELECTOR_EXISTS,
                           storageClassName="valid")), True, id="invalid-claim-zero-capacity"),
    pytest.param(claim(rwx("ReadWriteOnce", "ReadOnlyMany", selector={"matchExpressions": [
        {"key": "key2", "operator": "InvalidOp", "values": ["value1", "value2"]}]})), True,
        id="invalid-label-selector"),
    pytest.param(claim(rwx("fakemode")), True, id="invalid-accessmode"),
    pytest.param(claim({"resources": {"requests": {"storage": "10G"}}}), True, id="no-access-modes"),
    pytest.param(claim({"accessModes": ["ReadWriteOnce"]}), True, id="no-resource-requests"),
    pytest.param(claim({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"memory": "10G"}}}), True,
                 id="invalid-resource-requests"),
    pytest.param(claim(rwx("ReadWriteOnce", "ReadOnlyMany", storage="-10G", selector=SELECTOR_EXISTS)), True,
                 id="negative-storage-request"),
    pytest.param(claim(rwx("ReadWriteOnce", "ReadOnlyMany", storage="0G", selector=SELECTOR_EXISTS)), True,
                 id="zero-storage-request"),
    pytest.param(claim(rwx("ReadWriteOnce", "ReadOnlyMany", selector=SELECTOR_EXISTS, storageClassName="-invalid-")),
                 True, id="invalid-storage-class-name"),
    pytest.param(claim(rwx("ReadWriteOnce", "ReadOnlyMany", volumeMode="fakeVolumeMode")), True,
                 id="invalid-volume-mode"),
    pytest.param(claim(rwx("ReadWriteOnce", dataSource={"kind": "PersistentVolumeClaim", "name": "pvc1"},
                           dataSourceRef={"kind": "PersistentVolumeClaim", "name": "pvc2"})), True,
                 id="mismatch-data-source-and-ref"),
    pytest.param(claim(rwx("ReadWriteOnce", dataSource={"apiGroup": "^invalid", "kind": "Foo", "name": "foo1"})), True,
                 id="invaild-apigroup-in-data-source"),
    pytest.param(claim(rwx("ReadWriteOnce", dataSourceRef={"apiGroup": "^invalid", "kind": "Foo", "name": "foo1"})),
                 True, id="invaild-apigroup-in-data-source-ref"),
    # upstream enables VolumeAttributesClass for this case; it is off by default in v1.33
    pytest.param(claim(rwx("ReadWriteOnce", "ReadOnlyMany", selector=SELECTOR_EXISTS,
                           volumeAttributesClassName="-invalid-")), False, id="invalid-volume-attributes-class-name"),
]


@pytest.mark.parametrize(("template", "fails"), EPHEMERAL_CASES)
def test_validate_ephemeral_volume(template: JsonDict, fails: bool) -> None:
    volumes = [V("foo", ephemeral={"volumeClaimTemplate": template})]
    errs, _ = vv.validate_volumes(volumes, "")
    assert bool(errs) is fails, texts(errs)


def test_ephemeral_template_messages() -> None:
    """The template's metadata allows labels and annotations only (ObjectMeta's Go field names,
    UID as "uID"); the claim spec's rules at the template's spec."""
    template = {"metadata": {"name": "x", "uid": "u", "finalizers": []}, "spec": rwx("ReadWriteOnce", storage="0")}
    errs, _ = vv.validate_volumes([V("foo", ephemeral={"volumeClaimTemplate": template})], "spec.volumes")
    path = "spec.volumes[0].ephemeral.volumeClaimTemplate"
    assert texts(errs) == [
        f"{path}.metadata.name: Forbidden: cannot be set",
        f"{path}.metadata.uID: Forbidden: cannot be set",
        f"{path}.metadata.finalizers: Forbidden: cannot be set",
        f'{path}.spec.resources[storage]: Invalid value: "0": must be greater than zero',
    ]
    errs, _ = vv.validate_volumes([V("foo", ephemeral={})], "spec.volumes")
    assert texts(errs) == ["spec.volumes[0].ephemeral.volumeClaimTemplate: Required value"]


# =================================================================================================
# TestValidatePersistentVolumes: the volume source cases
# =================================================================================================

HOST_PATH = {"path": "/foo", "type": "Directory"}


@pytest.mark.parametrize(("spec", "want"), [
    pytest.param({"hostPath": HOST_PATH}, [], id="good-volume"),
    pytest.param({}, ["spec: Required value: must specify a volume type"], id="missing-volume-source"),
    pytest.param({"hostPath": HOST_PATH, "gcePersistentDisk": {"pdName": "foo", "fsType": "ext4"}},
                 ["spec.gcePersistentDisk: Forbidden: may not specify more than 1 volume type"], id="too-many-sources"),
    pytest.param({"hostPath": {"path": "/foo/..", "type": "Directory"}},
                 ["spec.hostPath.path: Invalid value: \"/foo/..\": must not contain '..'"],
                 id="bad-hostpath-volume-backsteps"),
])
def test_validate_persistent_volume_sources(spec: JsonDict, want: list[str]) -> None:
    assert texts(vv.validate_persistent_volume_source(spec, "spec", pv_name="foo")) == want


def test_persistent_volume_source_rules() -> None:
    """The PersistentVolume variants: a local volume needs node affinity; the iSCSI length rule
    names the PersistentVolume and reports at targetportal; secret references need a namespace;
    a flexVolume beside another source is not "more than 1 volume type"."""
    assert texts(vv.validate_persistent_volume_source({"local": {"path": "/mnt/disk"}}, "spec")) == [
        "spec.nodeAffinity: Required value: Local volume requires node affinity"]
    assert vv.validate_persistent_volume_source({"local": {"path": "/mnt/disk"}}, "spec",
                                                node_affinity_specified=True) == []
    iscsi = {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2015-02.example.com:test", "lun": 1,
             "initiatorName": "iqn.2015-02.example.com:init"}
    errs = vv.validate_persistent_volume_source({"iscsi": iscsi}, "spec", pv_name="p" * 60)
    assert texts(errs) == ['spec.iscsi.targetportal: Invalid value: "10.0.0.1:3260": Total length of <volume name>:'
                           '<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.']
    errs = vv.validate_persistent_volume_source({"cinder": {"volumeID": "v", "secretRef": {"name": "s"}}}, "spec")
    assert texts(errs) == ["spec.cinder.secretRef.namespace: Required value"]
    errs = vv.validate_persistent_volume_source({"nfs": {"server": "s", "path": "/p"}, "flexVolume": {"driver": "d"}},
                                                "spec")
    assert errs == []


# =================================================================================================
# TestValidatePod: the volume source cases
# =================================================================================================

def ctr(name: str = "ctr") -> JsonDict:
    """podtest.MakeContainer."""
    return {"name": name, "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}


def pod(name: str = "123", **kw: Any) -> JsonDict:
    """podtest.MakePod."""
    spec: JsonDict = {"containers": [ctr()], "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                      "terminationGracePeriodSeconds": 30, **kw}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
            "spec": spec}


def ctb_volume(**ctb: Any) -> JsonDict:
    return V("projected-volume", projected={"sources": [{"clusterTrustBundle": {"path": "foo-path", **ctb}}]})


VALID_PVC_TEMPLATE: JsonDict = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10G"}}}}
LONG_POD_NAME = "a" * 200
LONG_VOL_NAME = "b" * 60


@pytest.mark.parametrize("p", [
    pytest.param(pod("valid-extended", volumes=[ctb_volume(name="foo")]),
                 id="valid ClusterTrustBundlePEM projected volume referring to a CTB by name"),
    pytest.param(pod("valid-extended", volumes=[ctb_volume(signerName="example.com/foo",
                                                           labelSelector={"matchLabels": {"version": "live"}})]),
                 id="valid ClusterTrustBundlePEM projected volume referring to a CTB by signer name"),
    pytest.param(pod("valid-extended", volumes=[V("pvc", persistentVolumeClaim={"claimName": "my-pvc"}),
                                                V("ephemeral", ephemeral={"volumeClaimTemplate": VALID_PVC_TEMPLATE})]),
                 id="ephemeral volume + PVC, no conflict between them"),
])
def test_validate_pod_success(p: JsonDict) -> None:
    assert texts(S.validate(copy.deepcopy(p))) == []
    spec = copy.deepcopy(p["spec"])
    assert ps.validate_pod_spec(spec, "spec", ps.POD_OPTIONS, pod_name=p["metadata"]["name"]) == []


@pytest.mark.parametrize(("p", "expected"), [
    pytest.param(pod("valid-extended", volumes=[ctb_volume(signerName="example.com/foo", name="foo",
                                                           labelSelector={"matchLabels": {"version": "live"}})]),
                 "only one of name and signerName may be used",
                 id="ClusterTrustBundlePEM projected volume using both byName and bySigner"),
    pytest.param(pod("valid-extended", volumes=[ctb_volume(name="")]), "must be a valid object name",
                 id="ClusterTrustBundlePEM projected volume byName with no name"),
    pytest.param(pod("valid-extended", volumes=[ctb_volume(signerName="", labelSelector={"matchLabels": {"foo": "bar"}})]),
                 "must be a valid signer name", id="ClusterTrustBundlePEM projected volume bySigner with no signer name"),
    pytest.param(pod("valid-extended", volumes=[ctb_volume(signerName="example.com/foo/invalid")]),
                 "must be a fully qualified domain and path of the form",
                 id="ClusterTrustBundlePEM projected volume bySigner with invalid signer name"),
])
def test_validate_pod_errors(p: JsonDict, expected: str) -> None:
    errs = S.validate(copy.deepcopy(p))
    assert expected in aggregate(errs)


@pytest.mark.parametrize(("p", "expected"), [
    pytest.param(pod(LONG_POD_NAME, volumes=[
        V("pvc", persistentVolumeClaim={"claimName": "my-pvc"}),
        V(LONG_VOL_NAME, ephemeral={"volumeClaimTemplate": VALID_PVC_TEMPLATE})]),
        f'spec.volumes[1].name: Invalid value: "{LONG_VOL_NAME}": PVC name "{LONG_POD_NAME}-{LONG_VOL_NAME}": '
        "must be no more than 253 characters", id="final PVC name for ephemeral volume must be valid"),
    pytest.param(pod("123", volumes=[
        V("pvc-volume", persistentVolumeClaim={"claimName": "123-ephemeral-volume"}),
        V("ephemeral-volume", ephemeral={"volumeClaimTemplate": VALID_PVC_TEMPLATE})]),
        'spec.volumes[0].persistentVolumeClaim.claimName: Invalid value: "123-ephemeral-volume": must not reference '
        "a PVC that gets created for an ephemeral volume",
        id="PersistentVolumeClaimVolumeSource must not reference a generated PVC"),
])
def test_validate_pod_errors_naming_the_pod(p: JsonDict, expected: str) -> None:
    """ValidatePodSpec with the pod's metadata: the claim an ephemeral volume creates is named
    `<pod>-<volume>`. A template (no pod name) is spared both rules."""
    spec = copy.deepcopy(p["spec"])
    assert expected in aggregate(ps.validate_pod_spec(spec, "spec", ps.POD_OPTIONS, pod_name=p["metadata"]["name"]))
    assert expected not in aggregate(ps.validate_pod_spec(copy.deepcopy(p["spec"]), "spec", ps.POD_OPTIONS))


# =================================================================================================
# Messages and paths a client reads (upstream's quirks included)
# =================================================================================================

@pytest.mark.parametrize(("volume", "want"), [
    pytest.param(V("v", nfs={}), ["spec.volumes[0].nfs.server: Required value", "spec.volumes[0].nfs.path: Required value",
                                  'spec.volumes[0].nfs.path: Invalid value: "": must be an absolute path'],
                 id="nfs-empty"),
    pytest.param(V("v", secret={"secretName": "s", "defaultMode": 99999}),
                 ["spec.volumes[0].secret.defaultMode: Invalid value: 99999: must be a number between 0 and 0777 (octal), "
                  "both inclusive"], id="secret-default-mode"),
    pytest.param(V("v", gcePersistentDisk={"partition": 256}),
                 ["spec.volumes[0].persistentDisk.pdName: Required value",
                  "spec.volumes[0].persistentDisk.partition: Invalid value: 256: must be between 1 and 255, inclusive"],
                 id="gce-pd-reported-as-persistentDisk"),
    pytest.param(V("v", emptyDir={}, cephfs={"monitors": ["m"]}),
                 ["spec.volumes[0].cephFS: Forbidden: may not specify more than 1 volume type"], id="cephFS-spelling"),
    pytest.param(V("v", hostPath={"path": "/p", "type": "Dir"}),
                 ['spec.volumes[0].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", '
                  '"CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"'],
                 id="host-path-type"),
    pytest.param(V("v", emptyDir={"sizeLimit": "-1Gi"}),
                 ["spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity"],
                 id="empty-dir-negative-size-limit"),
    pytest.param(V("v", projected={"sources": [{"serviceAccountToken": {"expirationSeconds": 599}},
                                               {"serviceAccountToken": {"path": "/abs", "expirationSeconds": 1 << 33}}]}),
                 ["spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 599: "
                  "may not specify a duration less than 10 minutes",
                  "spec.volumes[0].projected.path: Required value",
                  "spec.volumes[0].projected.sources[1].serviceAccountToken.expirationSeconds: Invalid value: "
                  "8589934592: may not specify a duration larger than 2^32 seconds",
                  'spec.volumes[0].projected.path: Invalid value: "/abs": must be a relative path'],
                 id="token-projection-path-at-projected"),
    pytest.param(V("v", projected={"sources": [{"secret": {"name": "s", "items": [{"key": "a", "path": "x"}]}},
                                               {"configMap": {"name": "c", "items": [{"key": "b", "path": "x"}]}},
                                               {"downwardAPI": {"items": [{"path": "x", "fieldRef": {
                                                   "apiVersion": "v1", "fieldPath": "metadata.name"}}]}}]}),
                 ['spec.volumes[0].projected: Invalid value: "c": conflicting duplicate paths',
                  'spec.volumes[0].projected: Invalid value: "x": conflicting duplicate paths'],
                 id="conflicting-duplicate-paths"),
    pytest.param(V("v", downwardAPI={"items": [
        {"path": "ok", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
        {"path": "node", "fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
        {"path": "cpu", "resourceFieldRef": {"resource": "limits.cpu", "divisor": "2"}}]}),
                 ['spec.volumes[0].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: '
                  '"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"',
                  "spec.volumes[0].downwardAPI.resourceFieldRef.containerName: Required value",
                  'spec.volumes[0].downwardAPI.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor\'s '
                  "values 1m and 1 are supported with the cpu resource"],
                 id="downward-api-items-unindexed"),
    pytest.param(V("v", csi={"driver": "csi.example.com", "nodePublishSecretRef": {"name": "Bad_Name"}}),
                 ['spec.volumes[0].csi.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of '
                  "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                  "character (e.g. 'example.com', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
                 id="csi-secret-name-at-csi-name"),
    pytest.param(V("v" * 51, iscsi={"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2015-02.example.com:test",
                                    "initiatorName": "iqn.2015-02.example.com:init"}),
                 [f'spec.volumes[0].name: Invalid value: "{"v" * 51}": Total length of <volume name>:'
                  "<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."],
                 id="iscsi-initiator-name-length"),
    pytest.param(V("v", iscsi={"targetPortal": "p", "iqn": "foo", "lun": 300}),
                 ['spec.volumes[0].iscsi.iqn: Invalid value: "foo": must be valid format starting with iqn, eui, or naa',
                  "spec.volumes[0].iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive"],
                 id="iscsi-iqn-and-lun"),
    pytest.param(V("v", flexVolume={"driver": "d", "options": {"kubernetes.io/x": "1", "example.com/y": "2"}}),
                 ['spec.volumes[0].flexVolume.options[kubernetes.io/x]: Invalid value: "kubernetes.io/x": '
                  "kubernetes.io and k8s.io namespaces are reserved"], id="flex-volume-reserved-option"),
    pytest.param(V("v", azureDisk={"diskName": "d", "diskURI": "https://x/y.vhd", "kind": "Managed", "cachingMode": "All"}),
                 ['spec.volumes[0].azureDisk.cachingMode: Unsupported value: "All": supported values: "None", '
                  '"ReadOnly", "ReadWrite"',
                  'spec.volumes[0].azureDisk.diskURI: Unsupported value: "https://x/y.vhd": supported values: '
                  '"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"'],
                 id="azure-disk-managed-uri"),
    pytest.param(V("v", storageos={"volumeName": "Vol", "secretRef": {}}),
                 ['spec.volumes[0].storageos.volumeName: Invalid value: "Vol": ' + "a lowercase RFC 1123 label must "
                  "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
                  "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')", "spec.volumes[0].storageos.secretRef.name: Required value"],
                 id="storageos-names"),
    pytest.param(V("v", image={"reference": "quay.io/a:v1", "pullPolicy": ""}),
                 ["spec.volumes[0].image.pullPolicy: Required value"], id="image-pull-policy-required"),
])
def test_messages(volume: JsonDict, want: list[str]) -> None:
    errs, _ = vv.validate_volumes([volume], "spec.volumes", resource_is_pod=True)
    assert texts(errs) == want


def test_projected_token_path_allowed_when_the_old_pod_had_one() -> None:
    """AllowNonLocalProjectedTokenPath: an update keeps a non-local token path the old pod has."""
    volume = V("v", projected={"sources": [{"serviceAccountToken": {"path": "../token", "expirationSeconds": 3600}}]})
    spec = {"volumes": [volume]}
    assert vv.has_non_local_projected_token_path(spec)
    assert vv.validate_volumes([volume], "spec.volumes", allow_non_local_token_path=True)[0] == []
    assert texts(vv.validate_volumes([volume], "spec.volumes")[0]) == [
        "spec.volumes[0].projected.path: Invalid value: \"../token\": must not contain '..'"]
    opts = ps.POD_OPTIONS._replace(allow_non_local_projected_token_path=True)
    assert ps.validate_pod_spec({**pod()["spec"], "volumes": [volume]}, "spec", opts) == []


def test_service_account_token_volume_is_valid() -> None:
    """The ServiceAccount plugin's kube-api-access volume passes the projected rules."""
    from apiserver.strategies.admission import token_volume

    assert vv.validate_volumes([token_volume("kube-api-access-bcdfg")], "spec.volumes")[0] == []


# =================================================================================================
# Defaulting (SetDefaults_Volume and the source defaults)
# =================================================================================================

def test_volume_defaults() -> None:
    volumes: list[JsonDict] = [
        V("empty"), V("dapi", downwardAPI={"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}),
        V("proj", projected={"sources": [{"serviceAccountToken": {"path": "token"}},
                                         {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {
                                             "fieldPath": "metadata.namespace"}}]}}]}),
        V("iscsi", iscsi={"targetPortal": "p", "iqn": "iqn.2015-02.example.com:test"}),
        V("rbd", rbd={"monitors": ["m"], "image": "i"}),
        V("azure", azureDisk={"diskName": "d", "diskURI": "https://x/d.vhd"}),
        V("sio", scaleIO={"gateway": "g", "system": "s", "volumeName": "v"}),
        V("eph", ephemeral={"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}),
        V("img", image={"reference": "quay.io/a:latest"}), V("img2", image={"reference": "quay.io/a:v1"}),
    ]
    spec: JsonDict = {"containers": [{"name": "c", "image": "i"}], "volumes": volumes}
    ps.default_pod_spec(spec)
    by_name = {v["name"]: v for v in spec["volumes"]}
    assert by_name["empty"] == {"name": "empty", "emptyDir": {}}
    assert by_name["dapi"]["downwardAPI"] == {"items": [{"path": "n", "fieldRef": {
        "fieldPath": "metadata.name", "apiVersion": "v1"}}], "defaultMode": 420}
    proj = by_name["proj"]["projected"]
    assert proj["defaultMode"] == 420
    assert proj["sources"][0]["serviceAccountToken"] == {"path": "token", "expirationSeconds": 3600}
    assert proj["sources"][1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"] == "v1"
    assert by_name["iscsi"]["iscsi"]["iscsiInterface"] == "default"
    assert {k: by_name["rbd"]["rbd"][k] for k in ("pool", "user", "keyring")} == {
        "pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"}
    assert {k: by_name["azure"]["azureDisk"][k] for k in ("cachingMode", "fsType", "readOnly", "kind")} == {
        "cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False, "kind": "Shared"}
    assert {k: by_name["sio"]["scaleIO"][k] for k in ("storageMode", "fsType")} == {
        "storageMode": "ThinProvisioned", "fsType": "xfs"}
    assert by_name["eph"]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Filesystem"
    assert by_name["img"]["image"]["pullPolicy"] == "Always"
    assert by_name["img2"]["image"]["pullPolicy"] == "IfNotPresent"


def test_persistent_volume_source_defaults() -> None:
    spec: JsonDict = {"hostPath": {"path": "/p"}, "rbd": {"monitors": ["m"], "image": "i", "pool": ""}}
    vv.default_persistent_volume_source(spec)
    assert spec["hostPath"]["type"] == "" and spec["rbd"]["pool"] == "rbd" and spec["rbd"]["user"] == "admin"


# =================================================================================================
# Through the in-process API (what kubectl users read)
# =================================================================================================

async def test_api_rejects_a_pod_with_an_invalid_volume_source(core: Any) -> None:
    from minik3s.api import errors
    from minik3s.api.options import WriteOptions

    pods = core.registry.get("", "v1", "pods")
    bad = {"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "image": "i"}],
                                                "volumes": [{"name": "v", "nfs": {"path": "/export"}}]}}
    with pytest.raises(errors.InvalidError) as e:
        await core.create(pods, "default", bad, WriteOptions())
    assert str(e.value) == 'Pod "x" is invalid: spec.volumes[0].nfs.server: Required value'
    assert e.value.code == 422


async def test_api_rejects_a_deployment_template_volume(core: Any) -> None:
    from minik3s.api import errors
    from minik3s.api.options import WriteOptions

    deployments = core.registry.get("apps", "v1", "deployments")
    labels = {"app": "a"}
    bad = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": labels}, "template": {
        "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}],
                                                 "volumes": [{"name": "v", "secret": {"secretName": "s",
                                                                                      "defaultMode": 99999}}]}}}}
    with pytest.raises(errors.InvalidError) as e:
        await core.create(deployments, "default", bad, WriteOptions())
    assert ("spec.template.spec.volumes[0].secret.defaultMode: Invalid value: 99999: must be a number between 0 "
            "and 0777 (octal), both inclusive") in str(e.value)


async def test_api_defaults_volume_sources(core: Any) -> None:
    from minik3s.api.options import WriteOptions

    pods = core.registry.get("", "v1", "pods")
    p = {"metadata": {"name": "dapi"}, "spec": {"containers": [{"name": "c", "image": "i"}], "volumes": [
        {"name": "info", "downwardAPI": {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}}]}}
    got = await core.create(pods, "default", p, WriteOptions())
    info = next(v for v in got["spec"]["volumes"] if v["name"] == "info")
    assert info["downwardAPI"] == {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name",
                                                                           "apiVersion": "v1"}}],
                                   "defaultMode": 420}
