"""Objects are written in kube-apiserver's field order (Go's declaration order): kind,
apiVersion, metadata, then the kind's own fields (spec before status); metadata from name to
managedFields. Reordered in place, unknown keys after the known ones, idempotent."""

from __future__ import annotations

from minik3s.api.field_order import OBJECT_META, order_fields


def test_a_node_written_metadata_first_is_served_kind_first() -> None:
    md = {"labels": {"a": "b"}, "name": "n", "managedFields": [], "uid": "u", "resourceVersion": "3",
          "creationTimestamp": "t", "annotations": {}}
    node = {"metadata": md, "status": {}, "spec": {}, "apiVersion": "v1", "kind": "Node"}
    order_fields(node)
    assert list(node) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert node["metadata"] is md  # in place: holders of the dicts keep them
    assert list(md) == ["name", "uid", "resourceVersion", "creationTimestamp", "labels", "annotations",
                        "managedFields"]
    order_fields(node)  # idempotent
    assert list(node) == ["kind", "apiVersion", "metadata", "spec", "status"]


def test_kinds_with_their_own_fields_and_unknown_keys() -> None:
    ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"namespace": "d", "name": "e"}, "type": "Normal",
          "reason": "R", "involvedObject": {}, "message": "m", "count": 2, "source": {}, "x-extra": 1}
    order_fields(ev)
    assert list(ev) == ["kind", "apiVersion", "metadata", "involvedObject", "reason", "message", "source", "count",
                        "type", "x-extra"]
    cm = {"data": {}, "metadata": {"name": "c"}, "kind": "ConfigMap", "immutable": True, "apiVersion": "v1"}
    order_fields(cm)
    assert list(cm) == ["kind", "apiVersion", "metadata", "immutable", "data"]
    custom = {"spec": {}, "apiVersion": "example.com/v1", "status": {}, "kind": "Widget", "extra": 1,
              "metadata": {"name": "w"}}
    order_fields(custom)
    assert list(custom) == ["kind", "apiVersion", "metadata", "spec", "status", "extra"]
    assert OBJECT_META[0] == "name" and OBJECT_META[-1] == "managedFields"
