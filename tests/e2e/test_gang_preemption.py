"""Gang-aware preemption end to end (KEP-5710's direction): a real server, simulated kubelets that
honour the victims' grace period, the PriorityClasses of examples/preemption.yaml.

A high-priority gang preempts lower-priority pods only when the whole gang fits after the
evictions: then exactly the victims the gang needs are evicted and all members bind together; a
gang that cannot fit even after evicting everything of lower priority evicts nothing. Every pod
of the namespace is watched for the whole test over a real watch stream, so "never a
deletionTimestamp" and "never a partial gang" are checked on every event, not sampled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from minik3s.testing.wait import wait_for
from tests.e2e.test_gang import PodWatch, gang_pod, group_objects

ROOT = Path(__file__).resolve().parents[2]


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}


def filler(name: str, target: str, pc: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": target, "terminationGracePeriodSeconds": 2,
                            "containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": "1"}}}]}
    if pc:
        spec["priorityClassName"] = pc
    return {"metadata": {"name": name, "annotations": {"sim.minik3s.io/shutdown-seconds": "100"}}, "spec": spec}


def member(api: str, group: str, name: str) -> dict[str, Any]:
    p = gang_pod(api, group, name)
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    p["spec"]["priorityClassName"] = "high-priority"
    return p


class Cluster:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = self.http.post(path, json=body)
        assert r.status_code == 201, r.text
        return dict(r.json())

    def get(self, name: str) -> dict[str, Any] | None:
        r = self.http.get(f"/api/v1/namespaces/default/pods/{name}")
        return dict(r.json()) if r.status_code == 200 else None

    def running(self, name: str) -> bool:
        return ((self.get(name) or {}).get("status") or {}).get("phase") == "Running"

    def node_of(self, name: str) -> str:
        return str(((self.get(name) or {}).get("spec") or {}).get("nodeName") or "")

    def events(self, name: str, reason: str) -> list[str]:
        items = self.http.get("/api/v1/namespaces/default/events",
                              params={"fieldSelector": f"involvedObject.name={name},reason={reason}"}).json()["items"]
        return [e["message"] for e in items]

    def gang(self, api: str, group: str, n: int) -> list[str]:
        for path, body in group_objects(api, group, n):
            g, v, plural = path.split("/")
            self.post(f"/apis/{g}/{v}/namespaces/default/{plural}", body)
        names = [f"{group}-{i}" for i in range(n)]
        for name in names:
            self.post("/api/v1/namespaces/default/pods", member(api, group, name))
        return names


@pytest.fixture
def cluster_factory(minik3s_server_factory: Any, tmp_path: Path) -> Iterator[Callable[[int], Cluster]]:
    clients: list[httpx.Client] = []

    def make(nodes: int) -> Cluster:
        fleet = tmp_path / "fleet.yaml"
        fleet.write_text(yaml.safe_dump_all([node(f"n{i + 1}") for i in range(nodes)]))
        srv = minik3s_server_factory("--disable", "controllers", "--disable", "descheduler", nodes=str(fleet),
                                     start=False)
        srv.log_level = "INFO"  # the scheduler's preemption decisions in server.log for post-mortems
        srv.start()
        http = httpx.Client(base_url=srv.url, timeout=30)
        clients.append(http)
        c = Cluster(http)
        wait_for(lambda: len(http.get("/api/v1/nodes").json()["items"]) == nodes)
        for doc in yaml.safe_load_all((ROOT / "examples" / "preemption.yaml").read_text()):
            c.post("/apis/scheduling.k8s.io/v1/priorityclasses", doc)
        c.post("/apis/scheduling.volcano.sh/v1beta1/queues",
               {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                "metadata": {"name": "gpu-queue"}, "spec": {"weight": 1}})
        return c

    yield make
    for h in clients:
        h.close()


def deleted_ever(watch: PodWatch, names: list[str]) -> list[str]:
    """Pods the watch ever saw with a deletionTimestamp (or deleted)."""
    out = {obj["metadata"]["name"] for _t, typ, obj in watch.events
           if obj["metadata"]["name"] in names and (typ == "DELETED" or obj["metadata"].get("deletionTimestamp"))}
    return sorted(out)


@pytest.mark.parametrize("api", ["x-k8s", "volcano", "workload"])
def test_high_priority_gang_evicts_exactly_enough_and_binds_together(cluster_factory: Any, api: str) -> None:
    # five 2-cpu nodes, each full with two 1-cpu low-priority pods; n5's pods are of priority
    # 100 (low-priority), the others of 0, so the gang of four 2-cpu pods must take n1..n4 and
    # evict exactly their eight pods, never n5's
    c = cluster_factory(5)
    watch = PodWatch(str(c.http.base_url), "default")
    try:
        fillers = {f"low-{i}-{j}": f"n{i}" for i in range(1, 6) for j in (1, 2)}
        for name, target in fillers.items():
            c.post("/api/v1/namespaces/default/pods", filler(name, target, "low-priority" if target == "n5" else None))
        for name in fillers:
            wait_for(lambda n=name: c.running(n), timeout=30)
        names = c.gang(api, "train", 4)
        bound = wait_for(lambda: [c.node_of(n) for n in names] if all(c.node_of(n) for n in names) else None,
                         timeout=60, interval=0.1)
        assert sorted(bound) == ["n1", "n2", "n3", "n4"]
        expected = sorted(n for n, t in fillers.items() if t != "n5")
        assert deleted_ever(watch, list(fillers)) == expected
        for n in expected:
            assert c.get(n) is None  # gone after their grace period
        assert c.node_of("low-5-1") == "n5" and c.node_of("low-5-2") == "n5"
        # all four bound together: the first binding came only after the last victim was gone
        first_bind = min(t for n in names if (t := watch.bound_at(n)) is not None)
        last_gone = max(t for t, typ, obj in watch.events if typ == "DELETED" and obj["metadata"]["name"] in expected)
        assert first_bind >= last_gone
        # every victim got its Preempted event, no other pod got one. (Under heavy load one victim
        # was seen with a second event from a repeated preemption pass while it terminated: the
        # victims and bindings stay exact, the duplicate event is a known issue, see the README.)
        preempted = {n: c.events(n, "Preempted") for n in fillers}
        assert sorted(n for n, msgs in preempted.items() if msgs) == expected
        assert all(m.startswith("Preempted by pod ") for msgs in preempted.values() for m in msgs)
    finally:
        watch.stop()


@pytest.mark.parametrize("api", ["x-k8s", "workload"])
def test_gang_that_cannot_fit_even_after_preemption_evicts_nothing(cluster_factory: Any, api: str) -> None:
    # four nodes: n1..n3 full of priority-0 pods, n4 held by a pod of a class above the gang's,
    # so at most 3 of the 4 members could ever fit: not one victim may be touched
    c = cluster_factory(4)
    c.post("/apis/scheduling.k8s.io/v1/priorityclasses",
           {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "critical"}, "value": 2000000})
    watch = PodWatch(str(c.http.base_url), "default")
    try:
        fillers = {f"low-{i}-{j}": f"n{i}" for i in range(1, 4) for j in (1, 2)}
        for name, target in fillers.items():
            c.post("/api/v1/namespaces/default/pods", filler(name, target, None))
        c.post("/api/v1/namespaces/default/pods", filler("vip-1", "n4", "critical"))
        c.post("/api/v1/namespaces/default/pods", filler("vip-2", "n4", "critical"))
        for name in [*fillers, "vip-1", "vip-2"]:
            wait_for(lambda n=name: c.running(n), timeout=30)
        names = c.gang(api, "train", 4)

        def refused() -> list[str]:
            return [m for n in names for m in c.events(n, "FailedScheduling")
                    if "cannot be placed even after preemption" in m]

        msgs = wait_for(lambda: refused() if len(refused()) >= 2 else None, timeout=60, interval=0.2)
        assert "3 of the 4 members it still needs would fit" in msgs[0]
        assert deleted_ever(watch, [*fillers, "vip-1", "vip-2"]) == []
        assert [n for n in names if watch.bound_at(n) is not None] == []
        for name in fillers:
            p = c.get(name)
            assert p is not None and not p["metadata"].get("deletionTimestamp")
            assert not any(x["type"] == "DisruptionTarget" for x in p["status"].get("conditions") or [])
        assert [n for n in names if ((c.get(n) or {}).get("status") or {}).get("nominatedNodeName")] == []
    finally:
        watch.stop()
