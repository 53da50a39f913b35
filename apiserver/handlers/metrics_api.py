"""metrics.k8s.io/v1beta1: NodeMetrics and PodMetrics, as metrics-server serves them (layer L4).

Why: in a real cluster kube-apiserver proxies this aggregated API to metrics-server; here the
composition root injects a `UsageProvider` (the simulated kubelets' usage) and this handler
answers the same paths. Without a provider the group is absent from discovery and its paths
answer 503, as kube-apiserver does while the APIService is unavailable, so `kubectl top` says
"Metrics API not available".

Data flow: dispatch (`/apis/metrics.k8s.io/...`) -> `serve` -> provider samples, joined with
the stored Node/Pod objects (labels, creationTimestamp, label selectors) -> JSON. Read-only:
verbs get and list (metrics-server serves no watch). cpu is rendered in nanocores (`n`) and
memory in `Ki`, metrics-server's units.
"""

from __future__ import annotations

from datetime import datetime

from aiohttp import web

from apiserver.core import ApiCore
from apiserver.handlers import codec
from apiserver.handlers.common import not_found_path
from apiserver.keys import CORE, USAGE
from minik3s.api.errors import (
    BadRequestError,
    MethodNotAllowedError,
    NotFoundError,
    ServiceUnavailableError,
    status_details,
)
from minik3s.api.metrics import NodeUsage, PodUsage
from minik3s.api.resources import NODES, PODS
from minik3s.api.selectors import LabelSelector, parse_label_selector
from minik3s.api.types import JsonDict

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
GROUP_VERSION = f"{GROUP}/{VERSION}"


def api_group() -> JsonDict:
    v = {"groupVersion": GROUP_VERSION, "version": VERSION}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": GROUP, "versions": [v], "preferredVersion": v}


def resource_list() -> JsonDict:
    verbs = ["get", "list"]
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION, "resources": [
        {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": verbs},
        {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": verbs},
    ]}


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _window(seconds: float) -> str:
    return f"{seconds:g}s"


def _usage(cpu_milli: int, memory_bytes: int) -> JsonDict:
    return {"cpu": f"{cpu_milli * 1_000_000}n", "memory": f"{memory_bytes // 1024}Ki"}


def _meta(obj: JsonDict, namespaced: bool) -> JsonDict:
    src = obj.get("metadata") or {}
    meta: JsonDict = {"name": src.get("name"), "creationTimestamp": src.get("creationTimestamp")}
    if namespaced:
        meta["namespace"] = src.get("namespace")
    if src.get("labels"):
        meta["labels"] = dict(src["labels"])
    return meta


def node_metrics(node: JsonDict, u: NodeUsage) -> JsonDict:
    return {"kind": "NodeMetrics", "apiVersion": GROUP_VERSION, "metadata": _meta(node, False),
            "timestamp": _ts(u.timestamp), "window": _window(u.window_seconds),
            "usage": _usage(u.cpu_milli, u.memory_bytes)}


def pod_metrics(pod: JsonDict, u: PodUsage) -> JsonDict:
    return {"kind": "PodMetrics", "apiVersion": GROUP_VERSION, "metadata": _meta(pod, True),
            "timestamp": _ts(u.timestamp), "window": _window(u.window_seconds),
            "containers": [{"name": c.name, "usage": _usage(c.cpu_milli, c.memory_bytes)} for c in u.containers]}


def _selector(request: web.Request) -> LabelSelector:
    raw = request.query.get("labelSelector", "")
    try:
        return parse_label_selector(raw)
    except ValueError as e:
        raise BadRequestError(f"unable to parse labelSelector: {e}") from e


def _list(kind: str, items: list[JsonDict]) -> JsonDict:
    return {"kind": f"{kind}List", "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}


async def serve(request: web.Request, parts: list[str]) -> web.StreamResponse:
    """`parts`: the path split on '/', starting with 'apis', 'metrics.k8s.io', 'v1beta1', ..."""
    provider = request.app[USAGE]
    if provider is None:
        raise ServiceUnavailableError("the server is currently unable to handle the request")
    if parts[2] != VERSION:
        raise not_found_path()
    if request.method != "GET":
        raise MethodNotAllowedError("the server does not allow this method on the requested resource")
    if request.query.get("watch") in ("1", "true"):
        raise MethodNotAllowedError("the server does not allow this method on the requested resource")
    core = request.app[CORE]
    rest = parts[3:]
    if rest and rest[0] == "nodes" and len(rest) <= 2:
        return codec.json_response(_nodes(core, provider.node_usage(), rest[1] if len(rest) == 2 else None,
                                          request))
    namespace: str | None = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if rest and rest[0] == "pods" and len(rest) <= 2:
        return codec.json_response(_pods(core, provider.pod_usage(namespace), namespace,
                                         rest[1] if len(rest) == 2 else None, request))
    raise not_found_path()


def _nodes(core: ApiCore, usage: list[NodeUsage], name: str | None, request: web.Request) -> JsonDict:
    by_name = {u.name: u for u in usage}
    if name is not None:
        u = by_name.get(name)
        node = core.store.get(NODES.key(None, name)) if u is not None else None
        if u is None or node is None:
            raise NotFoundError(f'nodemetrics.metrics.k8s.io "{name}" not found',
                                details=status_details("nodes", GROUP, name))
        return node_metrics(node, u)
    sel = _selector(request)
    items = []
    for node in core.stored(NODES):
        n = (node.get("metadata") or {}).get("name")
        if n in by_name and sel.matches((node.get("metadata") or {}).get("labels")):
            items.append(node_metrics(node, by_name[n]))
    return _list("NodeMetrics", items)


def _pods(core: ApiCore, usage: list[PodUsage], namespace: str | None, name: str | None,
          request: web.Request) -> JsonDict:
    by_key = {(u.namespace, u.name): u for u in usage}
    if name is not None:
        u = by_key.get((namespace or "", name))
        pod = core.store.get(PODS.key(namespace, name)) if u is not None else None
        if u is None or pod is None:
            raise NotFoundError(f'podmetrics.metrics.k8s.io "{name}" not found',
                                details=status_details("pods", GROUP, name))
        return pod_metrics(pod, u)
    sel = _selector(request)
    items = []
    for pod in core.stored(PODS, namespace):
        meta = pod.get("metadata") or {}
        u = by_key.get((meta.get("namespace") or "", meta.get("name") or ""))
        if u is not None and sel.matches(meta.get("labels")):
            items.append(pod_metrics(pod, u))
    return _list("PodMetrics", items)
