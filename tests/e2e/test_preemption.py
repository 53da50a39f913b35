"""Preemption and RuntimeClass overhead end to end: a real server, simulated kubelets (which honour
the victims' grace period), the embedded scheduler, the PriorityClasses of
examples/preemption.yaml and the RuntimeClass of examples/runtimeclass.yaml."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from minik3s.testing.builders import make_pod
from minik3s.testing.wait import wait_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
KUBECTL = ROOT / ".cache" / "kubectl" / "kubectl"
NO_CONTROLLERS = ("--disable", "controllers")


def node(
    name: str, cpu: str, *, labels: dict[str, str] | None = None, taints: list[dict] | None = None
) -> dict:
    n: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {
            "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
        },
    }
    if taints:
        n["spec"] = {"taints": taints}
    return n


def pod(
    name: str,
    cpu: str,
    pc: str | None = None,
    *,
    grace: int | None = None,
    shutdown: int | None = None,
    **spec: Any,
) -> dict:
    obj = make_pod(name).req(cpu=cpu).obj()
    obj["metadata"].pop("uid")
    obj["metadata"].pop("creationTimestamp")
    obj.pop("status")
    if pc:
        obj["spec"]["priorityClassName"] = pc
    if grace is not None:
        obj["spec"]["terminationGracePeriodSeconds"] = grace
    if shutdown is not None:
        obj["metadata"]["annotations"] = {"sim.minik3s.io/shutdown-seconds": str(shutdown)}
    obj["spec"].update(spec)
    return obj


class Cluster:
    def __init__(self, srv: Any) -> None:
        self.srv = srv
        self.http = httpx.Client(base_url=srv.url, timeout=30)

    def kubectl(self, tmp: Path, *args: str) -> str:
        r = subprocess.run(
            [str(KUBECTL), "--kubeconfig", str(self.srv.kubeconfig), "--cache-dir", str(tmp / "kc"), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, f"kubectl {' '.join(args)}: {r.stderr}"
        return r.stdout

    def apply_example(self, name: str) -> None:
        for doc in yaml.safe_load_all((EXAMPLES / name).read_text()):
            group_version = doc["apiVersion"]
            plural = {"PriorityClass": "priorityclasses", "RuntimeClass": "runtimeclasses"}[doc["kind"]]
            r = self.http.post(f"/apis/{group_version}/{plural}", json=doc)
            assert r.status_code == 201, r.text

    def create(self, obj: dict) -> dict:
        r = self.http.post("/api/v1/namespaces/default/pods", json=obj)
        assert r.status_code == 201, r.text
        return r.json()

    def get(self, name: str) -> dict | None:
        r = self.http.get(f"/api/v1/namespaces/default/pods/{name}")
        return r.json() if r.status_code == 200 else None

    def node_of(self, name: str) -> str | None:
        return ((self.get(name) or {}).get("spec") or {}).get("nodeName")

    def events(self, name: str, reason: str) -> list[dict]:
        return self.http.get(
            "/api/v1/namespaces/default/events",
            params={"fieldSelector": f"involvedObject.name={name},reason={reason}"},
        ).json()["items"]

    def running(self, name: str) -> bool:
        return ((self.get(name) or {}).get("status") or {}).get("phase") == "Running"


@pytest.fixture
def cluster_factory(minik3s_server_factory, tmp_path):
    made: list[Cluster] = []

    def make(nodes: list[dict]) -> Cluster:
        p = tmp_path / "fleet.yaml"
        p.write_text(yaml.safe_dump_all(nodes))
        srv = minik3s_server_factory(*NO_CONTROLLERS, nodes=str(p))
        c = Cluster(srv)
        wait_for(lambda: len(c.http.get("/api/v1/nodes").json()["items"]) == len(nodes))
        made.append(c)
        return c

    yield make
    for c in made:
        c.http.close()


def test_high_priority_pod_preempts_the_lowest_priority_pods(cluster_factory):
    c = cluster_factory([node("n1", "4"), node("n2", "4")])
    c.apply_example("preemption.yaml")
    # fill the cluster: n1 holds two pods of priority 0 (no class), n2 two of low-priority (100); a
    # 3-cpu preemptor must evict both pods of one node, and the node with the lower victims wins
    for name, target in (("low-1", "n1"), ("low-2", "n1"), ("mid-1", "n2"), ("mid-2", "n2")):
        pc = "low-priority" if name.startswith("mid") else None
        c.create(pod(name, "2", pc, grace=3, shutdown=100, nodeName=target))
    for name in ("low-1", "low-2", "mid-1", "mid-2"):
        wait_for(lambda n=name: c.running(n))
    high = c.create(pod("urgent", "3", "high-priority"))
    assert high["spec"]["priority"] == 1000000 and high["spec"]["preemptionPolicy"] == "PreemptLowerPriority"

    # both priority-0 pods on n1 are the victims: Terminating for their 3 s grace period
    def terminating() -> list[dict] | None:
        pods = [c.get(n) for n in ("low-1", "low-2")]
        return pods if all(p and p["metadata"].get("deletionTimestamp") for p in pods) else None  # type: ignore[return-value]

    victims = wait_for(terminating, timeout=30, interval=0.05)
    for v in victims:
        assert v["metadata"]["deletionGracePeriodSeconds"] == 3
        cond = next(x for x in v["status"]["conditions"] if x["type"] == "DisruptionTarget")
        assert (cond["status"], cond["reason"], cond["message"]) == (
            "True",
            "PreemptionByScheduler",
            "default-scheduler: preempting to accommodate a higher priority pod",
        )
        assert cond["lastTransitionTime"]
        # the condition was merged in by type: the kubelet's conditions are still there
        assert {"PodScheduled", "Ready", "DisruptionTarget"} <= {x["type"] for x in v["status"]["conditions"]}
    for name in ("low-1", "low-2"):
        ev = wait_for(lambda n=name: c.events(n, "Preempted"), timeout=30)
        assert ev[0]["message"] == f"Preempted by pod {high['metadata']['uid']} on node n1"
        assert ev[0]["type"] == "Normal"
    nominated = wait_for(
        lambda: (c.get("urgent") or {}).get("status", {}).get("nominatedNodeName"), timeout=30
    )
    assert nominated == "n1"
    # /metrics: one preemption carried out, with its two victims (upstream's histogram)
    metrics = c.http.get("/metrics").text
    assert "scheduler_preemption_victims_count 1\n" in metrics  # Go's number format (expfmt)
    assert "scheduler_preemption_victims_sum 2\n" in metrics
    assert 'scheduler_preemption_victims_bucket{le="2"} 1\n' in metrics
    # while the victims terminate (they still hold n1's cpu) the preemptor is not bound; the
    # simulated kubelet kills them at the end of the grace period, then the preemptor binds
    seen_unbound_while_terminating = False

    def bound_after_victims_gone() -> str | None:
        nonlocal seen_unbound_while_terminating
        where = c.node_of("urgent")  # read first: if bound now, the victims were gone before
        alive = [n for n in ("low-1", "low-2") if c.get(n) is not None]
        if where:
            assert alive == [], f"preemptor bound while victims {alive} still terminate"
        elif alive:
            seen_unbound_while_terminating = True
        return where

    assert wait_for(bound_after_victims_gone, timeout=40, interval=0.05) == "n1"
    assert seen_unbound_while_terminating
    assert c.node_of("mid-1") == "n2" and c.node_of("mid-2") == "n2"  # higher-priority pods kept


def test_preemption_policy_never_stays_pending(cluster_factory):
    c = cluster_factory([node("n1", "2")])
    c.apply_example("preemption.yaml")
    c.create(pod("low", "2", "low-priority", nodeName="n1"))
    wait_for(lambda: c.running("low"))
    c.create(pod("polite", "1", "high-priority-nonpreempting"))
    ev = wait_for(lambda: c.events("polite", "FailedScheduling"), timeout=30)
    assert ev[0]["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    )
    cond = next(x for x in c.get("polite")["status"]["conditions"] if x["type"] == "PodScheduled")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", ev[0]["message"])
    assert not c.get("low")["metadata"].get("deletionTimestamp")


def test_runtime_class_overhead_and_scheduling(cluster_factory):
    kata = {"sandbox.example.com/kata": "true"}
    taint = [{"key": "sandbox.example.com/kata", "effect": "NoSchedule"}]
    c = cluster_factory([node("plain", "8"), node("kata-1", "2", labels=kata, taints=taint)])
    c.apply_example("runtimeclass.yaml")
    rows = c.http.get(
        "/apis/node.k8s.io/v1/runtimeclasses",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    ).json()
    assert [col["name"] for col in rows["columnDefinitions"]] == ["Name", "Handler", "Age"]
    assert rows["rows"][0]["cells"][:2] == ["kata", "kata"]
    # 1750m of containers + 250m overhead = 2 cpu: fits kata-1 exactly, on the class's node
    a = c.create(pod("sandboxed-a", "1750m", runtimeClassName="kata"))
    assert a["spec"]["overhead"] == {"cpu": "250m", "memory": "160Mi"}
    assert a["spec"]["nodeSelector"] == kata
    assert wait_for(lambda: c.node_of("sandboxed-a"), timeout=30) == "kata-1"
    # 1 m more does not fit once the overhead is counted
    c.create(pod("sandboxed-b", "1m", runtimeClassName="kata"))
    cond = wait_for(
        lambda: next(
            (
                x
                for x in (c.get("sandboxed-b") or {}).get("status", {}).get("conditions") or ()
                if x["type"] == "PodScheduled" and x.get("reason") == "Unschedulable"
            ),
            None,
        ),
        timeout=30,
    )
    assert cond["message"].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector."
    )
    r = c.http.post("/api/v1/namespaces/default/pods", json=pod("ghost", "1", runtimeClassName="gvisor"))
    assert r.status_code == 403
    assert r.json()["message"] == 'pods "ghost" is forbidden: pod rejected: RuntimeClass "gvisor" not found'


@pytest.mark.usefixtures("kubectl_bin")  # fails, not skips, without kubectl
def test_kubectl_applies_and_lists_runtime_classes(cluster_factory, tmp_path):
    c = cluster_factory([node("n1", "2")])
    assert (
        c.kubectl(tmp_path, "apply", "-f", str(EXAMPLES / "runtimeclass.yaml"))
        == "runtimeclass.node.k8s.io/kata created\n"
    )
    rows = [
        re.split(r"\s{2,}", line.strip()) for line in c.kubectl(tmp_path, "get", "runtimeclass").splitlines()
    ]
    assert rows[0] == ["NAME", "HANDLER", "AGE"] and rows[1][:2] == ["kata", "kata"]
    resources = c.kubectl(tmp_path, "api-resources", "--api-group=node.k8s.io", "--no-headers").split()
    assert resources[:4] == ["runtimeclasses", "node.k8s.io/v1", "false", "RuntimeClass"]
    explained = c.kubectl(tmp_path, "explain", "runtimeclass.scheduling")  # served in the OpenAPI document
    assert "nodeSelector" in explained and "tolerations" in explained


def test_official_client_reads_runtime_class_and_pod_overhead(cluster_factory):
    kubernetes = pytest.importorskip("kubernetes")
    c = cluster_factory([node("n1", "2")])
    api = kubernetes.config.new_client_from_config(config_file=str(c.srv.kubeconfig))
    try:
        nodev1 = kubernetes.client.NodeV1Api(api)
        body = kubernetes.client.V1RuntimeClass(
            metadata=kubernetes.client.V1ObjectMeta(name="gvisor"),
            handler="runsc",
            overhead=kubernetes.client.V1Overhead(pod_fixed={"cpu": "100m"}),
        )
        created = nodev1.create_runtime_class(body)
        assert created.handler == "runsc" and created.overhead.pod_fixed == {"cpu": "100m"}
        assert [rc.metadata.name for rc in nodev1.list_runtime_class().items] == ["gvisor"]
        with pytest.raises(kubernetes.client.ApiException) as ei:
            nodev1.patch_runtime_class("gvisor", {"handler": "runc"})
        status = json.loads(ei.value.body)
        assert ei.value.status == 422 and status["reason"] == "Invalid"
        assert status["message"] == (
            'RuntimeClass.node.k8s.io "gvisor" is invalid: handler: Invalid value: "runc": field is immutable'
        )
        assert status["details"]["causes"] == [
            {
                "reason": "FieldValueInvalid",
                "field": "handler",
                "message": 'Invalid value: "runc": field is immutable',
            }
        ]
        core = kubernetes.client.CoreV1Api(api)
        p = core.create_namespaced_pod("default", pod("sandboxed", "100m", runtimeClassName="gvisor"))
        assert p.spec.overhead == {"cpu": "100m"} and p.spec.runtime_class_name == "gvisor"
    finally:
        api.close()
