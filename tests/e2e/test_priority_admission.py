"""Priority admission over HTTP and in process: a globalDefault PriorityClass created, changed
or deleted between two pod creates decides the second pod's priority at once, whichever
transport wrote the class and whichever creates the pod (the server caches the default class
and must notice every change)."""

from __future__ import annotations

from typing import Any

import httpx

from minik3s.api.resources import PODS, PRIORITYCLASSES
from minik3s.embed import Cluster

PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}


def pclass(name: str, value: int, *, default: bool) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


def test_default_class_changes_reach_the_next_pod_through_both_transports(
        http: httpx.Client, ns: str, minik3s_cluster: Cluster) -> None:
    local = minik3s_cluster.server.client_for("priority-test")

    def over_http(name: str) -> tuple[int, str | None]:
        r = http.post(f"/api/v1/namespaces/{ns}/pods", json=pod(name))
        assert r.status_code == 201, r.text
        return r.json()["spec"]["priority"], r.json()["spec"].get("priorityClassName")

    def in_process(name: str) -> tuple[int, str | None]:
        p = minik3s_cluster.call(local.create(PODS, pod(name), ns))
        return p["spec"]["priority"], p["spec"].get("priorityClassName")

    assert over_http("h0") == (0, None)
    assert in_process("l0") == (0, None)

    # created over HTTP
    r = http.post(PCS, json=pclass("e2e-default", 1000, default=True))
    assert r.status_code == 201, r.text
    assert in_process("l1") == (1000, "e2e-default")
    assert over_http("h1") == (1000, "e2e-default")

    # changed over HTTP: no longer the default
    r = http.patch(f"{PCS}/e2e-default", json={"globalDefault": False},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    assert over_http("h2") == (0, None)
    assert in_process("l2") == (0, None)

    # created in process, seen over HTTP; deleted in process, gone for both
    minik3s_cluster.call(local.create(PRIORITYCLASSES, pclass("e2e-local", 77, default=True)))
    assert over_http("h3") == (77, "e2e-local")
    assert in_process("l3") == (77, "e2e-local")
    minik3s_cluster.call(local.delete(PRIORITYCLASSES, "e2e-local"))
    assert over_http("h4") == (0, None)

    # deleted over HTTP after becoming the default again
    r = http.patch(f"{PCS}/e2e-default", json={"globalDefault": True},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    assert in_process("l4") == (1000, "e2e-default")
    assert http.delete(f"{PCS}/e2e-default").status_code == 200
    assert in_process("l5") == (0, None)
    assert over_http("h5") == (0, None)
