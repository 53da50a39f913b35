"""The embedding API `minik3s.Cluster` (minik3s/embed.py): a whole cluster in the caller's loop or
on its own loop in a thread, handed over with every node Ready, simulated time that moves node
heartbeats and the node lifecycle controller, and a clean stop (no tasks, threads, files, ports).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path

import httpx
import pytest
import yaml

import minik3s
from minik3s.api.resources import NODES, PODS
from minik3s.embed import Cluster, ClusterError, node_ready
from minik3s.testing.wait import wait_for


def pod(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}


def port_open(url: str) -> bool:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, int(port))) == 0


def ready_condition(node: dict[str, object]) -> str:
    conds = (node.get("status") or {}).get("conditions") or []  # type: ignore[attr-defined]
    return next(c["status"] for c in conds if c["type"] == "Ready")


async def test_async_cluster_runs_pods_and_stops_clean() -> None:
    assert minik3s.Cluster is Cluster
    before = set(asyncio.all_tasks())
    async with minik3s.Cluster(nodes=3) as cluster:
        nodes = (await cluster.client.list(NODES))["items"]
        assert sorted(n["metadata"]["name"] for n in nodes) == ["node-1", "node-2", "node-3"]
        assert all(node_ready(n) for n in nodes)
        kc = yaml.safe_load(cluster.kubeconfig_path.read_text())
        assert kc["clusters"][0]["cluster"]["server"] == cluster.url
        await cluster.client.create(PODS, pod("web"), "default")
        running = await cluster.wait_for(PODS, "web", lambda o: (o.get("status") or {}).get("phase") == "Running",
                                         namespace="default")
        assert running["spec"]["nodeName"] in cluster.node_names
        data_dir, url = cluster.data_dir, cluster.url
    assert data_dir is not None and not data_dir.exists()
    assert not port_open(url)
    assert set(asyncio.all_tasks()) <= before | {asyncio.current_task()}
    with pytest.raises(ClusterError, match="not running"):
        _ = cluster.url


async def test_wait_for_times_out_naming_the_object() -> None:
    async with Cluster(nodes=1) as cluster:
        with pytest.raises(TimeoutError, match="pods default/nope: condition not met after 0.2s \\(not found\\)"):
            await cluster.wait_for(PODS, "nope", lambda o: True, 0.2, namespace="default")


async def test_simulated_time_drives_node_failure_and_recovery() -> None:
    async with Cluster(nodes=2, simulated_time=True, node_monitor_grace_period=20) as cluster:
        await cluster.fail_node("node-1")
        await cluster.advance_time(10)
        assert ready_condition(await cluster.client.get(NODES, "node-1")) == "True"  # inside the grace period
        await cluster.advance_time(30)
        await cluster.wait_for(NODES, "node-1", lambda n: ready_condition(n) == "Unknown", 5)
        assert ready_condition(await cluster.client.get(NODES, "node-2")) == "True"  # it kept heartbeating
        recovered = await cluster.recover_node("node-1")
        assert node_ready(recovered)


async def test_node_monitor_period_sets_how_often_node_health_is_checked() -> None:
    # kube-controller-manager's --node-monitor-period: a node past its grace period is only
    # marked at the next check (the default 5 s period marks it within 40 s, as above)
    async with Cluster(nodes=2, simulated_time=True, node_monitor_grace_period=20,
                       node_monitor_period=60) as cluster:
        await cluster.fail_node("node-1")
        await cluster.advance_time(40)
        assert ready_condition(await cluster.client.get(NODES, "node-1")) == "True"  # no check since the start
        # checks at 60 s (which may still see the node's last renewal as new, restarting its grace
        # period, as upstream's probe timestamp) and at 120 s
        await cluster.advance_time(90)
        await cluster.wait_for(NODES, "node-1", lambda n: ready_condition(n) == "Unknown", 5)


async def test_real_clock_refuses_advance_and_unknown_nodes() -> None:
    async with Cluster(nodes=1) as cluster:
        with pytest.raises(ClusterError, match="simulated_time=True"):
            await cluster.advance_time(5)
        with pytest.raises(ClusterError, match="'node-9' is not a simulated node"):
            await cluster.fail_node("node-9")
        with pytest.raises(ClusterError, match="call\\(\\) is for a cluster started with `with Cluster"):
            cluster.call(asyncio.sleep(0))


def test_sync_twin_in_a_thread_and_no_leaks(tmp_path: Path) -> None:
    threads = {t.ident for t in threading.enumerate()}
    with Cluster(nodes=2, data_dir=tmp_path / "store") as cluster:
        r = httpx.get(cluster.url + "/api/v1/nodes")
        assert [node_ready(n) for n in r.json()["items"]] == [True, True]
        cluster.call(cluster.client.create(PODS, pod("p"), "default"))
        cluster.call(cluster.wait_for(PODS, "p", lambda o: bool(o["spec"].get("nodeName")), namespace="default"))
        url = cluster.url
    # every thread the cluster started ends with it (a thread winding down after its join
    # returned is waited for briefly; one still alive then is a leak, named in the failure)
    def leaked() -> list[str]:
        return [f"{t.name} (daemon={t.daemon})" for t in threading.enumerate() if t.ident not in threads]

    try:
        wait_for(lambda: not leaked(), timeout=10)
    except AssertionError:
        pytest.fail(f"threads left behind: {leaked()}")
    assert not port_open(url)
    # an explicit data_dir is kept, and a new cluster on it sees the stored pod
    assert (tmp_path / "store" / "state.db").is_file()
    with Cluster(nodes=2, data_dir=tmp_path / "store") as again:
        assert again.call(again.client.get(PODS, "p", "default"))["metadata"]["name"] == "p"


def test_bad_options_fail_before_starting(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="unknown component\\(s\\) to disable: kubelets"):
        Cluster(disable=["kubelets"])
    with pytest.raises(ClusterError, match="nodes must be >= 0"), Cluster(nodes=-1):
        pass
    bad = tmp_path / "sched.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles: [{schedulerName: 5}]\n")
    with pytest.raises(Exception, match="schedulerName"), Cluster(nodes=1, scheduler_config=bad):
        pass
    assert not [t for t in threading.enumerate() if t.name == "minik3s-cluster"]
