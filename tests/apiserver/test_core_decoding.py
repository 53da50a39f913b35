"""What decoding into upstream's types does to a written object (issue 17): unknown fields are
dropped (fieldValidation Ignore/Warn, with Warn's warnings) or refused (Strict), for built-in
kinds against their wire models and for custom resources against their structural schema;
quantities are stored in resource.Quantity's canonical form. Through the real `ApiCore`."""

from __future__ import annotations

import copy

import pytest

from apiserver.core import ApiCore
from minik3s.api.errors import ApiError, BadRequestError, InvalidError, NotFoundError
from minik3s.api.options import WriteOptions
from minik3s.api.quantity import QuantityError, canonical_quantity


def res(core: ApiCore, group: str, version: str, resource: str):
    info = core.registry.get(group, version, resource)
    assert info is not None
    return info


def pod(name: str, **container: object) -> dict:
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx", **container}]}}


# ---------------------------------------------------------------- quantities
@pytest.mark.parametrize(("value", "canonical"), [
    pytest.param(1.5, "1500m", id="json-number-1.5-is-1500m"),
    pytest.param("1.5", "1500m", id="decimal-string-1.5-is-1500m"),
    pytest.param(2, "2", id="integer-stays"),
    pytest.param(1000, "1k", id="1000-is-1k"),
    pytest.param("1Gi", "1Gi", id="1Gi-stays"),
    pytest.param("0.5Gi", "512Mi", id="half-a-Gi-is-512Mi"),
    pytest.param("1536Mi", "1536Mi", id="1536Mi-stays-not-1.5Gi"),
    pytest.param("1024Ki", "1Mi", id="1024Ki-is-1Mi"),
    pytest.param("0.5Ki", "512", id="binary-below-1024-turns-decimal"),
    pytest.param("100.035Ki", "102435840m", id="fractional-binary-turns-decimal"),
    pytest.param("1e3", "1e3", id="decimal-exponent-keeps-its-form"),
    pytest.param("1.5e3", "1500", id="exponent-with-fraction"),
    pytest.param("12e6", "12e6", id="exponent-multiple-of-three"),
    pytest.param("1E-3", "1e-3", id="negative-exponent"),
    pytest.param("100m", "100m", id="millis-stay"),
    pytest.param("0.1", "100m", id="tenth-is-100m"),
    pytest.param("1080m", "1080m", id="1080m-stays"),
    pytest.param("50k", "50k", id="50k-stays"),
    pytest.param("3.001n", "4n", id="rounds-up-to-nano"),
    pytest.param("0.0000000001", "1n", id="below-nano-rounds-up"),
    pytest.param("-9.01", "-9010m", id="negative"),
    pytest.param("0", "0", id="zero"),
    pytest.param("0Gi", "0", id="zero-binary"),
    pytest.param("1.", "1", id="trailing-dot"),
    pytest.param(".001", "1m", id="leading-dot"),
])
def test_canonical_quantity_table(value: str | int | float, canonical: str) -> None:
    assert canonical_quantity(value) == canonical


@pytest.mark.parametrize("value", ["1Gb", "abc", " 1", "1.1.M", True])
def test_canonical_quantity_refuses_what_does_not_parse(value: object) -> None:
    with pytest.raises(QuantityError):
        canonical_quantity(value)  # type: ignore[arg-type]


async def test_pod_resources_are_stored_canonically(core: ApiCore) -> None:
    pods = res(core, "", "v1", "pods")
    body = pod("q", resources={"requests": {"cpu": 1.5, "memory": "0.5Gi"},
                               "limits": {"cpu": "2000m", "memory": "1Gi", "ephemeral-storage": 1000}})
    body["spec"]["initContainers"] = [{"name": "i", "image": "busybox", "resources": {"requests": {"cpu": 0.1}}}]
    out = await core.create(pods, "default", body)
    c = out["spec"]["containers"][0]["resources"]
    # (requests missing a limited resource default to the limit, as upstream's defaulting does)
    assert c == {"requests": {"cpu": "1500m", "memory": "512Mi", "ephemeral-storage": "1k"},
                 "limits": {"cpu": "2", "memory": "1Gi", "ephemeral-storage": "1k"}}
    assert out["spec"]["initContainers"][0]["resources"] == {"requests": {"cpu": "100m"}}
    assert core.get(pods, "default", "q")["spec"]["containers"][0]["resources"] == c


@pytest.mark.parametrize(("group", "version", "resource", "body", "path", "expected"), [
    pytest.param("", "v1", "resourcequotas", {"spec": {"hard": {"cpu": 1.5, "memory": "0.5Gi", "pods": 10}}},
                 ("spec", "hard"), {"cpu": "1500m", "memory": "512Mi", "pods": "10"}, id="resourcequota-hard"),
    pytest.param("", "v1", "limitranges",
                 {"spec": {"limits": [{"type": "Container", "max": {"cpu": 2.5}, "default": {"memory": "0.5Gi"},
                                       "defaultRequest": {"cpu": 0.5}}]}},
                 # canonical, then SetDefaults_LimitRangeItem: default from max, defaultRequest from default
                 ("spec", "limits", 0), {"type": "Container", "max": {"cpu": "2500m"},
                                         "default": {"memory": "512Mi", "cpu": "2500m"},
                                         "defaultRequest": {"cpu": "500m", "memory": "512Mi"}}, id="limitrange-items"),
    pytest.param("", "v1", "persistentvolumeclaims",
                 {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0.5Gi"}}}},
                 ("spec", "resources"), {"requests": {"storage": "512Mi"}}, id="pvc-requests"),
    pytest.param("apps", "v1", "deployments",
                 {"spec": {"selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "b"}},
                                        "spec": {"containers": [{"name": "c", "image": "i",
                                                                 "resources": {"requests": {"cpu": 0.5}}}]}}}},
                 ("spec", "template", "spec", "containers", 0, "resources"), {"requests": {"cpu": "500m"}},
                 id="deployment-pod-template"),
    pytest.param("batch", "v1", "jobs",
                 {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                     {"name": "c", "image": "i", "resources": {"limits": {"memory": "2048Mi"}}}]}}}},
                 ("spec", "template", "spec", "containers", 0, "resources"), {"limits": {"memory": "2Gi"}, "requests": {"memory": "2Gi"}},
                 id="job-pod-template-without-a-full-model"),
])
async def test_resource_lists_of_other_kinds_are_canonical(core: ApiCore, group: str, version: str, resource: str,
                                                           body: dict, path: tuple, expected: dict) -> None:
    info = res(core, group, version, resource)
    body = {"metadata": {"name": "x"}, **body}
    out = await core.create(info, "default", body)
    for p in path:
        out = out[p]
    assert out == expected


async def test_node_status_capacity_is_canonical(core: ApiCore) -> None:
    nodes = res(core, "", "v1", "nodes")
    await core.create(nodes, None, {"metadata": {"name": "n1"}})
    out = await core.update(nodes, None, "n1", {
        "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": 4, "memory": "16384Mi", "pods": 110},
                   "allocatable": {"cpu": 3.5, "memory": "0.5Ti"}}}, subresource="status")
    assert out["status"]["capacity"] == {"cpu": "4", "memory": "16Gi", "pods": "110"}
    assert out["status"]["allocatable"] == {"cpu": "3500m", "memory": "512Gi"}


async def test_unknown_fields_beside_quantities_in_one_decode(core: ApiCore) -> None:
    """Pruning and canonical quantities come from one walk: an unknown field next to a quantity,
    inside a resource list's parent and under a dropped subtree; a value that does not parse as
    a quantity is left for validation to report."""
    pods = res(core, "", "v1", "pods")
    body = pod("both", resources={"requests": {"cpu": 0.25}, "limits": {"cpu": 1.5}, "bogusRes": {"cpu": 9.5}})
    body["spec"]["initContainers"] = [{"name": "i", "image": "busybox", "bogusInit": 1,
                                       "resources": {"limits": {"memory": "0.5Mi"}}}]
    body["spec"]["bogusSpec"] = {"resources": {"requests": {"cpu": 0.5}}}
    opts = WriteOptions()
    out = await core.create(pods, "default", body, opts)
    assert out["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "250m"}, "limits": {"cpu": "1500m"}}
    assert out["spec"]["initContainers"][0]["resources"]["limits"] == {"memory": "512Ki"}
    assert "bogusSpec" not in out["spec"]
    assert opts.warnings == ['unknown field "spec.bogusSpec"', 'unknown field "spec.containers[0].resources.bogusRes"',
                             'unknown field "spec.initContainers[0].bogusInit"']
    with pytest.raises(InvalidError) as e:
        await core.create(pods, "default", pod("bad", resources={"requests": {"cpu": "lots"}}))
    assert "spec.containers[0].resources.requests[cpu]" in str(e.value)


# ---------------------------------------------------------------- unknown fields
async def test_unknown_fields_are_dropped_with_warnings(core: ApiCore) -> None:
    pods = res(core, "", "v1", "pods")
    body = pod("u", bogusNested=1)
    body["bogusTop"] = {"x": 1}
    body["spec"]["bogusSpec"] = True
    opts = WriteOptions()
    out = await core.create(pods, "default", body, opts)
    assert "bogusTop" not in out and "bogusSpec" not in out["spec"]
    assert "bogusNested" not in out["spec"]["containers"][0]
    assert opts.warnings == ['unknown field "bogusTop"', 'unknown field "spec.bogusSpec"',
                             'unknown field "spec.containers[0].bogusNested"']
    stored = core.get(pods, "default", "u")
    assert "bogusTop" not in stored and "bogusNested" not in stored["spec"]["containers"][0]


async def test_unknown_fields_are_dropped_silently_under_ignore(core: ApiCore) -> None:
    cms = res(core, "", "v1", "configmaps")
    opts = WriteOptions(field_validation="Ignore")
    out = await core.create(cms, "default", {"metadata": {"name": "i"}, "data": {"a": "b"}, "bogus": 1}, opts)
    assert out.get("bogus") is None and out["data"] == {"a": "b"}
    assert opts.warnings == []


async def test_unknown_fields_are_refused_under_strict(core: ApiCore) -> None:
    cms = res(core, "", "v1", "configmaps")
    with pytest.raises(BadRequestError) as e:
        await core.create(cms, "default", {"metadata": {"name": "s"}, "bogus": 1, "other": 2},
                          WriteOptions(field_validation="Strict"))
    assert e.value.message == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                               'strict decoding error: unknown field "bogus", unknown field "other"')
    with pytest.raises(NotFoundError):
        core.get(cms, "default", "s")


async def test_unknown_fields_are_dropped_from_patched_objects(core: ApiCore) -> None:
    cms = res(core, "", "v1", "configmaps")
    await core.create(cms, "default", {"metadata": {"name": "p"}, "data": {"a": "b"}})
    opts = WriteOptions()
    out = await core.patch(cms, "default", "p", "merge", {"bogus": {"deep": 1}, "data": {"c": "d"}}, opts)
    assert "bogus" not in out and out["data"] == {"a": "b", "c": "d"}
    assert opts.warnings == ['unknown field "bogus"']


@pytest.mark.parametrize(("patch_type", "body", "shown"), [
    pytest.param("merge", {"bogus": 1}, '{"apiVersion":"v1","data":{"a":"b"},"kind":"ConfigMap",', id="merge"),
    pytest.param("json", [{"op": "add", "path": "/bogus", "value": 1}],
                 '{"apiVersion":"v1","data":{"a":"b"},"kind":"ConfigMap",', id="json"),
    pytest.param("strategic", {"bogus": 1}, "map[bogus:1]", id="strategic"),
])
async def test_unknown_fields_in_a_patch_under_strict_are_a_422_on_field_patch(
        core: ApiCore, patch_type: str, body: object, shown: str) -> None:
    """The patchers' strict decode (jsonPatcher / applyPatchToObject): 422 Invalid on field
    "patch", whose value is the patched object's JSON (json/merge) or the patch as Go prints a
    map (strategic); nothing is written."""
    cms = res(core, "", "v1", "configmaps")
    await core.create(cms, "default", {"metadata": {"name": "p"}, "data": {"a": "b"}})
    with pytest.raises(InvalidError) as e:
        await core.patch(cms, "default", "p", patch_type, body, WriteOptions(field_validation="Strict"))
    (cause,) = e.value.details["causes"]
    assert cause["field"] == "patch" and cause["reason"] == "FieldValueInvalid"
    assert cause["message"].startswith("Invalid value: ")
    assert shown.replace('"', '\\"') in cause["message"]
    assert cause["message"].endswith(': strict decoding error: unknown field "bogus"')
    assert "bogus" not in core.get(cms, "default", "p")


async def test_server_side_apply_of_an_undeclared_field_is_upstreams_typed_patch_500(core: ApiCore) -> None:
    """fieldmanager cannot build the typed patch object of an apply configuration with a field
    the kind's schema does not declare: a reason-less 500 naming the object, its kind and the
    field as structured-merge-diff prints it, whatever fieldValidation says (kubernetes#122480)."""
    deployments = res(core, "apps", "v1", "deployments")
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "web", "image": "nginx", "bogus": 1}]}}}}
    for validation in ("Strict", "Ignore"):
        with pytest.raises(ApiError) as e:
            await core.patch(deployments, "default", "d", "apply", copy.deepcopy(body),
                             WriteOptions(field_manager="kubectl", field_validation=validation))
        assert e.value.code == 500 and e.value.reason == ""
        assert e.value.message == ('failed to create typed patch object (default/d; apps/v1, Kind=Deployment): '
                                   '.spec.template.spec.containers[name="web"].bogus: field not declared in schema')
    with pytest.raises(NotFoundError):
        core.get(deployments, "default", "d")
    nodes = res(core, "", "v1", "nodes")
    with pytest.raises(ApiError) as e:
        await core.patch(nodes, None, "n", "apply", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                                                      "spec": {"x": 1}, "y": 2},
                         WriteOptions(field_manager="kubectl"))
    assert e.value.message == ("failed to create typed patch object (/n; /v1, Kind=Node): errors:\n"
                               "  .spec.x: field not declared in schema\n  .y: field not declared in schema")


async def test_metadata_keeps_its_known_fields_and_drops_unknown_ones(core: ApiCore) -> None:
    cms = res(core, "", "v1", "configmaps")
    out = await core.create(cms, "default", {"metadata": {"name": "m", "labels": {"a": "b"},
                                                          "annotations": {"k": "v"}, "bogusMeta": 1}})
    assert out["metadata"]["labels"] == {"a": "b"} and out["metadata"]["annotations"] == {"k": "v"}
    assert "bogusMeta" not in out["metadata"]


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {
                     "spec": {"type": "object", "properties": {
                         "size": {"type": "integer"},
                         "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                         "ports": {"type": "array", "items": {"type": "object", "properties": {
                             "port": {"type": "integer"}}}}}}}}}}]},
}


async def test_custom_resources_are_pruned_by_their_structural_schema(core: ApiCore) -> None:
    crds = res(core, "apiextensions.k8s.io", "v1", "customresourcedefinitions")
    await core.create(crds, None, CRD)
    widgets = res(core, "example.com", "v1", "widgets")
    opts = WriteOptions()
    out = await core.create(widgets, "default", {
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"size": 3, "extra": 1, "free": {"anything": {"goes": True}}, "ports": [{"port": 80, "junk": 1}]},
        "topJunk": 1}, opts)
    assert out["spec"] == {"size": 3, "free": {"anything": {"goes": True}}, "ports": [{"port": 80}]}
    assert "topJunk" not in out
    assert opts.warnings == ['unknown field "spec.extra"', 'unknown field "spec.ports[0].junk"',
                             'unknown field "topJunk"']
    with pytest.raises(BadRequestError) as e:
        await core.create(widgets, "default", {"apiVersion": "example.com/v1", "kind": "Widget",
                                               "metadata": {"name": "w2"}, "spec": {"nope": 1}},
                          WriteOptions(field_validation="Strict"))
    assert e.value.message == 'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.nope"'


async def test_server_side_apply_of_a_known_configmap_manages_only_what_it_sets(core: ApiCore) -> None:
    cms = res(core, "", "v1", "configmaps")
    for value in ("1", "2"):  # the create, then an update through apply
        opts = WriteOptions(field_manager="me")
        out = await core.patch(cms, "default", "a", "apply", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": value}}, opts)
        assert opts.warnings == [] and out["data"] == {"x": value}
        assert [m["fieldsV1"] for m in out["metadata"]["managedFields"]] == [{"f:data": {"f:x": {}}}]
    with pytest.raises(ApiError) as e:  # a field ConfigMap does not declare: no typed patch object
        await core.patch(cms, "default", "a", "apply", {"apiVersion": "v1", "kind": "ConfigMap",
                                                        "metadata": {"name": "a"}, "bogus": {"y": 1}},
                         WriteOptions(field_manager="me"))
    assert e.value.code == 500
    assert e.value.message.endswith("(default/a; /v1, Kind=ConfigMap): .bogus: field not declared in schema")
    assert core.get(cms, "default", "a")["data"] == {"x": "2"}


async def test_a_templates_null_creation_timestamp_is_no_creation_timestamp(core: ApiCore) -> None:
    """Go's zero time: a template sent back as Go serialised it (`creationTimestamp: null`,
    what kubectl rollout undo and `get -o yaml` manifests carry) is stored as the template
    without it, with no warning, through create and patch alike, so controllers comparing
    templates see one template."""
    sts = res(core, "apps", "v1", "statefulsets")
    template = {"metadata": {"creationTimestamp": None, "labels": {"app": "db"}},
                "spec": {"containers": [{"name": "c", "image": "postgres"}]}}
    opts = WriteOptions()
    out = await core.create(sts, "default", {"metadata": {"name": "db"}, "spec": {
        "selector": {"matchLabels": {"app": "db"}}, "serviceName": "db", "template": template}}, opts)
    assert out["spec"]["template"]["metadata"] == {"labels": {"app": "db"}} and opts.warnings == []
    out = await core.patch(sts, "default", "db", "strategic", {"spec": {"template": {"metadata": {
        "creationTimestamp": None, "labels": {"app": "db", "v": "2"}}}}})
    assert out["spec"]["template"]["metadata"] == {"labels": {"app": "db", "v": "2"}}


_IN_TREE_SOURCES = {
    "gitRepo": {"repository": "https://example.com/r.git"},
    "gcePersistentDisk": {"pdName": "disk-1"},
    "awsElasticBlockStore": {"volumeID": "vol-1"},
    "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0},
    "glusterfs": {"endpoints": "gluster", "path": "vol"},
    "rbd": {"monitors": ["10.0.0.1:6789"], "image": "img"},
    "flexVolume": {"driver": "example/lvm"},
    "cinder": {"volumeID": "vol-1"},
    "cephfs": {"monitors": ["10.0.0.1:6789"]},
    "flocker": {"datasetName": "ds"},
    "fc": {"targetWWNs": ["500a0982991b8dc5"], "lun": 2},
    "azureFile": {"secretName": "s", "shareName": "share"},
    "vsphereVolume": {"volumePath": "[ds] vol.vmdk"},
    "quobyte": {"registry": "registry:7861", "volume": "v"},
    "azureDisk": {"diskName": "d", "diskURI": "https://example.blob.core.windows.net/vhds/d.vhd"},
    "photonPersistentDisk": {"pdID": "pd-1"},
    "portworxVolume": {"volumeID": "vol-1"},
    "scaleIO": {"gateway": "https://gateway", "system": "sys", "secretRef": {"name": "s"}, "volumeName": "v"},
    "storageos": {"volumeName": "v"},
}


@pytest.mark.parametrize("source", sorted(_IN_TREE_SOURCES))
async def test_in_tree_volume_sources_are_stored_as_written(core: ApiCore, source: str) -> None:
    """v1.33 still serves every in-tree VolumeSource (most deprecated): a manifest naming one is
    accepted under Strict decoding and stored with what it says (plus the source's defaults),
    not refused as an unknown field or pruned to a source-less volume."""
    pods = res(core, "", "v1", "pods")
    body = pod("p", volumeMounts=[{"name": "v", "mountPath": "/data"}])
    body["spec"]["volumes"] = [{"name": "v", source: dict(_IN_TREE_SOURCES[source])}]
    out = await core.create(pods, "default", body, WriteOptions(field_validation="Strict"))
    (vol,) = out["spec"]["volumes"]
    assert set(vol) == {"name", source}
    assert vol[source].items() >= _IN_TREE_SOURCES[source].items()
