"""The real kubectl 1.33 binary, unchanged, against a real minik3s server.

Every test runs `kubectl --kubeconfig <server's> --cache-dir <fresh dir> ...` as a subprocess and
asserts what a user sees: stdout lines, table columns, exit codes and the exact error messages
kube-apiserver produces (`Error from server (NotFound): pods "nope" not found`, ...). A few tests
also check, over plain HTTP, the wire details kubectl relies on (Retry-After, DeleteOptions in
every encoding, field-selector grammar, watch lifetime, list order).

Two servers: `minik3s_api` (API only: fast, deterministic, pods stay Pending) for most commands,
and `minik3s_cluster` (scheduler, controllers, 6 simulated kubelets) for what needs running pods:
describe with events, drain, PDB-blocked eviction, graceful deletion, pod GC of orphans.

kubectl comes from the `kubectl_bin` fixture (tests/e2e/conftest.py: `scripts/fetch-kubectl`,
cached at .cache/kubectl/kubectl); without it every test here fails with the reason, unless
MINIK3S_SKIP_KUBECTL_TESTS=1 is set.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml

from minik3s.testing.server import ServerProcess

pytestmark = pytest.mark.usefixtures("kubectl_bin")


# ---------------------------------------------------------------------------------------------- helpers
@dataclass
class Kubectl:
    """`kubectl` bound to one server's kubeconfig and a private discovery cache."""

    binary: Path
    srv: ServerProcess
    cache_dir: Path
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = httpx.Client(base_url=self.srv.url, timeout=30)

    def argv(self, *args: str) -> list[str]:
        return [str(self.binary), "--kubeconfig", str(self.srv.kubeconfig), "--cache-dir", str(self.cache_dir), *args]

    def __call__(self, *args: str, ok: bool = True, timeout: float = 30,
                 stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=timeout, input=stdin)
        if ok:
            assert r.returncode == 0, f"kubectl {' '.join(args)} -> rc {r.returncode}\n{r.stdout}\n{r.stderr}"
        else:
            assert r.returncode != 0, f"kubectl {' '.join(args)} unexpectedly succeeded:\n{r.stdout}"
        return r

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def apply_text(self, *args: str, manifest: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        return self(*args, "-f", "-", ok=ok, stdin=manifest)

    def namespace(self) -> str:
        name = "k-" + uuid.uuid4().hex[:8]
        r = self.http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
        assert r.status_code == 201, r.text
        return name

    def close(self) -> None:
        self.http.close()


def table(out: str) -> list[list[str]]:
    """kubectl's column output -> rows of cells (columns are separated by 2+ spaces)."""
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip()]


def eventually(pred: Callable[[], Any], *, timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    pause = 0.01
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last={last!r})")


def pod_manifest(name: str, *, labels: dict[str, str] | None = None, node: str | None = None,
                 namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels or {"app": name}}
    if namespace:
        meta["namespace"] = namespace
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx:1.25",
                                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}
    if node:
        spec["nodeName"] = node
    spec.update(extra)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def deployment_manifest(name: str, *, replicas: int = 2, containers: list[dict[str, Any]] | None = None
                        ) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": containers or [
                                  {"name": "c", "image": "nginx:1.25",
                                   "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}},
    }


def dump(*docs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(list(docs), sort_keys=False)


def node_manifest(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


# ---------------------------------------------------------------------------------------------- fixtures
@pytest.fixture
def kubectl(kubectl_bin: Path, minik3s_api: ServerProcess, tmp_path: Path) -> Iterator[Kubectl]:
    k = Kubectl(kubectl_bin, minik3s_api, tmp_path / "kcache")
    yield k
    k.close()


@pytest.fixture(scope="module")
def populated(kubectl_bin: Path, minik3s_api: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kubectl, str]]:
    """A namespace holding pods c, a, b (created in that order) with app/tier labels."""
    k = Kubectl(kubectl_bin, minik3s_api, tmp_path_factory.mktemp("kcache"))
    ns = k.namespace()
    pods = [pod_manifest("c", labels={"app": "web", "tier": "front"}, namespace=ns),
            pod_manifest("a", labels={"app": "web", "tier": "back"}, namespace=ns),
            pod_manifest("b", labels={"app": "db"}, namespace=ns)]
    out = k("create", "-f", "-", stdin=dump(*pods)).stdout
    assert out.splitlines() == ["pod/c created", "pod/a created", "pod/b created"]
    yield k, ns
    k.close()


@pytest.fixture(scope="module")
def api_resources(kubectl_bin: Path, minik3s_api: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    k = Kubectl(kubectl_bin, minik3s_api, tmp_path_factory.mktemp("kcache"))
    try:
        r = k("api-resources")
    finally:
        k.close()
    rows = table(r.stdout)
    assert rows[0] == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    out: dict[str, list[str]] = {}
    for row in rows[1:]:
        # rows without short names have 4 cells
        key = f"{row[0]}.{row[-3]}"
        out[key] = row
    return out


# ============================================================================= full cluster
# First in the file, so the pod-GC story the `cluster` fixture starts in the background overlaps
# with everything else; its test is the last one in the file.
@dataclass
class ClusterCtx:
    k: Kubectl
    ghost: subprocess.Popen[str] | None = None
    ghost_started: float = 0.0
    ghost_ns: str = ""


@pytest.fixture(scope="module")
def cluster(kubectl_bin: Path, minik3s_cluster: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterCtx]:
    """kubectl against the full cluster. Also starts, in the background, the slow pod-GC story
    (`test_delete_of_pod_on_nonexistent_node_finishes_via_pod_gc`), so its ~40-60 s quarantine
    overlaps with the other cluster tests instead of adding to the file's run time."""
    k = Kubectl(kubectl_bin, minik3s_cluster, tmp_path_factory.mktemp("kcache"))
    eventually(lambda: len(k.http.get("/api/v1/nodes").json()["items"]) == 6, timeout=60, what="6 nodes")
    ctx = ClusterCtx(k)
    ctx.ghost_ns = k.namespace()
    r = k.http.post(f"/api/v1/namespaces/{ctx.ghost_ns}/pods", json=pod_manifest("orphan", node="ghost-node"))
    assert r.status_code == 201, r.text
    ctx.ghost_started = time.monotonic()
    ctx.ghost = k.popen("delete", "pod", "orphan", "-n", ctx.ghost_ns, "--grace-period=5")
    yield ctx
    if ctx.ghost is not None and ctx.ghost.poll() is None:
        ctx.ghost.kill()
        ctx.ghost.wait()
    k.close()


def _running_pods(k: Kubectl, ns: str, selector: str) -> list[dict[str, Any]]:
    items = k.http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": selector}).json()["items"]
    return [p for p in items if (p.get("status") or {}).get("phase") == "Running"
            and not p["metadata"].get("deletionTimestamp")
            and any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (p.get("status") or {}).get("conditions") or [])]


def test_describe_pod_and_node_show_events(cluster):
    k = cluster.k
    ns = k.namespace()
    k.apply_text("create", "-n", ns, manifest=dump(pod_manifest("described")))
    eventually(lambda: _running_pods(k, ns, "app=described"), what="pod running")
    out = eventually(lambda: (o := k("describe", "pod", "described", "-n", ns).stdout) and
                     "Successfully assigned" in o and o, what="Scheduled event in describe")
    node = json.loads(k("get", "pod", "described", "-n", ns, "-o", "json").stdout)["spec"]["nodeName"]
    assert re.search(r"^Name:\s+described$", out, re.M) and re.search(rf"^Node:\s+{node}/", out, re.M)
    assert re.search(r"^Status:\s+Running$", out, re.M)
    assert re.search(rf"Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned {ns}/described to "
                     rf"{node}", out), out
    # a node event (no involvedObject.namespace, so it lives in "default")
    uid = k.http.get(f"/api/v1/nodes/{node}").json()["metadata"]["uid"]
    ev = {"metadata": {"name": f"{node}.{ns}"}, "involvedObject": {"kind": "Node", "name": node, "uid": uid},
          "reason": "E2EProbe", "message": "hello from the e2e suite", "type": "Normal",
          "source": {"component": "e2e"}, "count": 1,
          "firstTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
          "lastTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    assert k.http.post("/api/v1/namespaces/default/events", json=ev).status_code == 201
    out = k("describe", "node", node).stdout
    assert re.search(rf"^Name:\s+{node}$", out, re.M)
    assert re.search(r"^Lease:\n\s+HolderIdentity:\s+" + node, out, re.M)
    assert re.search(rf"^\s+{ns}\s+described\s+10m \(0%\)", out, re.M), out
    assert re.search(r"Normal\s+E2EProbe\s+\S+\s+e2e\s+hello from the e2e suite", out), out


def test_componentstatuses_of_a_full_cluster_are_healthy(cluster):
    r = cluster.k("get", "componentstatuses")
    rows = sorted(ln.split() for ln in r.stdout.splitlines()[1:])
    assert rows == [["controller-manager", "Healthy", "ok"], ["etcd-0", "Healthy", "ok"], ["scheduler", "Healthy", "ok"]]


def test_events_sort_by_last_timestamp_with_the_schedulers_events_first(cluster):
    """The scheduler's events.k8s.io Events carry no lastTimestamp; kube-apiserver serves the
    zero value (null), and `kubectl get events --sort-by=.lastTimestamp` lists them first, before
    the kubelet's old-style ones, as on a real cluster."""
    k = cluster.k
    ns = k.namespace()
    k.apply_text("create", "-n", ns, manifest=dump(pod_manifest("sorted")))
    eventually(lambda: _running_pods(k, ns, "app=sorted"), what="pod running")
    items = eventually(lambda: (i := json.loads(k("get", "events", "-n", ns, "-o", "json").stdout)["items"])
                       and any(e["reason"] == "Started" for e in i) and i, what="kubelet events")
    [scheduled] = [e for e in items if e["reason"] == "Scheduled"]
    assert scheduled["lastTimestamp"] is None and scheduled["firstTimestamp"] is None and scheduled["source"] == {}
    assert scheduled["eventTime"] and scheduled["reportingInstance"].startswith("default-scheduler-")
    started = next(e for e in items if e["reason"] == "Started")
    assert started["eventTime"] is None and started["lastTimestamp"]
    out = k("get", "events", "-n", ns, "--sort-by=.lastTimestamp").stdout
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["LAST", "SEEN", "TYPE"], out
    assert "Scheduled" in lines[1] and any("Started" in ln for ln in lines[2:]), out


def test_rollout_undo_brings_back_the_first_replicaset(cluster):
    """kubectl rollout undo patches the Deployment with the old ReplicaSet's template as Go
    serialised it (metadata.creationTimestamp: null): the controller finds that ReplicaSet again
    (revision 3), as upstream does, instead of making a third one."""
    k = cluster.k
    ns = k.namespace()
    k.apply_text("create", "-n", ns, manifest=dump(deployment_manifest("undo", replicas=2)))
    k("rollout", "status", "deployment/undo", "-n", ns, "--timeout=60s", timeout=90)
    k("set", "image", "deployment/undo", "c=nginx:1.27", "-n", ns)
    k("rollout", "status", "deployment/undo", "-n", ns, "--timeout=60s", timeout=90)
    first = {rs["metadata"]["name"] for rs in json.loads(k("get", "rs", "-n", ns, "-o", "json").stdout)["items"]
             if rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"}
    k("rollout", "undo", "deployment/undo", "-n", ns)
    k("rollout", "status", "deployment/undo", "-n", ns, "--timeout=60s", timeout=90)
    items = json.loads(k("get", "rs", "-n", ns, "-o", "json").stdout)["items"]
    revisions = {rs["metadata"]["name"]: rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                 for rs in items}
    assert len(items) == 2, revisions
    [name] = first
    assert revisions[name] == "3" and next(rs for rs in items if rs["metadata"]["name"] == name)["spec"]["replicas"] == 2
    out = k("rollout", "history", "deployment/undo", "-n", ns).stdout
    assert [ln.split()[0] for ln in out.splitlines()[2:] if ln.strip()] == ["2", "3"], out


def test_debug_adds_an_ephemeral_container_that_the_kubelet_starts(cluster):
    """kubectl debug PATCHes pods/ephemeralcontainers; the simulated kubelet starts the new
    container (running, never ready) and reports it as a kubelet does."""
    k = cluster.k
    ns = k.namespace()
    k.apply_text("create", "-n", ns, manifest=dump(pod_manifest("debugged")))
    eventually(lambda: _running_pods(k, ns, "app=debugged"), what="pod running")
    k("debug", "debugged", "-n", ns, "--image=busybox", "--target=c", "-c", "dbg", "--", "sleep", "3600")

    def started() -> dict[str, Any] | None:
        pod = json.loads(k("get", "pod", "debugged", "-n", ns, "-o", "json").stdout)
        sts = pod["status"].get("ephemeralContainerStatuses") or []
        return pod if sts and "running" in sts[0]["state"] else None

    pod = eventually(started, what="ephemeral container running")
    [eph] = pod["spec"]["ephemeralContainers"]
    assert (eph["name"], eph["targetContainerName"], eph["command"]) == ("dbg", "c", ["sleep", "3600"])
    [st] = pod["status"]["ephemeralContainerStatuses"]
    assert st["name"] == "dbg" and st["ready"] is False and "started" not in st
    out = eventually(lambda: (o := k("describe", "pod", "debugged", "-n", ns).stdout) and
                     "Started container dbg" in o and o, what="Started event of the debug container")
    assert re.search(r"^Ephemeral Containers:\n\s+dbg:", out, re.M), out


def test_quota_is_filled_by_the_controller_and_enforced_at_admission(cluster):
    """`kubectl create quota`, `describe quota` (Used filled in by the resourcequota controller),
    `kubectl run` refused with kube-apiserver's "exceeded quota" 403 once it is used up, and the
    usage given back when a pod is deleted."""
    k = cluster.k
    ns = k.namespace()
    assert k("create", "quota", "q", "--hard=pods=2,requests.cpu=1", "-n", ns).stdout.strip() == \
        "resourcequota/q created"

    def described() -> list[list[str]]:
        rows = table(k("describe", "quota", "q", "-n", ns).stdout)
        return rows if ["pods", "0", "2"] in rows else []

    rows = eventually(described, what="quota status filled")
    assert rows[:2] == [["Name:", "q"], ["Namespace:", ns]]
    assert ["Resource", "Used", "Hard"] in rows and ["requests.cpu", "0", "1"] in rows
    def cpu_pod(name: str) -> str:
        m = pod_manifest(name, namespace=ns)
        m["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "300m"}}
        return dump(m)

    for name in ("p1", "p2"):
        k("create", "-f", "-", stdin=cpu_pod(name))
    r = k("create", "-f", "-", stdin=cpu_pod("p3"), ok=False)
    assert r.stderr.strip() == ('Error from server (Forbidden): error when creating "STDIN": pods "p3" is forbidden: '
                                'exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2')
    r = k("run", "p4", "--image=nginx", "-n", ns, ok=False)
    assert r.stderr.strip() == ('Error from server (Forbidden): pods "p4" is forbidden: failed quota: q: '
                                'must specify requests.cpu for: p4')
    rows = table(k("describe", "quota", "q", "-n", ns).stdout)
    assert ["pods", "2", "2"] in rows and ["requests.cpu", "600m", "1"] in rows
    get = table(k("get", "quota", "q", "-n", ns).stdout)
    assert get[0] == ["NAME", "REQUEST", "LIMIT", "AGE"] and get[1][1] == "pods: 2/2, requests.cpu: 600m/1"
    k("delete", "pod", "p1", "-n", ns, "--grace-period=0", "--force")
    eventually(lambda: ["pods", "1", "2"] in table(k("describe", "quota", "q", "-n", ns).stdout),
               what="usage given back")
    k("create", "-f", "-", stdin=cpu_pod("p5"))


def test_job_of_a_played_command_completes_and_logs_its_output(cluster):
    """`kubectl create job ... -- echo` completes (the simulated kubelet plays echo/sleep/exit
    commands), `kubectl logs` prints what the command printed, and a pod whose command exits
    non-zero under restartPolicy Never shows as Error."""
    k = cluster.k
    ns = k.namespace()
    k("create", "job", "hello", "--image=busybox", "-n", ns, "--", "sh", "-c", "echo hello world; sleep 1; echo bye")
    k("wait", "--for=condition=complete", "job/hello", "-n", ns, "--timeout=60s", timeout=70)
    assert k("logs", "job/hello", "-n", ns).stdout == "hello world\nbye\n"
    k("run", "oops", "--image=busybox", "--restart=Never", "-n", ns, "--", "sh", "-c", "exit 2")

    def status() -> str:
        rows = table(k("get", "pod", "oops", "-n", ns).stdout)
        return rows[1][2] if rows[1][2] == "Error" else ""

    eventually(status, what="pod oops Error")
    pod = k.http.get(f"/api/v1/namespaces/{ns}/pods/oops").json()
    assert pod["status"]["phase"] == "Failed"
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 2


def test_a_container_that_keeps_exiting_goes_into_crash_loop_back_off(cluster):
    """`kubectl run` of a command that exits (restartPolicy Always): restarted at once, then the
    kubelet's back-off; `get` shows CrashLoopBackOff with the restarts and when the last one
    ended, `logs` and `logs --previous` the last run's output, `describe` the BackOff Event."""
    k = cluster.k
    ns = k.namespace()
    k("run", "crash", "--image=busybox", "-n", ns, "--", "sh", "-c", "echo boom; exit 1")

    def row() -> list[str] | None:
        rows = table(k("get", "pod", "crash", "-n", ns).stdout)
        return rows[1] if rows[1][2] == "CrashLoopBackOff" else None

    got = eventually(row, what="pod crash in CrashLoopBackOff")
    assert got[1] == "0/1"
    assert re.fullmatch(r"1 \(\d+s ago\)", got[3]), got
    assert k("logs", "crash", "-n", ns).stdout == "boom\n"
    assert k("logs", "crash", "-n", ns, "--previous").stdout == "boom\n"
    pod = k.http.get(f"/api/v1/namespaces/{ns}/pods/crash").json()
    uid = pod["metadata"]["uid"]
    assert pod["status"]["phase"] == "Running"
    out = k("describe", "pod", "crash", "-n", ns).stdout
    assert re.search(r"State:\s+Waiting\n\s+Reason:\s+CrashLoopBackOff\n", out), out
    assert re.search(r"Last State:\s+Terminated\n\s+Reason:\s+Error\n\s+Exit Code:\s+1\n", out), out
    assert f"Back-off restarting failed container crash in pod crash_{ns}({uid})" in out


def test_busybox_without_a_command_exits_at_once_as_on_a_real_node(cluster):
    """`kubectl run bb --image=busybox`: its CMD `sh` reads an empty stdin and exits 0, so the pod
    crash-loops (Completed, then CrashLoopBackOff); with `--restart=Never` it completes; with
    `-i` (stdin open) the shell waits and the pod runs."""
    k = cluster.k
    ns = k.namespace()
    k("run", "bb", "--image=busybox", "-n", ns)
    k("run", "once", "--image=busybox", "--restart=Never", "-n", ns)
    k.http.post(f"/api/v1/namespaces/{ns}/pods", json={
        "metadata": {"name": "waits"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "stdin": True}]}}).raise_for_status()

    def crash_looping() -> list[str] | None:
        rows = table(k("get", "pod", "bb", "-n", ns).stdout)
        return rows[1] if rows[1][2] == "CrashLoopBackOff" else None

    got = eventually(crash_looping, what="pod bb in CrashLoopBackOff")
    assert re.fullmatch(r"1 \(\d+s ago\)", got[3]), got
    out = k("describe", "pod", "bb", "-n", ns).stdout
    assert re.search(r"Last State:\s+Terminated\n\s+Reason:\s+Completed\n\s+Exit Code:\s+0\n", out), out
    eventually(lambda: k.http.get(f"/api/v1/namespaces/{ns}/pods/once").json()["status"].get("phase") == "Succeeded",
               what="pod once Succeeded")
    waits = eventually(lambda: (p := k.http.get(f"/api/v1/namespaces/{ns}/pods/waits").json())["status"].get(
        "phase") == "Running" and p, what="pod waits Running")
    assert waits["status"]["containerStatuses"][0]["restartCount"] == 0


def test_played_init_containers_run_first_and_show_init_status(cluster):
    """An init container with a played command holds the pod at Init:0/1 until its command ends,
    then the app starts; `kubectl logs -c` prints what the init container printed."""
    k = cluster.k
    ns = k.namespace()
    manifest = yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "staged", "namespace": ns},
                               "spec": {"initContainers": [{"name": "setup", "image": "busybox",
                                                            "command": ["sh", "-c", "echo setting up; sleep 2"]}],
                                        "containers": [{"name": "app", "image": "nginx:1.25"}]}})
    k.apply_text("apply", manifest=manifest)
    seen = eventually(lambda: (lambda row: row if row[2] == "Init:0/1" else None)(
        table(k("get", "pod", "staged", "-n", ns).stdout)[1]), what="Init:0/1")
    assert seen[1] == "0/1"
    eventually(lambda: table(k("get", "pod", "staged", "-n", ns).stdout)[1][2] == "Running", what="Running")
    assert k("logs", "staged", "-c", "setup", "-n", ns).stdout == "setting up\n"
    init = k.http.get(f"/api/v1/namespaces/{ns}/pods/staged").json()["status"]["initContainerStatuses"][0]
    term = init["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (0, "Completed") and term["finishedAt"] > term["startedAt"]


def test_debug_node_creates_a_host_pod_on_that_node(cluster):
    """`kubectl debug node/<n>` POSTs its Pod as protobuf: the pod runs on that node with the
    host's namespaces and its root filesystem mounted at /host, as kubectl builds it."""
    k = cluster.k
    ns = k.namespace()
    out = k("debug", "node/node-3", "-n", ns, "--profile=general", "--image=busybox", "--", "sleep", "100").stdout
    name = re.search(r"Creating debugging pod (\S+) with container debugger on node node-3", out)
    assert name, out
    pod = k.http.get(f"/api/v1/namespaces/{ns}/pods/{name.group(1)}").json()
    spec = pod["spec"]
    assert (spec["nodeName"], spec["hostPID"], spec["hostNetwork"], spec["restartPolicy"]) == ("node-3", True, True,
                                                                                             "Never")
    root = [v["name"] for v in spec["volumes"] if v.get("hostPath", {}).get("path") == "/"]
    assert len(root) == 1
    container = spec["containers"][0]
    assert container["command"] == ["sleep", "100"]
    assert any(m["name"] == root[0] and m["mountPath"] == "/host" for m in container["volumeMounts"])
    eventually(lambda: k.http.get(f"/api/v1/namespaces/{ns}/pods/{name.group(1)}").json()["status"].get("phase")
               == "Running", what="the debug pod running")


def test_quota_example_as_the_readme_describes_it(cluster):
    """examples/quota.yaml: the LimitRange's defaults let pods without requests through the
    quota, the Job of a played command completes and logs, the quota counts it."""
    k = cluster.k
    example = Path(__file__).resolve().parents[2] / "examples" / "quota.yaml"
    k("apply", "-f", str(example))
    k("wait", "--for=condition=complete", "job/hello", "-n", "team-a", "--timeout=60s", timeout=70)
    assert k("logs", "job/hello", "-n", "team-a").stdout == "hello from a simulated container\ndone\n"

    def counted() -> list[list[str]]:
        rows = table(k("describe", "quota", "compute", "-n", "team-a").stdout)
        return rows if ["count/jobs.batch", "1", "2"] in rows and ["pods", "0", "4"] in rows else []

    eventually(counted, what="the Job counted and its finished pod given back")
    k("run", "extra", "-n", "team-a", "--image=nginx")  # LimitRange requests satisfy the quota
    pod = k.http.get("/api/v1/namespaces/team-a/pods/extra").json()
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "128Mi"}


def test_drain_evicts_and_replicaset_recreates_pods_elsewhere(cluster):
    k = cluster.k
    ns = k.namespace()
    k.apply_text("create", "-n", ns, manifest=dump(deployment_manifest("drainme", replicas=2)))
    pods = eventually(lambda: len(p := _running_pods(k, ns, "app=drainme")) == 2 and p, what="2 running pods")
    victim = pods[0]
    node = victim["spec"]["nodeName"]
    k.apply_text("create", "-n", ns, manifest=dump(pod_manifest("lonely", node=node)))
    eventually(lambda: _running_pods(k, ns, "app=lonely"), what="bare pod running")
    try:
        r = k("drain", node, "--ignore-daemonsets", "--force", "--timeout=60s", timeout=90)
        assert f"node/{node} cordoned" in r.stdout
        assert f"evicting pod {ns}/{victim['metadata']['name']}" in r.stdout
        assert f"pod/{victim['metadata']['name']} evicted" in r.stdout
        assert "pod/lonely evicted" in r.stdout
        assert r.stdout.rstrip().endswith(f"node/{node} drained")
        # other tests' bare pods may share the node: the warning lists them all, comma-separated
        prefix = "Warning: deleting Pods that declare no controller: "
        warning = next(line for line in r.stderr.splitlines() if line.startswith(prefix))
        assert f"{ns}/lonely" in warning[len(prefix):].split(", ")
        assert k.http.get(f"/api/v1/namespaces/{ns}/pods/lonely").status_code == 404
        after = eventually(lambda: len(p := _running_pods(k, ns, "app=drainme")) == 2 and p, timeout=60,
                           what="replacement pod running")
        assert all(p["spec"]["nodeName"] != node for p in after)
        assert victim["metadata"]["name"] not in {p["metadata"]["name"] for p in after}
        rows = table(k("get", "node", node).stdout)
        assert rows[1][1] == "Ready,SchedulingDisabled"
    finally:
        k("uncordon", node)


def test_pdb_blocks_eviction_with_too_many_requests(cluster, tmp_path):
    k = cluster.k
    ns = k.namespace()
    k.apply_text("create", "-n", ns, manifest=dump(deployment_manifest("guarded", replicas=2)))
    pods = eventually(lambda: len(p := _running_pods(k, ns, "app=guarded")) == 2 and p, what="2 running pods")
    assert k("create", "pdb", "guarded", "-n", ns, "--selector=app=guarded",
             "--min-available=2").stdout == "poddisruptionbudget.policy/guarded created\n"
    eventually(lambda: (s := k.http.get(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/guarded")
                        .json().get("status") or {}).get("observedGeneration") == 1 and s.get("currentHealthy") == 2,
               what="PDB status observed by the disruption controller")
    rows = table(k("get", "pdb", "guarded", "-n", ns).stdout)
    assert rows[0] == ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"]
    assert rows[1][:4] == ["guarded", "2", "N/A", "0"]
    name = pods[0]["metadata"]["name"]
    f = tmp_path / "eviction.json"
    f.write_text(json.dumps({"apiVersion": "policy/v1", "kind": "Eviction",
                             "metadata": {"name": name, "namespace": ns}}))
    path = f"/api/v1/namespaces/{ns}/pods/{name}/eviction"
    r = k("create", "--raw", path, "-f", str(f), ok=False, timeout=20)
    assert r.stderr.strip() == ("Error from server (TooManyRequests): Cannot evict pod as it would violate the "
                                "pod's disruption budget.")
    resp = k.http.post(path, content=f.read_bytes())  # no Content-Type, like `create --raw`
    assert resp.status_code == 429 and "Retry-After" not in resp.headers
    assert resp.json()["details"]["causes"] == [
        {"reason": "DisruptionBudget", "message": "The disruption budget guarded needs 2 healthy pods and has 2 currently"}]
    # with room in the budget the same request is a 201 Success and the pod goes away
    k("patch", "pdb", "guarded", "-n", ns, "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    eventually(lambda: (k.http.get(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/guarded").json()
                        .get("status") or {}).get("disruptionsAllowed") == 1, what="budget allows one")
    out = json.loads(k("create", "--raw", path, "-f", str(f), timeout=20).stdout)
    assert (out["kind"], out["status"], out["code"]) == ("Status", "Success", 201)
    k("delete", "pdb", "guarded", "-n", ns)


def test_graceful_delete_of_running_pod_completes(cluster):
    k = cluster.k
    ns = k.namespace()
    k.apply_text("create", "-n", ns, manifest=dump(pod_manifest("bye")))
    eventually(lambda: _running_pods(k, ns, "app=bye"), what="pod running")
    start = time.monotonic()
    r = k("delete", "pod", "bye", "-n", ns, "--grace-period=5", timeout=60)
    assert r.stdout == 'pod "bye" deleted\n'
    assert time.monotonic() - start < 30
    assert k.http.get(f"/api/v1/namespaces/{ns}/pods/bye").status_code == 404


# ============================================================================= API-only server
def test_version_reports_1_33_without_skew_warning(kubectl):
    r = kubectl("version")
    assert "Client Version: v1.33." in r.stdout
    assert "Server Version: v1.33.0+minik3s" in r.stdout
    assert "WARNING" not in r.stderr and "version difference" not in r.stderr


@pytest.mark.parametrize("resource,short_names,namespaced,kind", [
    pytest.param("pods.v1", "po", "true", "Pod", id="pods-are-po"),
    pytest.param("nodes.v1", "no", "false", "Node", id="nodes-are-no"),
    pytest.param("namespaces.v1", "ns", "false", "Namespace", id="namespaces-are-ns"),
    pytest.param("events.v1", "ev", "true", "Event", id="core-events-are-ev"),
    pytest.param("deployments.apps/v1", "deploy", "true", "Deployment", id="deployments-are-deploy"),
    pytest.param("replicasets.apps/v1", "rs", "true", "ReplicaSet", id="replicasets-are-rs"),
    pytest.param("priorityclasses.scheduling.k8s.io/v1", "pc", "false", "PriorityClass", id="priorityclasses-are-pc"),
    pytest.param("poddisruptionbudgets.policy/v1", "pdb", "true", "PodDisruptionBudget", id="pdbs-are-pdb"),
    pytest.param("configmaps.v1", "cm", "true", "ConfigMap", id="configmaps-are-cm"),
    pytest.param("services.v1", "svc", "true", "Service", id="services-are-svc"),
])
def test_api_resources_lists_short_names(api_resources, resource, short_names, namespaced, kind):
    row = api_resources[resource]
    assert row[1:] == [short_names, resource.split(".", 1)[1], namespaced, kind]


def test_events_k8s_io_has_no_short_name_so_ev_is_unambiguous(api_resources, kubectl):
    # upstream's events.k8s.io/v1 Event declares no short names; `ev` means core/v1 events only
    assert api_resources["events.events.k8s.io/v1"] == ["events", "events.k8s.io/v1", "true", "Event"]
    r = kubectl("get", "ev", "-n", "kube-system")
    assert "could also match" not in r.stderr


def test_pods_eviction_is_discoverable_for_drain(kubectl):
    doc = json.loads(kubectl("get", "--raw", "/api/v1").stdout)
    ev = next(r for r in doc["resources"] if r["name"] == "pods/eviction")
    assert (ev["group"], ev["version"], ev["kind"], ev["verbs"]) == ("policy", "v1", "Eviction", ["create"])


# ---------------------------------------------------------------------------------------------- get
def test_get_prints_server_side_table_sorted_by_name(populated):
    k, ns = populated
    rows = table(k("get", "pods", "-n", ns).stdout)
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [r[:4] for r in rows[1:]] == [["a", "0/1", "Pending", "0"], ["b", "0/1", "Pending", "0"],
                                         ["c", "0/1", "Pending", "0"]]
    assert all(re.fullmatch(r"\d+s|\d+m\d*s?", r[4]) for r in rows[1:]), rows


def test_get_wide_adds_priority_one_columns(populated):
    k, ns = populated
    rows = table(k("get", "pods", "-n", ns, "-o", "wide").stdout)
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
                       "READINESS GATES"]
    assert rows[1][0] == "a" and rows[1][5:] == ["<none>", "<none>", "<none>", "<none>"]


def test_get_all_namespaces_fills_namespace_column_from_row_object(populated):
    k, ns = populated
    rows = table(k("get", "pods", "-A").stdout)
    assert rows[0][:2] == ["NAMESPACE", "NAME"]
    mine = [r[:2] for r in rows[1:] if r[0] == ns]
    assert mine == [[ns, "a"], [ns, "b"], [ns, "c"]]
    namespaces = [r[0] for r in rows[1:]]
    assert namespaces == sorted(namespaces), "lists are sorted by namespace, then name"


def test_get_show_labels_and_label_selector(populated):
    k, ns = populated
    rows = table(k("get", "pods", "-n", ns, "--show-labels").stdout)
    assert rows[0][-1] == "LABELS"
    assert {r[0]: r[-1] for r in rows[1:]} == {"a": "app=web,tier=back", "b": "app=db", "c": "app=web,tier=front"}
    rows = table(k("get", "pods", "-n", ns, "-l", "app=web,tier!=front").stdout)
    assert [r[0] for r in rows[1:]] == ["a"]
    rows = table(k("get", "pods", "-n", ns, "-l", "app in (db,cache)").stdout)
    assert [r[0] for r in rows[1:]] == ["b"]
    r = k("get", "pods", "-n", ns, "-l", "app=none")
    assert r.stdout == "" and f"No resources found in {ns} namespace." in r.stderr


def test_get_jsonpath_and_yaml(populated):
    k, ns = populated
    names = k("get", "pods", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}").stdout
    assert names == "a b c"
    phase = k("get", "pod", "a", "-n", ns, "-o", "jsonpath={.status.phase}/{.spec.schedulerName}").stdout
    assert phase == "Pending/default-scheduler"
    doc = yaml.safe_load(k("get", "pods", "-n", ns, "-o", "yaml").stdout)
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1"
    assert [(i["kind"], i["metadata"]["name"]) for i in doc["items"]] == [("Pod", "a"), ("Pod", "b"), ("Pod", "c")]
    one = yaml.safe_load(k("get", "pod", "c", "-n", ns, "-o", "yaml").stdout)
    assert one["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert one["spec"]["containers"][0]["terminationMessagePath"] == "/dev/termination-log"


def test_get_watch_prints_added_modified_deleted_then_ends(kubectl):
    ns = kubectl.namespace()
    kubectl("run", "w1", "-n", ns, "--image=nginx")
    proc = kubectl.popen("get", "pods", "-n", ns, "-w", "--output-watch-events", "--request-timeout=5s")
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        eventually(lambda: any(line.startswith("ADDED") for line in lines), timeout=15, what="initial ADDED row")
        kubectl("label", "pod", "w1", "-n", ns, "stage=two")
        kubectl("delete", "pod", "w1", "-n", ns)  # never scheduled: removed at once
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(5)
    rows = table("\n".join(lines))
    assert rows[0] == ["EVENT", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [(r[0], r[1]) for r in rows[1:]] == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]
    assert proc.returncode == 0


# ---------------------------------------------------------------------------------------------- create
def test_create_from_file_with_default_validation(kubectl, tmp_path):
    ns = kubectl.namespace()
    f = tmp_path / "pod.yaml"
    f.write_text(dump(pod_manifest("p1")))
    assert kubectl("create", "-n", ns, "-f", str(f)).stdout == "pod/p1 created\n"
    r = kubectl("create", "-n", ns, "-f", str(f), ok=False)
    assert r.stderr.strip() == f'Error from server (AlreadyExists): error when creating "{f}": pods "p1" already exists'
    # strict field validation happens on the server (kubectl sends fieldValidation=Strict)
    bad = pod_manifest("p2")
    bad["spec"]["bogusField"] = 1
    r = kubectl("create", "-n", ns, "-f", "-", stdin=dump(bad), ok=False)
    assert ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.bogusField"'
            in r.stderr)
    assert kubectl("create", "-n", ns, "-f", "-", "--validate=false", stdin=dump(bad)).stdout == "pod/p2 created\n"


@pytest.mark.parametrize("args,manifest,expected", [
    pytest.param(["get", "pod", "nope"], None, 'Error from server (NotFound): pods "nope" not found',
                 id="get-missing-pod-is-notfound"),
    pytest.param(["delete", "deployment", "nope"], None,
                 'Error from server (NotFound): deployments.apps "nope" not found',
                 id="delete-missing-deployment-names-the-group"),
    pytest.param(["create", "-f", "-"],
                 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": []}},
                 'The Pod "x" is invalid: spec.containers: Required value', id="pod-without-containers-is-invalid"),
    pytest.param(["create", "-f", "-"],
                 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Bad_Name"},
                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                 "The Pod \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 "
                 "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                 "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                 id="bad-pod-name-is-invalid-with-regex"),
    pytest.param(["get", "flurbs"], None, 'error: the server doesn\'t have a resource type "flurbs"',
                 id="unknown-resource-type"),
    pytest.param(["create", "-f", "-"], {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
                                         "data": {"port": 8080}},
                 'Error from server (BadRequest): error when creating "STDIN": ConfigMap in version "v1" cannot be '
                 "handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type "
                 "string", id="wrong-json-type-is-a-decode-error"),
    pytest.param(["create", "-f", "-"], {**deployment_manifest("r"), "spec": {
                     **deployment_manifest("r")["spec"], "replicas": "two"}},
                 'Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be '
                 "handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec."
                 "replicas of type int32", id="string-replicas-is-a-decode-error"),
    pytest.param(["delete", "namespace", "kube-system"], None,
                 'Error from server (Forbidden): namespaces "kube-system" is forbidden: this namespace may not be '
                 'deleted', id="immortal-namespace-may-not-be-deleted"),
])
def test_error_messages_match_kube_apiserver(kubectl, args, manifest, expected):
    ns = kubectl.namespace()
    r = kubectl(*args, "-n", ns, ok=False, stdin=dump(manifest) if manifest else None)
    assert r.stderr.strip().splitlines()[-1] == expected


def test_no_new_content_in_a_terminating_namespace(kubectl):
    ns = kubectl.namespace()
    # API-only server: no namespace controller, so the namespace stays Terminating
    assert kubectl("delete", "namespace", ns, "--wait=false").stdout == f'namespace "{ns}" deleted\n'
    assert kubectl("get", "ns", ns, "-o", "jsonpath={.status.phase}").stdout == "Terminating"
    r = kubectl("create", "-n", ns, "-f", "-", stdin=dump(pod_manifest("late")), ok=False)
    assert r.stderr.strip() == (
        f'Error from server (Forbidden): error when creating "STDIN": pods "late" is forbidden: unable to create '
        f"new content in namespace {ns} because it is being terminated")


def test_create_generators_send_protobuf_bodies(kubectl):
    ns = kubectl.namespace()
    team, pc = "team-" + ns[2:], "high-" + ns[2:]
    assert kubectl("create", "namespace", team).stdout == f"namespace/{team} created\n"
    assert kubectl("create", "priorityclass", pc, "--value=1000",
                   "--description=important").stdout == f"priorityclass.scheduling.k8s.io/{pc} created\n"
    assert kubectl("create", "configmap", "cm1", "-n", ns, "--from-literal=a=b",
                   "--from-literal=c=d").stdout == "configmap/cm1 created\n"
    assert kubectl("create", "deployment", "d1", "-n", ns, "--image=nginx:1.25", "--replicas=3",
                   "--port=80").stdout == "deployment.apps/d1 created\n"
    rows = table(kubectl("get", "pc", pc).stdout)
    assert rows == [["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
                    [pc, "1000", "false", rows[1][3], "PreemptLowerPriority"]]
    assert kubectl("get", "ns", team, "-o", "jsonpath={.status.phase}").stdout == "Active"
    cm = json.loads(kubectl("get", "cm", "cm1", "-n", ns, "-o", "json").stdout)
    assert cm["data"] == {"a": "b", "c": "d"}
    d = json.loads(kubectl("get", "deploy", "d1", "-n", ns, "-o", "json").stdout)
    assert d["spec"]["replicas"] == 3 and d["spec"]["selector"] == {"matchLabels": {"app": "d1"}}
    c = d["spec"]["template"]["spec"]["containers"][0]
    assert (c["name"], c["image"], c["ports"]) == ("nginx", "nginx:1.25", [{"containerPort": 80, "protocol": "TCP"}])
    assert d["spec"]["strategy"]["type"] == "RollingUpdate"


# ---------------------------------------------------------------------------------------------- apply
def test_apply_create_unchanged_configured_with_strategic_merge_removals(kubectl):
    ns = kubectl.namespace()
    v1 = deployment_manifest("web", containers=[
        {"name": "c", "image": "nginx:1.25", "args": ["a", "b"],
         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
         "ports": [{"containerPort": 80}, {"containerPort": 443}]},
        {"name": "side", "image": "busybox"}])
    v1["spec"]["template"]["spec"]["tolerations"] = [{"key": "a", "operator": "Exists"}]
    assert kubectl.apply_text("apply", "-n", ns, manifest=dump(v1)).stdout == "deployment.apps/web created\n"
    assert kubectl.apply_text("apply", "-n", ns, manifest=dump(v1)).stdout == "deployment.apps/web unchanged\n"
    # someone else adds a label and an env var: apply must keep what it does not manage
    kubectl("label", "deploy", "web", "-n", ns, "owner=ops")
    v2 = deployment_manifest("web", replicas=3, containers=[
        {"name": "c", "image": "nginx:1.26", "args": ["x"], "env": [{"name": "A", "value": "1"}],
         "ports": [{"containerPort": 80}]}])
    v2["spec"]["template"]["spec"]["tolerations"] = [{"key": "b", "operator": "Exists"}]
    assert kubectl.apply_text("apply", "-n", ns, manifest=dump(v2)).stdout == "deployment.apps/web configured\n"
    d = json.loads(kubectl("get", "deploy", "web", "-n", ns, "-o", "json").stdout)
    spec = d["spec"]["template"]["spec"]
    assert [c["name"] for c in spec["containers"]] == ["c"]
    c = spec["containers"][0]
    assert c["image"] == "nginx:1.26" and c["args"] == ["x"]
    assert c["env"] == [{"name": "A", "value": "1"}]
    assert c["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert spec["tolerations"] == [{"key": "b", "operator": "Exists"}]
    assert d["spec"]["replicas"] == 3
    assert d["metadata"]["labels"] == {"owner": "ops"}
    last = json.loads(d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 3
    assert kubectl.apply_text("apply", "-n", ns, manifest=dump(v2)).stdout == "deployment.apps/web unchanged\n"


def test_server_side_apply_twice_then_conflict_between_managers(kubectl):
    ns = kubectl.namespace()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1", "b": "2"}}
    for _ in range(2):
        r = kubectl.apply_text("apply", "--server-side", "-n", ns, manifest=dump(cm))
        assert r.stdout == "configmap/ssa serverside-applied\n"
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "9"}}
    r = kubectl.apply_text("apply", "--server-side", "--field-manager=other", "-n", ns, manifest=dump(other), ok=False)
    assert r.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl": .data.a\n')
    assert "--force-conflicts" in r.stderr
    r = kubectl.apply_text("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-n", ns,
                           manifest=dump(other))
    assert r.stdout == "configmap/ssa serverside-applied\n"
    live = json.loads(kubectl("get", "cm", "ssa", "-n", ns, "-o", "json", "--show-managed-fields").stdout)
    assert live["data"] == {"a": "9", "b": "2"}
    managers = {m["manager"]: m for m in live["metadata"]["managedFields"]}
    assert set(managers) == {"kubectl", "other"}
    assert managers["other"]["fieldsV1"] == {"f:data": {"f:a": {}}}
    assert managers["kubectl"]["fieldsV1"] == {"f:data": {"f:b": {}}}
    # the first manager stops applying b: server-side apply prunes it
    cm["data"] = {}
    kubectl.apply_text("apply", "--server-side", "-n", ns, manifest=dump(cm))
    assert json.loads(kubectl("get", "cm", "ssa", "-n", ns, "-o", "json").stdout)["data"] == {"a": "9"}


def test_replace_with_stale_resource_version_is_a_conflict(kubectl, tmp_path):
    ns = kubectl.namespace()
    kubectl.apply_text("create", "-n", ns, manifest=dump(pod_manifest("web-1")))
    f = tmp_path / "stale.yaml"
    f.write_text(kubectl("get", "pod", "web-1", "-n", ns, "-o", "yaml").stdout)
    kubectl("label", "pod", "web-1", "-n", ns, "bump=1")
    r = kubectl("replace", "-f", str(f), ok=False)
    assert r.stderr.strip() == (
        f'Error from server (Conflict): error when replacing "{f}": Operation cannot be fulfilled on pods "web-1": '
        "the object has been modified; please apply your changes to the latest version and try again")
    fresh = yaml.safe_load(kubectl("get", "pod", "web-1", "-n", ns, "-o", "yaml").stdout)
    fresh["metadata"]["labels"]["replaced"] = "yes"
    f.write_text(yaml.safe_dump(fresh))
    assert kubectl("replace", "-f", str(f)).stdout == "pod/web-1 replaced\n"


def test_scale_and_current_replicas_precondition(kubectl):
    ns = kubectl.namespace()
    kubectl.apply_text("create", "-n", ns, manifest=dump(deployment_manifest("d1", replicas=2)))
    assert kubectl("scale", "deploy", "d1", "-n", ns, "--replicas=5").stdout == "deployment.apps/d1 scaled\n"
    assert kubectl("get", "deploy", "d1", "-n", ns, "-o", "jsonpath={.spec.replicas}").stdout == "5"
    # --current-replicas: GET scale + PUT scale without Content-Type
    assert kubectl("scale", "deploy/d1", "-n", ns, "--current-replicas=5",
                   "--replicas=1").stdout == "deployment.apps/d1 scaled\n"
    r = kubectl("scale", "deploy/d1", "-n", ns, "--current-replicas=5", "--replicas=2", ok=False)
    assert r.stderr.strip() == "error: Expected replicas to be 5, was 1"
    scale = json.loads(kubectl("get", "--raw", f"/apis/apps/v1/namespaces/{ns}/deployments/d1/scale").stdout)
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1" and scale["spec"] == {"replicas": 1}


def test_services_get_cluster_ips_and_node_ports(kubectl):
    ns = kubectl.namespace()
    assert kubectl("create", "service", "clusterip", "a", "-n", ns,
                   "--tcp=80:8080").stdout == "service/a created\n"
    assert kubectl("create", "service", "nodeport", "b", "-n", ns, "--tcp=80:8080").stdout == "service/b created\n"
    kubectl("create", "service", "clusterip", "h", "-n", ns, "--clusterip=None")
    rows = {r[0]: r for r in table(kubectl("get", "svc", "-n", ns).stdout)[1:]}
    assert rows["a"][1] == "ClusterIP" and rows["a"][3:5] == ["<none>", "80/TCP"]
    assert re.fullmatch(r"10\.43\.\d+\.\d+", rows["a"][2]) and rows["a"][2] != "10.43.0.1"
    assert rows["b"][1] == "NodePort" and rows["b"][2] != rows["a"][2]
    node_port = int(re.fullmatch(r"80:(\d+)/TCP", rows["b"][4]).group(1))
    assert 30000 <= node_port <= 32767
    assert rows["h"][1:3] == ["ClusterIP", "None"]
    # a node port is allocated once; type changes keep the IP and add a port
    r = kubectl("create", "service", "nodeport", "c", "-n", ns, "--tcp=81:8080", f"--node-port={node_port}", ok=False)
    assert r.stderr.strip() == (f'error: failed to create NodePort service: Service "c" is invalid: '
                                f"spec.ports[0].nodePort: Invalid value: {node_port}: provided port is already allocated")
    kubectl("patch", "svc", "a", "-n", ns, "-p", '{"spec":{"type":"NodePort"}}')
    after = {r[0]: r for r in table(kubectl("get", "svc", "-n", ns).stdout)[1:]}
    assert after["a"][2] == rows["a"][2] and re.fullmatch(r"80:3\d{4}/TCP", after["a"][4])
    taken = kubectl("get", "svc", "a", "-n", ns, "-o", "jsonpath={.spec.clusterIP}").stdout
    clash = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "d"},
             "spec": {"clusterIP": taken, "ports": [{"port": 80}]}}
    r = kubectl("create", "-n", ns, "-f", "-", stdin=dump(clash), ok=False)
    assert r.stderr.strip() == (f'The Service "d" is invalid: spec.clusterIPs: Invalid value: []string{{"{taken}"}}: '
                                f"failed to allocate IP {taken}: provided IP is already allocated")


# ---------------------------------------------------------------------------------------------- nodes
@pytest.fixture
def node(kubectl) -> Iterator[str]:
    name = "n-" + uuid.uuid4().hex[:6]
    kubectl.apply_text("create", manifest=dump(node_manifest(name)))
    yield name
    kubectl("delete", "node", name)


def test_label_with_and_without_overwrite(kubectl, node):
    assert kubectl("label", "nodes", node, "zone=a").stdout == f"node/{node} labeled\n"
    r = kubectl("label", "nodes", node, "zone=b", ok=False)
    assert r.stderr.strip() == "error: 'zone' already has a value (a), and --overwrite is false"
    assert kubectl("label", "nodes", node, "zone=b", "--overwrite").stdout == f"node/{node} labeled\n"
    assert kubectl("get", "node", node, "-o", "jsonpath={.metadata.labels.zone}").stdout == "b"
    assert kubectl("label", "nodes", node, "zone-").stdout == f"node/{node} unlabeled\n"
    assert kubectl("get", "node", node, "-o", "jsonpath={.metadata.labels.zone}").stdout == ""


def test_taint_add_duplicate_and_remove(kubectl, node):
    assert kubectl("taint", "nodes", node, "key=value:NoSchedule").stdout == f"node/{node} tainted\n"
    assert kubectl("taint", "nodes", node, "other:NoExecute").stdout == f"node/{node} tainted\n"
    r = kubectl("taint", "nodes", node, "key=value:NoSchedule", ok=False)
    assert r.stderr.strip() == f"error: node {node} already has key taint(s) with same effect(s) and --overwrite is false"
    taints = json.loads(kubectl("get", "node", node, "-o", "jsonpath={.spec.taints}").stdout)
    # kubectl sends the whole list, new taints first (taints have no merge key: the list is replaced)
    assert [(t["key"], t.get("value"), t["effect"]) for t in taints] == [
        ("other", None, "NoExecute"), ("key", "value", "NoSchedule")]
    assert kubectl("taint", "nodes", node, "key=value:NoSchedule-").stdout == f"node/{node} untainted\n"
    assert kubectl("taint", "nodes", node, "other-").stdout == f"node/{node} untainted\n"
    assert kubectl("get", "node", node, "-o", "jsonpath={.spec.taints}").stdout == ""


def test_cordon_and_uncordon(kubectl, node):
    assert kubectl("cordon", node).stdout == f"node/{node} cordoned\n"
    assert kubectl("cordon", node).stdout == f"node/{node} already cordoned\n"
    rows = table(kubectl("get", "node", node).stdout)
    assert rows[1][:2] == [node, "NotReady,SchedulingDisabled"] or rows[1][:2] == [node, "Unknown,SchedulingDisabled"]
    assert kubectl("uncordon", node).stdout == f"node/{node} uncordoned\n"
    assert kubectl("uncordon", node).stdout == f"node/{node} already uncordoned\n"
    assert kubectl("get", "node", node, "-o", "jsonpath={.spec.unschedulable}").stdout == ""


# ---------------------------------------------------------------------------------------------- delete
def test_force_delete_with_zero_grace_period(kubectl):
    ns = kubectl.namespace()
    kubectl.apply_text("create", "-n", ns, manifest=dump(pod_manifest("gone", node="some-node")))
    r = kubectl("delete", "pod", "gone", "-n", ns, "--grace-period=0", "--force", timeout=20)
    assert r.stdout == 'pod "gone" force deleted\n'
    assert r.stderr.startswith("Warning: Immediate deletion does not wait for confirmation that the running "
                               "resource has been terminated.")
    r = kubectl("get", "pod", "gone", "-n", ns, ok=False)
    assert r.stderr.strip() == 'Error from server (NotFound): pods "gone" not found'


def test_graceful_delete_of_bound_pod_marks_it_terminating(kubectl):
    ns = kubectl.namespace()
    kubectl.apply_text("create", "-n", ns, manifest=dump(pod_manifest("slow", node="some-node")))
    assert kubectl("delete", "pod", "slow", "-n", ns, "--grace-period=7",
                   "--wait=false").stdout == 'pod "slow" deleted\n'
    pod = json.loads(kubectl("get", "pod", "slow", "-n", ns, "-o", "json").stdout)
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 7 and pod["metadata"]["deletionTimestamp"]
    rows = table(kubectl("get", "pod", "slow", "-n", ns).stdout)
    assert rows[1][:3] == ["slow", "0/1", "Terminating"]


def test_finalizer_holds_a_delete_until_removed(kubectl):
    ns = kubectl.namespace()
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "data": {"k": "v"}}
    kubectl.apply_text("create", "-n", ns, manifest=dump(cm))
    assert kubectl("delete", "cm", "held", "-n", ns, "--wait=false").stdout == 'configmap "held" deleted\n'
    live = json.loads(kubectl("get", "cm", "held", "-n", ns, "-o", "json").stdout)
    assert live["metadata"]["deletionTimestamp"] and live["metadata"]["finalizers"] == ["example.com/hold"]
    r = kubectl("delete", "cm", "held", "-n", ns, "--timeout=1s", ok=False)
    assert "timed out waiting for the condition on configmaps/held" in r.stderr
    r = kubectl("patch", "cm", "held", "-n", ns, "--type=merge",
                "-p", '{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}', ok=False)
    assert r.stderr.strip() == (
        'The ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the '
        'object is being deleted, found new finalizers []string{"example.com/more"}')
    kubectl("patch", "cm", "held", "-n", ns, "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    r = kubectl("get", "cm", "held", "-n", ns, ok=False)
    assert r.stderr.strip() == 'Error from server (NotFound): configmaps "held" not found'


# ---------------------------------------------------------------------------------------------- explain
def test_explain_topology_spread_constraints(kubectl):
    out = kubectl("explain", "pod.spec.topologySpreadConstraints").stdout
    assert "KIND:       Pod" in out and "VERSION:    v1" in out
    assert "FIELD: topologySpreadConstraints <[]TopologySpreadConstraint>" in out
    for f in ("maxSkew\t<integer> -required-", "topologyKey\t<string> -required-",
              "whenUnsatisfiable\t<string> -required-", "labelSelector\t<LabelSelector>",
              "minDomains\t<integer>", "matchLabelKeys\t<[]string>"):
        assert f in out, f


def test_discovery_is_two_aggregated_requests(kubectl):
    """kubectl 1.33 with an empty cache discovers every group from `/api` and `/apis` alone
    (aggregated discovery, apidiscovery.k8s.io/v2): no request per group-version."""
    r = kubectl("api-resources", "-v=6")
    urls = [line.split('url="', 1)[1].split('"', 1)[0] for line in r.stderr.splitlines() if 'url="' in line]
    paths = [urlsplit(u).path for u in urls]
    assert paths == ["/api", "/apis"], paths
    rows = {row[0]: row for row in table(r.stdout)[1:]}
    assert rows["deployments"][1:] == ["deploy", "apps/v1", "true", "Deployment"]
    assert rows["horizontalpodautoscalers"][-3] == "autoscaling/v2"


def test_explain_prints_upstreams_descriptions(kubectl):
    """`kubectl explain` prints the type's and each field's description from the OpenAPI v3
    documents, in upstream's words (Kubernetes 1.33's spec)."""
    out = kubectl("explain", "pods").stdout
    assert ("DESCRIPTION:\n    Pod is a collection of containers that can run on a host. This resource is\n"
            "    created by clients and scheduled onto hosts.") in out
    assert "<no description>" not in out and "<empty>" not in out
    assert "  spec\t<PodSpec>\n    Specification of the desired behavior of the pod." in out
    out = kubectl("explain", "deployment.spec.strategy").stdout
    # a field's description, then its type's, as kubectl explain joins them
    assert ("DESCRIPTION:\n    The deployment strategy to use to replace existing pods with new ones.\n"
            "    DeploymentStrategy describes how to replace existing pods with new ones.") in out
    assert 'Type of deployment. Can be "Recreate" or "RollingUpdate". Default is\n    RollingUpdate.' in out
    out = kubectl("explain", "pod.spec.containers").stdout
    assert "List of containers belonging to the pod." in out
    assert "  image\t<string>\n    Container image name. More info:" in out
    out = kubectl("explain", "crd.spec.names").stdout
    assert "CustomResourceDefinitionNames indicates the names to serve this" in out
    out = kubectl("explain", "pods.metadata.generateName").stdout
    assert "GenerateName is an optional prefix, used by the server, to generate a unique" in out
    # Quantity and IntOrString are named, as kube-openapi's v3 oneOf types are
    out = kubectl("explain", "pod.spec.containers.resources").stdout
    assert "  limits\t<map[string]Quantity>\n" in out and "  requests\t<map[string]Quantity>\n" in out
    out = kubectl("explain", "deployment.spec.strategy.rollingUpdate").stdout
    assert "  maxSurge\t<IntOrString>\n" in out


# ---------------------------------------------------------------------------------------------- wire details
@pytest.mark.parametrize("how", [
    pytest.param("query", id="delete-options-in-query-string"),
    pytest.param("json", id="delete-options-json-body"),
    pytest.param("json-no-content-type", id="delete-options-json-body-without-content-type"),
    pytest.param("protobuf", id="delete-options-protobuf-body"),
    pytest.param("form", id="delete-options-form-body"),
    pytest.param("curl-d-json", id="delete-options-json-sent-as-form-by-curl-d"),
])
def test_delete_options_in_every_encoding(kubectl, how):
    from apiserver.protobuf import encode_protobuf

    ns = kubectl.namespace()
    http = kubectl.http
    assert http.post(f"/api/v1/namespaces/{ns}/pods", json=pod_manifest("p", node="some-node")).status_code == 201
    url = f"/api/v1/namespaces/{ns}/pods/p"
    opts = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}
    if how == "query":
        r = http.delete(url, params={"gracePeriodSeconds": "0"})
    elif how == "json":
        r = http.request("DELETE", url, content=json.dumps(opts), headers={"Content-Type": "application/json"})
    elif how == "json-no-content-type":
        r = http.request("DELETE", url, content=json.dumps(opts))
    elif how == "protobuf":
        r = http.request("DELETE", url, content=encode_protobuf(opts),
                         headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
    elif how == "form":
        r = http.request("DELETE", url, content="gracePeriodSeconds=0&propagationPolicy=Background",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    else:
        r = http.request("DELETE", url, content=json.dumps(opts),
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200, r.text
    assert http.get(url).status_code == 404, "grace period 0 removes a bound pod at once"


def test_field_selectors_any_order_with_not_equal_and_empty_values(kubectl):
    """The shapes `kubectl describe node|pod` sends: terms in any order, `!=`, empty values."""
    ns = kubectl.namespace()
    http = kubectl.http
    node = "n-" + ns[2:]
    # kubelet-style node event: no involvedObject.namespace, so it lives in "default"
    node_ev = {"metadata": {"name": f"{node}.1"}, "involvedObject": {"kind": "Node", "name": node, "uid": node},
               "reason": "R", "message": "m", "type": "Normal"}
    pod_ev = {"metadata": {"name": "p.1"}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns},
              "reason": "R", "message": "m", "type": "Warning"}
    assert http.post("/api/v1/namespaces/default/events", json=node_ev).status_code == 201
    assert http.post(f"/api/v1/namespaces/{ns}/events", json=pod_ev).status_code == 201

    def names(path: str, sel: str) -> list[str]:
        r = http.get(path, params={"fieldSelector": sel})
        assert r.status_code == 200, r.text
        return [i["metadata"]["name"] for i in r.json()["items"]]

    for sel in (f"involvedObject.kind=Node,involvedObject.uid={node},involvedObject.name={node},"
                "involvedObject.namespace=",
                f"involvedObject.namespace=,involvedObject.name={node},involvedObject.uid={node},"
                "involvedObject.kind=Node"):
        assert names("/api/v1/events", sel) == [f"{node}.1"]
    assert names(f"/api/v1/namespaces/{ns}/events", "type!=Normal") == ["p.1"]
    assert names(f"/api/v1/namespaces/{ns}/events", "type!=Warning") == []
    assert names("/api/v1/events", f"involvedObject.name==p,involvedObject.namespace={ns}") == ["p.1"]
    assert names(f"/api/v1/namespaces/{ns}/pods",
                 "status.phase!=Succeeded,spec.nodeName=n1,status.phase!=Failed") == []
    r = http.get(f"/api/v1/namespaces/{ns}/events", params={"fieldSelector": "spec.bogus=1"})
    assert r.status_code == 400 and r.json()["message"] == "field label not supported: spec.bogus"


def test_watch_stays_open_until_timeout_seconds(kubectl):
    ns = kubectl.namespace()
    start = time.monotonic()
    with kubectl.http.stream("GET", f"/api/v1/namespaces/{ns}/configmaps",
                             params={"watch": "true", "timeoutSeconds": "3"}, timeout=20) as r:
        assert r.status_code == 200
        lines = [line for line in r.iter_lines() if line.strip()]
    elapsed = time.monotonic() - start
    assert lines == []
    assert 2.5 <= elapsed < 10, elapsed


def test_certificate_approve_and_deny_send_protobuf_to_the_approval_subresource(kubectl):
    """`kubectl certificate approve|deny` PUT the CSR as protobuf to .../approval."""
    import base64
    pem = ("-----BEGIN CERTIFICATE REQUEST-----\n" + base64.b64encode(b"\x30\x03\x02\x01\x00").decode()
           + "\n-----END CERTIFICATE REQUEST-----\n")
    names = [f"csr-{uuid.uuid4().hex[:6]}" for _ in range(2)]
    for name in names:
        manifest = yaml.safe_dump({
            "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": base64.b64encode(pem.encode()).decode(),
                     "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}})
        kubectl.apply_text("apply", manifest=manifest)
    assert kubectl("certificate", "approve", names[0]).stdout.strip() == \
        f"certificatesigningrequest.certificates.k8s.io/{names[0]} approved"
    assert kubectl("certificate", "deny", names[1]).stdout.strip() == \
        f"certificatesigningrequest.certificates.k8s.io/{names[1]} denied"
    rows = {r[0]: r for r in table(kubectl("get", "csr", *names).stdout)[1:]}
    assert rows[names[0]][-1] == "Approved" and rows[names[1]][-1] == "Denied"
    cond = kubectl.http.get(f"/apis/certificates.k8s.io/v1/certificatesigningrequests/{names[0]}").json()[
        "status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Approved", "True", "KubectlApprove")
    r = kubectl("certificate", "deny", names[0], ok=False)
    assert f'certificate signing request "{names[0]}" is already Approved' in r.stderr


def test_auth_can_i_and_whoami_answer_as_admin(kubectl):
    # plain HTTP on loopback: every request is system:admin's (system:masters), and the review
    # APIs say so (kubectl sends these reviews as protobuf); RBAC itself: tests/e2e/test_rbac.py
    assert kubectl("auth", "can-i", "create", "pods").stdout.strip() == "yes"
    assert kubectl("auth", "can-i", "delete", "nodes", "--all-namespaces").stdout.strip() == "yes"
    who = kubectl("auth", "whoami").stdout
    assert "system:admin" in who and "system:masters" in who


def test_version_endpoint_is_1_33(kubectl):
    v = kubectl.http.get("/version").json()
    assert (v["major"], v["minor"]) == ("1", "33") and v["gitVersion"].startswith("v1.33.")
    assert {"gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"} <= set(v)


def test_eviction_with_unprocessed_pdb_is_429_with_retry_after(kubectl):
    """Upstream: a PDB whose status has not observed its generation -> 429 + retryAfterSeconds 10,
    mirrored in a Retry-After header (the only eviction refusal that carries one)."""
    ns = kubectl.namespace()
    http = kubectl.http
    p = pod_manifest("guarded", labels={"app": "g"}, node="some-node")
    assert http.post(f"/api/v1/namespaces/{ns}/pods", json=p).status_code == 201
    st = http.get(f"/api/v1/namespaces/{ns}/pods/guarded").json()
    st["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    assert http.put(f"/api/v1/namespaces/{ns}/pods/guarded/status", json=st).status_code == 200
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "g"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "g"}}}}
    assert http.post(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", json=pdb).status_code == 201
    r = http.post(f"/api/v1/namespaces/{ns}/pods/guarded/eviction",
                  json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded"}})
    assert r.status_code == 429
    assert r.headers.get("Retry-After") == "10"
    body = r.json()
    assert body["reason"] == "TooManyRequests"
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["retryAfterSeconds"] == 10
    assert body["details"]["causes"] == [{"reason": "DisruptionBudget",
                                          "message": "The disruption budget g is still being processed by the server."}]


# ============================================================================= last: the background pod-GC story
def test_delete_of_pod_on_nonexistent_node_finishes_via_pod_gc(cluster):
    """No kubelet serves `ghost-node`: the pod GC force-deletes the pod after its quarantine
    (40 s, checked every 20 s, as kube-controller-manager), so `kubectl delete` returns."""
    assert cluster.ghost is not None
    try:
        rc = cluster.ghost.wait(timeout=max(5.0, 100 - (time.monotonic() - cluster.ghost_started)))
    except subprocess.TimeoutExpired:
        pytest.fail("kubectl delete of a pod on a nonexistent node still waiting after 100 s")
    out = cluster.ghost.stdout.read() if cluster.ghost.stdout else ""
    assert rc == 0 and out == 'pod "orphan" deleted\n'
    assert cluster.k.http.get(f"/api/v1/namespaces/{cluster.ghost_ns}/pods/orphan").status_code == 404


def test_get_scale_subresource_prints_the_scale_table(kubectl):
    """`kubectl get deploy x --subresource=scale` asks for a Table of the Scale: kube-apiserver
    prints it with printScale (NAME, DESIRED, AVAILABLE, AGE), not the Deployment's columns."""
    ns = kubectl.namespace()
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "-n", ns)
    rows = table(kubectl("get", "deployment", "web", "--subresource=scale", "-n", ns).stdout)
    assert rows[0] == ["NAME", "DESIRED", "AVAILABLE", "AGE"]
    assert rows[1][:2] == ["web", "2"]
