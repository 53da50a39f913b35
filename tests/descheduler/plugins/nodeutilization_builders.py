"""Upstream descheduler's test.BuildTestPod / BuildTestNode and the pod/node modifiers its
nodeutilization tables use, in our words: shared by the LowNodeUtilization and
HighNodeUtilization ports."""

from __future__ import annotations

from collections.abc import Callable

from minik3s.api.types import JsonDict

Mod = Callable[[JsonDict], None]

LOW_PRIORITY = 0
HIGH_PRIORITY = 10000
EXT = "example.com/foo"


# ---- upstream test.Build* helpers, in our words -------------------------------------------------

def node(name: str, cpu_m: int, mem: int, pods: int, *mods: Mod) -> JsonDict:
    rl = {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": str(pods)}
    n: JsonDict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {},
                   "status": {"capacity": dict(rl), "allocatable": dict(rl),
                              "conditions": [{"type": "Ready", "status": "True"}]}}
    for m in mods:
        m(n)
    return n


def pod(name: str, cpu_m: int, mem: int, node_name: str, *mods: Mod) -> JsonDict:
    req: dict[str, str] = {}
    if cpu_m >= 0:
        req["cpu"] = f"{cpu_m}m"
    if mem >= 0:
        req["memory"] = str(mem)
    p: JsonDict = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name.replace("_", "-").lower(), "namespace": "default"},
                   "spec": {"nodeName": node_name,
                            "containers": [{"name": "c0", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": req}}]}}
    for m in mods:
        m(p)
    return p


def _owner(kind: str, name: str) -> Mod:
    def set_owner(p: JsonDict) -> None:
        p["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": kind, "name": name, "uid": f"uid-{name}"}]
    return set_owner


rs = _owner("ReplicaSet", "replicaset-1")
ds = _owner("DaemonSet", "daemonset-1")
normal = _owner("Pod", "owner-pod")


def ns(name: str) -> Mod:
    def set_ns(p: JsonDict) -> None:
        p["metadata"]["namespace"] = name
    return set_ns


def priority(value: int) -> Mod:
    def set_priority(p: JsonDict) -> None:
        p["spec"]["priority"] = value
    return set_priority


def critical(p: JsonDict) -> None:
    """Upstream: namespace kube-system, priority SystemCriticalPriority (here through the
    system-cluster-critical class: user classes may not go above 1e9)."""
    p["metadata"]["namespace"] = "kube-system"
    p["spec"]["priorityClassName"] = "system-cluster-critical"


def local_storage_mirror(p: JsonDict) -> None:
    normal(p)
    # upstream's fixture has hostPath and emptyDir in one volume, which the API refuses
    p["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}},
                            {"name": "sample-dir", "emptyDir": {"sizeLimit": "10"}}]
    p["metadata"]["annotations"] = {
        "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
        "kubernetes.io/config.source": "api", "kubernetes.io/config.mirror": "mirror"}


def best_effort(p: JsonDict) -> None:
    p["spec"]["containers"][0]["resources"] = {}


def ext_request(n: int) -> Mod:
    def set_ext(p: JsonDict) -> None:
        # the API (as kube-apiserver) wants a limit equal to the request for an extended resource
        res = p["spec"]["containers"][0]["resources"]
        res["requests"][EXT] = str(n)
        res.setdefault("limits", {})[EXT] = str(n)
    return set_ext


def node_ext(n: int) -> Mod:
    def set_ext(nd: JsonDict) -> None:
        nd["status"]["capacity"][EXT] = str(n)
        nd["status"]["allocatable"][EXT] = str(n)
    return set_ext


def unschedulable(nd: JsonDict) -> None:
    nd["spec"]["unschedulable"] = True


def labels(**kv: str) -> Mod:
    def set_labels(o: JsonDict) -> None:
        o["metadata"]["labels"] = dict(kv)
    return set_labels


def node_selector(**kv: str) -> Mod:
    def set_sel(p: JsonDict) -> None:
        p["spec"]["nodeSelector"] = dict(kv)
    return set_sel


def required_affinity_in(key: str, value: str) -> Mod:
    def set_aff(p: JsonDict) -> None:
        p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}}}
    return set_aff


def mods(*ms: Mod) -> Mod:
    def apply(o: JsonDict) -> None:
        for m in ms:
            m(o)
    return apply
