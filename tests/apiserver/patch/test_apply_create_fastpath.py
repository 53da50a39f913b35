"""The create fast path of update_managed_fields gives exactly what the general algorithm
(compare against an empty object, strip, encode) gives."""

from __future__ import annotations

import copy

import pytest

from apiserver.patch.apply import (
    _record_update,
    _without_managed_fields,
    decode_fields,
    encode_fields,
    encode_managed_fields,
    update_managed_fields,
)
from apiserver.patch.strategic_merge import patch_meta_for

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "u", "resourceVersion": "5",
                 "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": "x", "tier": ""},
                 "annotations": {"a": "b"}, "finalizers": ["f1", "f2"],
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "ru",
                                      "controller": True}]},
    "spec": {
        "containers": [
            {"name": "c", "image": "nginx", "args": ["-a", "-b"], "env": [{"name": "A", "value": "1"},
                                                                      {"name": "B", "value": ""}],
             "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
             "resources": {"requests": {"cpu": "100m"}, "limits": {}},
             "volumeMounts": [{"name": "v", "mountPath": "/data"}]},
            {"name": "side", "image": "busybox", "securityContext": {}},
        ],
        "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"app": "x"}}}],
        "nodeSelector": {}, "schedulingGates": [{"name": "g"}], "hostAliases": None,
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "priority": 0,
    },
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
}

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "d", "namespace": "default", "generation": 1},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "d"}},
             "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
             "template": {"metadata": {"labels": {"app": "d"}, "creationTimestamp": None},
                          "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {}}]}}},
    "status": {},
}

SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
           "spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 53, "protocol": "UDP", "name": "dns"}],
                    "selector": {"app": "x"}, "type": "ClusterIP"}}

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "labels": {"kubernetes.io/hostname": "n"}},
        "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24"},
        "status": {"capacity": {"cpu": "4"}, "addresses": [{"type": "InternalIP", "address": "1.2.3.4"}],
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "images": [{"names": ["a", "b"], "sizeBytes": 1}]}}

CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
             "data": {"a": "1", "b": ""}, "binaryData": {}}

CUSTOM = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
          "spec": {"size": 3, "items": [{"name": "a"}, {"name": "b"}], "nested": {"deep": {"x": None}}, "e": {}},
          "status": {"ready": True}}

EMPTYISH = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "e"}}


def general(obj: dict, *, reset: tuple[str, ...], manager: str = "m") -> list[dict]:
    schema = patch_meta_for(obj["apiVersion"], obj["kind"])
    entries = _record_update([], {}, _without_managed_fields(obj), manager=manager, operation="Update",
                             api_version=obj["apiVersion"], now="T", schema=schema, subresource="",
                             reset=tuple((f"f:{r}",) for r in reset))
    return encode_managed_fields(entries)


@pytest.mark.parametrize("obj", [
    pytest.param(POD, id="pod-with-keyed-lists-sets-and-empties"),
    pytest.param(DEPLOYMENT, id="deployment-with-template"),
    pytest.param(SERVICE, id="service-ports-keyed-by-port-and-protocol"),
    pytest.param(NODE, id="node-status-lists"),
    pytest.param(CONFIGMAP, id="configmap-data-map"),
    pytest.param(CUSTOM, id="custom-resource-deduced-schema"),
    pytest.param(EMPTYISH, id="metadata-only"),
])
@pytest.mark.parametrize("reset", [(), ("status",)], ids=["no-reset", "status-reset"])
def test_create_fast_path_matches_general_algorithm(obj, reset):
    before = copy.deepcopy(obj)
    fast = update_managed_fields(None, obj, manager="m", now="T", reset_fields=reset)
    assert obj == before  # input untouched
    assert fast["metadata"].get("managedFields", []) == general(obj, reset=reset)


def _fields_v1(obj: dict) -> dict:
    out = update_managed_fields(None, obj, manager="m", now="T", reset_fields=("status",))
    return out["metadata"]["managedFields"][0]["fieldsV1"]


def test_memoised_spec_tree_is_a_fresh_copy_per_create():
    first = _fields_v1(POD)
    first["f:spec"]["f:containers"].clear()  # a caller owning its object may change it
    second = _fields_v1(POD)
    assert second["f:spec"]["f:containers"]  # the memo was not shared with the first caller
    assert second == general(POD, reset=("status",))[0]["fieldsV1"]


@pytest.mark.parametrize("change", [
    pytest.param(lambda s: s["containers"][1].update(name="other"), id="keyed-list-key-changes"),
    pytest.param(lambda s: s["containers"][0]["env"].append({"name": "C"}), id="list-item-added"),
    pytest.param(lambda s: s["containers"][0].update(ports=[{"containerPort": 80, "protocol": "UDP"}]),
                 id="key-default-overridden"),
    pytest.param(lambda s: s.update(nodeSelector={"zone": "a"}), id="empty-map-filled"),
    pytest.param(lambda s: s.update(priority=2**70), id="integer-orjson-cannot-encode"),
    pytest.param(lambda s: s.update(restartPolicy="Never"), id="only-a-scalar-value-differs"),
])
def test_memo_never_answers_for_a_different_spec(change):
    _fields_v1(POD)  # warm the memo with the unchanged spec
    other = copy.deepcopy(POD)
    change(other["spec"])
    assert update_managed_fields(None, other, manager="m", now="T", reset_fields=("status",))[
        "metadata"]["managedFields"] == general(other, reset=("status",))


def test_values_nested_deeper_than_orjson_encodes_take_the_direct_walk():
    deep: dict = {}
    for _ in range(300):
        deep = {"a": deep}
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"deep": deep, "x": 1}}
    out = update_managed_fields(None, obj, manager="m", now="T")
    assert out["metadata"]["managedFields"] == general(obj, reset=())
    # the update path (decode + encode of the same deep set) gives the same entry again
    again = update_managed_fields(out, copy.deepcopy(out), manager="m", now="T")
    assert again["metadata"]["managedFields"] == out["metadata"]["managedFields"]


def test_memoised_encode_and_decode_hand_out_fresh_values():
    tree = _fields_v1(POD)
    fields = decode_fields(tree)
    fields.clear()  # callers change the set they get (entry.fields -= changed)
    again = decode_fields(tree)
    assert again and encode_fields(again) == tree
    first = encode_fields(again)
    first["f:spec"].clear()
    assert encode_fields(again) == tree


# ---- the whole-create shape memo: the fields depend on keys, not on scalar values

def _recorded(obj: dict) -> list[dict]:
    return update_managed_fields(None, obj, manager="m", now="T", reset_fields=("status",))["metadata"][
        "managedFields"]


@pytest.mark.parametrize("change", [
    pytest.param(lambda o: o["metadata"].update(name="q", uid="other"), id="name-and-uid"),
    pytest.param(lambda o: o["metadata"]["labels"].update(app="y"), id="label-value"),
    pytest.param(lambda o: o["metadata"]["annotations"].update(a=""), id="annotation-value-empty"),
    pytest.param(lambda o: o["spec"].update(restartPolicy="Never"), id="spec-scalar"),
])
def test_objects_of_one_shape_get_the_general_answer_each(change):
    _recorded(POD)  # warm the memo
    other = copy.deepcopy(POD)
    change(other)
    assert _recorded(other) == general(other, reset=("status",))
    assert _recorded(other) == _recorded(POD)  # same shape, same fields


@pytest.mark.parametrize("change", [
    pytest.param(lambda o: o["metadata"]["labels"].update(extra="1"), id="label-key-added"),
    pytest.param(lambda o: o["metadata"].pop("annotations"), id="annotations-removed"),
    pytest.param(lambda o: o["metadata"].update(labels={}), id="labels-emptied"),
    pytest.param(lambda o: o["metadata"]["finalizers"].append("f3"), id="set-member-added"),
    pytest.param(lambda o: o["metadata"]["ownerReferences"][0].update(uid="other"), id="owner-key-value"),
    pytest.param(lambda o: o["metadata"].update(generateName="p-"), id="metadata-scalar-added"),
    pytest.param(lambda o: o["metadata"]["labels"].update(app={"nested": "x"}), id="label-not-a-scalar"),
    pytest.param(lambda o: o.update(extra={"k": "v"}), id="top-level-map-added"),
])
def test_shape_memo_never_answers_for_another_shape(change):
    _recorded(POD)
    other = copy.deepcopy(POD)
    change(other)
    assert _recorded(other) == general(other, reset=("status",))
    assert _recorded(other) != _recorded(POD)


def test_configmaps_with_other_values_share_a_shape_and_other_keys_do_not():
    a = copy.deepcopy(CONFIGMAP)
    b = copy.deepcopy(CONFIGMAP)
    b["data"] = {"a": "changed", "b": "x" * 10}
    c = copy.deepcopy(CONFIGMAP)
    c["data"] = {"a": "1", "z": ""}
    for obj in (a, b, c):
        assert update_managed_fields(None, obj, manager="m", now="T")["metadata"]["managedFields"] == general(
            obj, reset=())
    assert _fields_v1(a) == _fields_v1(b) != _fields_v1(c)


def test_memoised_create_tree_is_a_fresh_copy_per_create():
    first = _fields_v1(CONFIGMAP)
    first["f:data"].clear()
    assert _fields_v1(CONFIGMAP)["f:data"] == {".": {}, "f:a": {}, "f:b": {}}


def test_values_larger_than_the_memo_takes_are_walked_directly():
    obj = copy.deepcopy(POD)
    obj["spec"]["containers"][0]["args"] = ["x" * 1024] * 80  # over 64 KiB of JSON
    assert _recorded(obj) == general(obj, reset=("status",))
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "n" * 70000, "uid": "big"}]
    assert _recorded(obj) == general(obj, reset=("status",))


def test_shared_created_fields_are_one_tree_per_shape_with_the_same_value():
    """The request core's variant: objects of one shape hold one fieldsV1 tree (it stores them
    and never changes them in place); its value is the general algorithm's."""
    other = copy.deepcopy(POD)
    other["metadata"].update(name="q", uid="u2")

    def shared(obj: dict) -> list[dict]:
        return update_managed_fields(None, obj, manager="m", now="T", reset_fields=("status",),
                                     share_created_fields=True)["metadata"]["managedFields"]

    a, b = shared(POD), shared(other)
    assert a[0]["fieldsV1"] is b[0]["fieldsV1"]
    assert a[0] is not b[0]  # each object has its own entry (time, manager)
    assert a == general(POD, reset=("status",))
    assert _recorded(POD)[0]["fieldsV1"] is not a[0]["fieldsV1"]  # the default stays a fresh copy
