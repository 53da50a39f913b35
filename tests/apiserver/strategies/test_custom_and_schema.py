"""Custom resources against a CRD schema, and unknown-field detection for built-in kinds."""

import pytest

from apiserver.strategies import (
    default_custom,
    prune_custom,
    strategy_for,
    unknown_fields,
    validate_custom,
)
from minik3s.api.resources import ResourceInfo

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "string", "enum": ["S", "M", "L"]},
                "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "blob": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "opts": {"type": "object", "default": {}, "properties": {"debug": {"type": "boolean", "default": False}}},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


def widget(**spec):
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


def rendered(errs):
    return [f"{e['field']}: {e['message']}" for e in errs]


@pytest.mark.parametrize(
    "spec, expected",
    [
        pytest.param({"size": "S"}, [], id="valid"),
        pytest.param({}, ["spec.size: Required value"], id="missing-required"),
        pytest.param({"size": "XL"}, ['spec.size: Unsupported value: "XL": supported values: "S", "M", "L"'],
                     id="enum"),
        pytest.param({"size": "S", "replicas": "two"},
                     ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'],
                     id="wrong-type"),
        pytest.param({"size": "S", "replicas": 11},
                     ["spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"],
                     id="maximum"),
        pytest.param({"size": "S", "replicas": -1},
                     ["spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"],
                     id="minimum"),
        pytest.param({"size": "S", "name": "ABC"},
                     ["spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"], id="pattern"),
        pytest.param({"size": "S", "name": "abcdef"}, ["spec.name: Too long: may not be more than 5 bytes"],
                     id="max-length"),
        pytest.param({"size": "S", "port": "http"}, [], id="int-or-string-accepts-string"),
        pytest.param({"size": "S", "port": 1.5},
                     ['spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"'],
                     id="int-or-string-rejects-float"),
        pytest.param({"size": "S", "tags": ["a", 1]},
                     ['spec.tags[1]: Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"'],
                     id="array-items"),
        pytest.param({"size": "S", "tags": ["a", "b", "c"]}, ["spec.tags: Too many: 3: must have at most 2 items"],
                     id="max-items"),
        pytest.param({"size": "S", "labels": {"a": 1}},
                     ['spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'],
                     id="additional-properties"),
    ],
)
def test_validate_custom(spec, expected):
    assert rendered(validate_custom(widget(**spec), SCHEMA)) == expected


def test_default_custom_applies_nested_defaults():
    w = widget(size="S")
    default_custom(w, SCHEMA)
    assert w["spec"] == {"size": "S", "replicas": 1, "opts": {"debug": False}}


def test_prune_custom_drops_unknown_but_keeps_preserved():
    w = widget(size="S", bogus=1, blob={"anything": {"goes": 1}}, labels={"x": "y"})
    w["extra"] = True
    dropped = prune_custom(w, SCHEMA)
    assert sorted(dropped) == ["extra", "spec.bogus"]
    assert w["spec"] == {"size": "S", "blob": {"anything": {"goes": 1}}, "labels": {"x": "y"}}
    assert w["metadata"] == {"name": "w"}


def test_no_schema_means_no_checks():
    assert validate_custom(widget(x=1), None) == []
    assert prune_custom(widget(x=1), None) == []


def test_custom_strategy_tracks_generation_and_status_subresource():
    info = ResourceInfo("example.com", "v1", "widgets", "Widget", True, builtin=False, subresources=("status",),
                        crd_schema=SCHEMA)
    s = strategy_for("example.com", "Widget", resource=info)
    w = widget(size="S")
    w["status"] = {"ready": True}
    s.default(w)
    s.prepare_for_create(w)
    assert "status" not in w and w["metadata"]["generation"] == 1 and w["spec"]["replicas"] == 1
    new = widget(size="M")
    new["status"] = {"ready": True}
    s.prepare_for_update(new, w)
    assert new["metadata"]["generation"] == 2 and "status" not in new
    assert s.validate(widget(size="XL"))[0]["field"] == "spec.size"


@pytest.mark.parametrize(
    "group, kind, obj, expected",
    [
        pytest.param("", "Pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                 "spec": {"containers": [{"name": "c", "image": "i"}]}}, [], id="clean-pod"),
        pytest.param("", "Pod", {"spec": {"foo": 1, "containers": [{"name": "c", "bar": 2}]}},
                     ["spec.containers[0].bar", "spec.foo"], id="pod-unknown-spec-and-container-fields"),
        pytest.param("", "Pod", {"metadata": {"name": "p", "labelz": {}}}, ["metadata.labelz"], id="metadata-typo"),
        pytest.param("", "Pod", {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                                          "volumes": [{"name": "v", "csi": {"driver": "x", "whatever": 1,
                                                                            "volumeAttributes": {"any": "key"}}}]}},
                     ["spec.volumes[0].csi.whatever"], id="free-form-maps-kept-volume-source-typo-reported"),
        pytest.param("apps", "Deployment", {"spec": {"replica": 3, "template": {"spec": {"containers": [{"nme": "c"}]}}}},
                     ["spec.replica", "spec.template.spec.containers[0].nme"], id="deployment-typos"),
        pytest.param("", "Node", {"spec": {"taints": [{"key": "k", "effect": "NoSchedule", "colour": "red"}]}},
                     ["spec.taints[0].colour"], id="node-taint-typo"),
        pytest.param("scheduling.k8s.io", "PriorityClass", {"value": 1, "globalDefalt": True}, ["globalDefalt"],
                     id="priorityclass-typo"),
        pytest.param("example.com", "Widget", {"spec": {"anything": 1}}, [], id="unknown-kind-nothing-reported"),
    ],
)
def test_unknown_fields(group, kind, obj, expected):
    assert unknown_fields(group, kind, obj) == expected


def test_unknown_fields_of_custom_resource_from_schema():
    assert unknown_fields("example.com", "Widget", widget(size="S", bogus=1), schema=SCHEMA) == ["spec.bogus"]


def test_null_for_non_nullable_field_is_defaulted():
    w = widget(size="S", replicas=None, name=None)
    default_custom(w, SCHEMA)
    assert w["spec"]["replicas"] == 1
    assert "name" not in w["spec"]
