"""A JSON null inside a list or map of a built-in kind decodes as kube-apiserver's Go decoding
leaves it: the element type's zero value. `labels: {a: null}` is stored as `{a: ""}`, a
ConfigMap's `data: {k: null}` as `{k: ""}`, `args: [null]` as `[""]`, a null element of a
struct list as the zero struct (`{}`), which validation then judges as upstream judges the zero
struct (a toleration with no key must be Exists; a container needs a name and an image). Nothing
stores a null where a consumer (the scheduler, the node lifecycle controller) expects a value.
Through the real `ApiCore`."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.core import ApiCore
from minik3s.api.errors import InvalidError

JsonDict = dict[str, Any]


def res(core: ApiCore, resource: str) -> Any:
    info = core.registry.get("", "v1", resource)
    assert info is not None
    return info


def pod(name: str, **spec: Any) -> JsonDict:
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}], **spec}}


async def test_null_map_values_of_strings_are_empty_strings(core: ApiCore) -> None:
    cm = await core.create(res(core, "configmaps"), "default",
                           {"metadata": {"name": "c", "labels": {"a": None, "b": "x"}}, "data": {"k": None, "j": "v"}})
    assert cm["data"] == {"k": "", "j": "v"}
    assert cm["metadata"]["labels"] == {"a": "", "b": "x"}
    assert core.get(res(core, "configmaps"), "default", "c")["data"] == {"k": "", "j": "v"}


async def test_null_elements_of_string_lists_are_empty_strings(core: ApiCore) -> None:
    p = pod("p")
    p["spec"]["containers"][0]["args"] = [None, "--v=2"]
    p["spec"]["containers"][0]["command"] = ["/pause", None]
    created = await core.create(res(core, "pods"), "default", p)
    c = created["spec"]["containers"][0]
    assert c["args"] == ["", "--v=2"]
    assert c["command"] == ["/pause", ""]


async def test_a_null_node_condition_is_the_zero_condition(core: ApiCore) -> None:
    node = await core.create(res(core, "nodes"), None, {
        "metadata": {"name": "n1"},
        "status": {"conditions": [None, {"type": "Ready", "status": "True"}], "images": [None]}})
    assert node["status"]["conditions"] == [{}, {"type": "Ready", "status": "True"}]
    assert node["status"]["images"] == [{}]


@pytest.mark.parametrize(("spec", "message"), [
    pytest.param({"tolerations": [None]},
                 'spec.tolerations[0].operator: Invalid value: "": operator must be Exists when `key` is empty, '
                 'which means "match all values and all keys"', id="toleration"),
    pytest.param({"containers": [None]}, "spec.containers[0].name: Required value", id="container"),
    pytest.param({"containers": [{"name": "c", "image": "i", "ports": [None]}]},
                 "spec.containers[0].ports[0].containerPort: Required value", id="container-port"),
])
async def test_a_null_struct_element_is_validated_as_the_zero_struct(core: ApiCore, spec: JsonDict,
                                                                     message: str) -> None:
    with pytest.raises(InvalidError) as e:
        await core.create(res(core, "pods"), "default", pod("p", **spec))
    assert message in str(e.value)
    assert "null" not in str(e.value)
