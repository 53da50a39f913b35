"""One semantics for both transports: the same writes through the HTTP transport and through the
in-process `LocalClient` leave the same `managedFields` (managers, operations, subresources,
fieldsV1), raise the same errors and report the same warnings. Each client carries a
component's identity (its user agent); the server names the manager of a write without
`fieldManager` after it, as kube-apiserver does.

Both clients talk to one real server (HTTP on 127.0.0.1, the in-process core of the same
process); each transport writes its own objects, and the recorded histories are compared.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from minik3s import server
from minik3s.api.errors import ApiError
from minik3s.api.resources import CONFIGMAPS, DEPLOYMENTS, NODES, PODS
from minik3s.client.local import LocalClient
from minik3s.client.rest import HttpClient, default_user_agent
from minik3s.config import ServerConfig

COMPONENT = "kube-controller-manager"


@pytest.fixture
async def clients(tmp_path: Path) -> AsyncIterator[dict[str, tuple[Any, list[str]]]]:
    cfg = ServerConfig(port=0, data_dir=tmp_path, history_window=100, compact_interval=3600,
                       disable={"scheduler", "controllers", "kubelet", "descheduler"})
    rs = await server.start(cfg)
    http_warnings: list[str] = []
    local_warnings: list[str] = []
    ua = default_user_agent(COMPONENT)
    http = HttpClient(rs.url, user_agent=ua, on_warning=http_warnings.append)
    local = LocalClient(rs.core, user_agent=ua, on_warning=local_warnings.append)
    try:
        yield {"http": (http, http_warnings), "local": (local, local_warnings)}
    finally:
        await http.close()
        await server.stop(rs)


def deployment(name: str, replicas: int = 2, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
            **extra}


def ownership(obj: dict[str, Any]) -> list[tuple[Any, ...]]:
    """managedFields without the timestamps (the only entry field that differs between runs)."""
    return [(e.get("manager"), e.get("operation"), e.get("apiVersion"), e.get("subresource"),
             e.get("fieldsType"), e.get("fieldsV1")) for e in obj["metadata"].get("managedFields") or []]


def error_shape(e: ApiError) -> tuple[Any, ...]:
    return type(e).__name__, e.code, e.reason, e.message.replace("-local", "-X").replace("-http", "-X"), e.causes


async def write_history(c: Any, name: str) -> tuple[list[list[tuple[Any, ...]]], list[tuple[Any, ...]]]:
    """create, update, update_status, merge patch, apply, a conflicting apply, bad writes: the
    ownership after each write and the errors."""
    steps: list[list[tuple[Any, ...]]] = []
    errors: list[tuple[Any, ...]] = []
    # an unknown field: fieldValidation defaults to Warn on both transports (accepted, warned)
    cm = await c.create(CONFIGMAPS, {"metadata": {"name": name}, "data": {"a": "1"}, "bogus": 1}, "default")
    steps.append(ownership(cm))
    d = await c.create(DEPLOYMENTS, deployment(name), "default")
    steps.append(ownership(d))
    d = copy.deepcopy(d)
    d["spec"]["replicas"] = 3
    d = await c.update(DEPLOYMENTS, d)
    steps.append(ownership(d))
    d = copy.deepcopy(d)
    d["status"] = {"replicas": 3, "observedGeneration": d["metadata"]["generation"]}
    d = await c.update_status(DEPLOYMENTS, d)
    steps.append(ownership(d))
    d = await c.patch(DEPLOYMENTS, name, {"metadata": {"labels": {"tier": "web"}}}, "default")
    steps.append(ownership(d))
    applied = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": name, "annotations": {"owner": "tool"}}, "spec": {"minReadySeconds": 5}}
    d = await c.patch(DEPLOYMENTS, name, applied, "default", patch_type="apply", field_manager="tool")
    steps.append(ownership(d))
    # spec.replicas is the component's: applying another value without force conflicts with it
    with pytest.raises(ApiError) as e:
        await c.patch(DEPLOYMENTS, name, {**applied, "spec": {"replicas": 5}}, "default", patch_type="apply",
                      field_manager="tool")
    errors.append(error_shape(e.value))
    # an apply needs a manager on both transports: the identity is not used for Apply
    with pytest.raises(ApiError) as e:
        await c.patch(DEPLOYMENTS, name, applied, "default", patch_type="apply")
    errors.append(error_shape(e.value))
    with pytest.raises(ApiError) as e:
        await c.create(CONFIGMAPS, {"metadata": {"name": "Bad_Name"}}, "default")
    errors.append(error_shape(e.value))
    # status and a strategic patch on a pod; a node (cluster-scoped) with its status
    p = await c.create(PODS, {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
                       "default")
    p = await c.patch(PODS, name, {"status": {"phase": "Running"}}, "default", subresource="status",
                      patch_type="strategic")
    steps.append(ownership(p))
    n = await c.create(NODES, {"metadata": {"name": name, "labels": {"zone": "a"}}})
    n = copy.deepcopy(n)
    n["status"] = {"capacity": {"cpu": "4"}}
    n = await c.update_status(NODES, n)
    steps.append(ownership(n))
    return steps, errors


async def test_both_transports_record_the_same_field_ownership_errors_and_warnings(clients):
    results = {t: await write_history(c, f"parity-{t}") for t, (c, _) in clients.items()}
    assert results["local"] == results["http"]
    steps, errors = results["local"]
    # the writes are recorded under the client's identity, the apply under its explicit manager
    assert [(m, op, sub) for m, op, _, sub, _, _ in steps[5]] == [
        ("tool", "Apply", None), (COMPONENT, "Update", None), (COMPONENT, "Update", "status")]
    assert errors[0][:4] == ("ConflictError", 409, "Conflict",
                             f'Apply failed with 1 conflict: conflict with "{COMPONENT}" using apps/v1: .spec.replicas')
    assert errors[1][:3] == ("BadRequestError", 400, "BadRequest")
    assert errors[2][:3] == ("InvalidError", 422, "Invalid")
    assert clients["local"][1] == clients["http"][1] == ['unknown field "bogus"']


async def test_a_component_identity_names_the_manager_of_its_writes(clients):
    http, _ = clients["http"]
    for binary in ("kube-scheduler", "kubelet"):
        ua = default_user_agent(binary)
        assert ua.startswith(f"{binary}/v")
        local = LocalClient(clients["local"][0].core, user_agent=ua)
        cm = await local.create(CONFIGMAPS, {"metadata": {"name": f"by-{binary}"}, "data": {"a": "1"}}, "default")
        assert [e["manager"] for e in cm["metadata"]["managedFields"]] == [binary]
        other = HttpClient(http.base_url, user_agent=ua)
        try:
            cm = await other.create(CONFIGMAPS, {"metadata": {"name": f"by-{binary}-http"}, "data": {"a": "1"}}, "default")
        finally:
            await other.close()
        assert [e["manager"] for e in cm["metadata"]["managedFields"]] == [binary]


async def test_read_only_writes_record_the_same_on_both_transports(clients):
    """`read_only=True` only decides whether the in-process result is a copy: the same writes
    with it give what HTTP (where it is a no-op) gives, and the result equals a fresh GET."""
    got = {}
    for t, (c, _) in clients.items():
        name = f"ro-{t}"
        out = [await c.create(CONFIGMAPS, {"metadata": {"name": name}, "data": {"a": "1"}}, "default",
                              read_only=True)]
        out.append(await c.patch(CONFIGMAPS, name, {"data": {"b": "2"}}, "default", read_only=True))
        out.append(await c.update(CONFIGMAPS, {**out[-1], "data": {"c": "3"}}, read_only=True))
        assert out[-1] == await c.get(CONFIGMAPS, name, "default")
        got[t] = [(o["data"], ownership(o)) for o in out]
    assert got["local"] == got["http"]
