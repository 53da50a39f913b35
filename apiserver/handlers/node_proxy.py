"""`nodes/{name}/proxy`: kube-apiserver's proxy to a node's kubelet, answered by the simulated
kubelets (layer L4, apiserver handlers).

Why: learners and operators read a node's kubelet through the API server
(`kubectl get --raw /api/v1/nodes/node-1/proxy/stats/summary`, `kubectl proxy` and a browser).
Upstream's ProxyREST (pkg/registry/core/node/rest/proxy.go) finds the node, dials
`<preferred address>:<kubeletEndpoint port>` and relays the kubelet's answer through its
URL-rewriting transport (k8s.io/apimachinery pkg/util/proxy); here the composition root's
`UsageProvider`, when it is also a `KubeletProvider`, gives each simulated kubelet's view and
this module plays both halves. apiserver never imports kubelet_sim.

Data flow: dispatch (`/api/v1/nodes/{id}/proxy[/path]`, after RBAC on `nodes/proxy`) -> `serve`:
  1. `{id}` is `[scheme:]name[:port]` (utilnet.SplitSchemeNamePort; 400 if malformed); the Node
     must exist (404 NotFound); an empty path is redirected to `.../proxy/` (GET/HEAD);
  2. the address: InternalIP, ExternalIP, then Hostname (K3s' --kubelet-preferred-address-types;
     none: upstream's 500 "no preferred addresses found"); the port: the node's
     `daemonEndpoints.kubeletEndpoint.Port` (10250 when unset);
  3. no simulated kubelet answers there (node not simulated, failed, another port): what a dead
     kubelet gives, the transport's 503 `error trying to reach service: dial tcp <ip>:<port>:
     connect: connection refused` (a stopped kubelet on a live host refuses the connection;
     a powered-off host would time out after 30 s, which helps nobody learning);
  4. else the kubelet's handler for the path (`_kubelet`), then the proxy transport's rewrites:
     an absolute `Location` gets the `/api/v1/nodes/{id}/proxy` prefix, an HTML body is
     re-serialised by its tokenizer (`<!doctype html>` -> `<!DOCTYPE html>`).

The kubelet's paths (pkg/kubelet/server/server.go, v1.33 defaults: enableDebuggingHandlers and
enableSystemLogHandler on, enableSystemLogQuery off):
  /healthz (+ /healthz/{ping,log,syncloop}, `?verbose`), /pods (PodList of the pods bound to the
  node, as its pod manager holds them: no kind/apiVersion per item, `kubernetes.io/config.seen`
  and `config.source: api` annotations), /stats/summary (Summary API, go-restful's indented
  JSON), /metrics/resource (Prometheus text), /configz (`{"kubeletconfig": ...}`), /logs/ (the
  node's /var/log as Go's FileServer lists it: `containers/` and `pods/`, the simulated CRI log
  files of each container run). Anything else is Go's ServeMux `404 page not found` (the
  removed /spec/ included); paths the simulation does not serve (/metrics, /metrics/cadvisor,
  /metrics/probes, /runningpods/, /exec/...) answer the same.

Summary values: cpu `usageNanoCores` is the rate metrics.k8s.io serves (so `kubectl top node`
agrees), `usageCoreNanoSeconds` the provider's cumulative counter; memory `workingSetBytes` the
sampled figure, and `usageBytes`/`rssBytes` the same number (a simulated container has no page
cache); `availableBytes` only where a limit exists (the node's capacity, a container's or a
pod's memory limit). Network, filesystem, rlimit, process and volume stats are unknown to the
simulation and left out, as the kubelet omits stats it cannot read.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from aiohttp import web

from apiserver.core import ApiCore
from apiserver.handlers.metrics import go_float
from apiserver.keys import USAGE
from apiserver.strategies.pod_rest import LogREST
from minik3s.api import errors
from minik3s.api.errors import ApiError, BadRequestError, ServiceUnavailableError
from minik3s.api.helpers.resources import quantity_to_int
from minik3s.api.metrics import KubeletProvider, KubeletStats, PodUsage
from minik3s.api.resources import NODES, PODS, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time, rfc3339

DEFAULT_KUBELET_PORT = 10250
# K3s' --kubelet-preferred-address-types (kubeadm's too)
PREFERRED_ADDRESS_TYPES = ("InternalIP", "ExternalIP", "Hostname")
_VALID_SCHEMES = ("", "http", "https")
_PROXY_PATH = re.compile(r"^/api/v1/nodes/([^/]+)/proxy(/.*)?$")
_HEALTH_CHECKS = ("ping", "log", "syncloop")
_TEXT = "text/plain; charset=utf-8"
# what promhttp answers a scraper that asks for no particular format (prometheus/common's
# FmtText with the default name-escaping scheme, as kubelet v1.33 is built)
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
_NOSNIFF = {"X-Content-Type-Options": "nosniff"}


@dataclass(slots=True)
class Reply:
    """What the kubelet answers: status, headers, body."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def _text(body: str, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, body.encode(), {"Content-Type": _TEXT, **(headers or {})})


def page_not_found() -> Reply:
    """Go's http.NotFound (the ServeMux's answer for a path no handler serves)."""
    return _text("404 page not found\n", 404, _NOSNIFF)


def _restful_error(status: int) -> Reply:
    """go-restful's answer for a route its web service does not have (no Content-Type set:
    Go sniffs text/plain)."""
    message = {404: "404: Page Not Found", 405: "405: Method Not Allowed"}[status]
    return _text(message, status)


def _redirect(location: str) -> Reply:
    """http.FileServer's localRedirect: a 301 with a Location only (relative ones stay so)."""
    return Reply(301, b"", {"Location": location})


def _mux_redirect(location: str) -> Reply:
    """Go's ServeMux sending `/logs` to `/logs/` (http.Redirect: a small HTML body)."""
    return Reply(301, f'<a href="{location}">Moved Permanently</a>.\n\n'.encode(),
                 {"Location": location, "Content-Type": "text/html; charset=utf-8"})


# ---- the proxy (kube-apiserver's side) ---------------------------------------------------------


def split_scheme_name_port(node_id: str) -> tuple[str, str, str]:
    """utilnet.SplitSchemeNamePort: `name`, `name:port` or `scheme:name:port`."""
    parts = node_id.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        scheme, name, port = "", "", ""
    if not name or scheme not in _VALID_SCHEMES:
        raise BadRequestError(f'invalid node request "{node_id}"')
    return scheme, name, port


def preferred_address(node: JsonDict) -> str:
    """nodeutil.GetPreferredNodeAddress over PREFERRED_ADDRESS_TYPES."""
    addresses = [a for a in ((node.get("status") or {}).get("addresses") or ()) if isinstance(a, dict)]
    for wanted in PREFERRED_ADDRESS_TYPES:
        for a in addresses:
            if a.get("type") == wanted and a.get("address"):
                return str(a["address"])
    known = " ".join(f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in addresses)
    raise ApiError(f"no preferred addresses found; known addresses: [{known}]", code=500, reason="")


def kubelet_port(node: JsonDict) -> int:
    port = (((node.get("status") or {}).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    return port if isinstance(port, int) and not isinstance(port, bool) and port > 0 else DEFAULT_KUBELET_PORT


def _join_host_port(host: str, port: int | str) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def clean_path(raw: str) -> str:
    """net.JoinPreservingTrailingSlash of the request's remainder: a cleaned absolute path,
    its trailing slash kept; "" when nothing follows `proxy`."""
    segments: list[str] = []
    for seg in raw.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if segments:
                segments.pop()
            continue
        segments.append(seg)
    if not segments:
        return "/" if raw.strip("/.") == "" and raw else ""
    out = "/" + "/".join(segments)
    return out + "/" if raw.endswith("/") else out


def proxy_target(request_path: str) -> tuple[str, str] | None:
    """(node id, path remainder) of `/api/v1/nodes/{id}/proxy[/...]`, else None."""
    m = _PROXY_PATH.match(request_path)
    if m is None:
        return None
    return m.group(1), m.group(2) or ""


def served_subresources(core: ApiCore) -> Callable[[ResourceInfo], list[str]]:
    """The subresources discovery lists: the core's, plus `nodes/proxy` (served here, not by a
    storage), in the sorted order kube-apiserver's installer registers paths."""

    def names(info: ResourceInfo) -> list[str]:
        out = core.subresource_names(info)
        if info.group == "" and info.resource == "nodes":
            return sorted({*out, "proxy"})
        return out

    return names


def _kubelets(request: web.Request) -> KubeletProvider | None:
    provider = request.app[USAGE]
    return provider if isinstance(provider, KubeletProvider) else None


async def serve(request: web.Request, core: ApiCore, node_id: str, remainder: str) -> web.StreamResponse:
    """Answer `/api/v1/nodes/{node_id}/proxy{remainder}` (RBAC already checked by dispatch)."""
    _scheme, name, port_req = split_scheme_name_port(node_id)
    node = core.store.get(NODES.key(None, name))
    if node is None:
        raise errors.not_found("nodes", "", name)
    path = clean_path(remainder)
    prefix = f"/api/v1/nodes/{node_id}/proxy"
    if not path:
        if request.method in ("GET", "HEAD"):
            query = f"?{request.query_string}" if request.query_string else ""
            return _response(_redirect(f"{prefix}/{query}"), prefix)
        path = "/"
    host = preferred_address(node)
    port = kubelet_port(node)
    provider = _kubelets(request)
    stats = provider.kubelet_stats(name) if provider is not None else None
    if stats is None or port_req not in ("", str(port)):
        dial_port = port_req or str(port)
        raise ServiceUnavailableError(
            f"error trying to reach service: dial tcp {_join_host_port(host, dial_port)}: connect: connection refused")
    reply = kubelet_reply(core, request.method, path, request.query, node, stats)
    return _response(reply, prefix)


def _response(reply: Reply, prefix: str) -> web.Response:
    """The proxy transport's rewrites (proxy.Transport), then the relayed answer."""
    headers = dict(reply.headers)
    body = reply.body
    location = headers.get("Location")
    if location is not None:
        if location.startswith("/") and not location.startswith(prefix):
            headers["Location"] = prefix + location
    elif headers.get("Content-Type", "").split(";", 1)[0].strip() == "text/html":
        body = body.replace(b"<!doctype html>", b"<!DOCTYPE html>", 1)
    resp = web.Response(status=reply.status, body=body)
    for k, v in headers.items():
        resp.headers[k] = v
    return resp


# ---- the kubelet's handlers -------------------------------------------------------------------


def kubelet_reply(core: ApiCore, method: str, path: str, query: Any, node: JsonDict, stats: KubeletStats) -> Reply:
    """The simulated kubelet's answer for `method path?query` (the v1.33 server's routes)."""
    if path == "/healthz" or path.startswith("/healthz/"):
        return healthz(path, query)
    if path in ("/pods", "/pods/"):
        if method != "GET":
            return _restful_error(405)
        return Reply(200, pod_list(_bound_pods(core, stats.node.name)), {"Content-Type": "application/json"})
    if path == "/stats":
        return _mux_redirect("/stats/")
    if path.startswith("/stats/"):
        if path.rstrip("/") != "/stats/summary":
            return _restful_error(404)
        if method not in ("GET", "POST"):
            return _restful_error(405)
        doc = summary(stats, node, _bound_pods(core, stats.node.name))
        return Reply(200, go_indent_json(doc), {"Content-Type": "application/json"})
    if path == "/metrics/resource":
        doc = summary(stats, node, _bound_pods(core, stats.node.name))
        return Reply(200, resource_metrics_text(doc).encode(), {"Content-Type": PROMETHEUS_TEXT})
    if path == "/configz":
        return Reply(200, orjson.dumps({"kubeletconfig": stats.config}),
                     {"Content-Type": "application/json", **_NOSNIFF})
    if path == "/logs":
        return _mux_redirect("/logs/")
    if path.startswith("/logs/"):
        if method != "GET":
            return _restful_error(405)
        return NodeLogs(core, _bound_pods(core, stats.node.name)).serve(path[len("/logs/"):])
    return page_not_found()


def healthz(path: str, query: Any) -> Reply:
    """k8s.io/apiserver healthz as the kubelet installs it: ping, log, syncloop."""
    if path != "/healthz":
        name = path[len("/healthz/"):]
        return _text("ok") if name in _HEALTH_CHECKS else page_not_found()
    excluded = {e for v in query.getall("exclude", []) for e in v.split(",") if e}
    lines = []
    for check in _HEALTH_CHECKS:
        if check in excluded:
            excluded.discard(check)
            lines.append(f"[+]{check} excluded: ok\n")
        else:
            lines.append(f"[+]{check} ok\n")
    if excluded:
        quoted = ", ".join(f'"{e}"' for e in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
    if "verbose" not in query:
        return _text("ok", headers=_NOSNIFF)
    return _text("".join(lines) + "healthz check passed\n", headers=_NOSNIFF)


def _bound_pods(core: ApiCore, node: str) -> list[JsonDict]:
    pods = [p for p in core.stored(PODS) if (p.get("spec") or {}).get("nodeName") == node]
    return sorted(pods, key=lambda p: ((p.get("metadata") or {}).get("namespace") or "",
                                       (p.get("metadata") or {}).get("name") or ""))


# ---- /pods ------------------------------------------------------------------------------------

CONFIG_SEEN = "kubernetes.io/config.seen"
CONFIG_SOURCE = "kubernetes.io/config.source"


def _first_seen(pod: JsonDict) -> str:
    """When the kubelet's pod config first saw the pod: when it was bound (PodScheduled), else
    its creation; Go's RFC3339Nano (no fraction for a whole second)."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled" and cond.get("status") == "True" and cond.get("lastTransitionTime"):
            return str(cond["lastTransitionTime"])
    return str((pod.get("metadata") or {}).get("creationTimestamp") or "")


def kubelet_pod(pod: JsonDict) -> JsonDict:
    """A pod as the kubelet's pod manager holds it: decoded without kind/apiVersion, annotated
    with its config source and first-seen time (annotations sorted, as Go encodes a map)."""
    out = {k: copy.deepcopy(v) for k, v in pod.items() if k not in ("kind", "apiVersion")}
    meta = out.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    annotations.setdefault(CONFIG_SEEN, _first_seen(pod))
    annotations[CONFIG_SOURCE] = "api"
    sorted_annotations = dict(sorted(annotations.items()))
    if "annotations" in meta:
        meta["annotations"] = sorted_annotations
        return out
    # metadata's Go order: annotations after labels (or after creationTimestamp)
    rebuilt: JsonDict = {}
    order = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
             "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels")
    for key in order:
        if key in meta:
            rebuilt[key] = meta[key]
    rebuilt["annotations"] = sorted_annotations
    for key, value in meta.items():
        if key not in rebuilt:
            rebuilt[key] = value
    out["metadata"] = rebuilt
    return out


def pod_list(pods: Iterable[JsonDict]) -> bytes:
    """encodePods: a v1 PodList, compact JSON ending in a newline (json.Encoder)."""
    doc = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [kubelet_pod(p) for p in pods]}
    return orjson.dumps(doc) + b"\n"


# ---- /stats/summary ----------------------------------------------------------------------------


def _quantity(value: Any, resource: str) -> int | None:
    if value is None:
        return None
    try:
        return quantity_to_int(resource, value)
    except (ValueError, TypeError, ArithmeticError):
        return None


def _cpu(at: datetime, milli: int, total_ns: int | None) -> JsonDict:
    out: JsonDict = {"time": at, "usageNanoCores": milli * 1_000_000}
    if total_ns is not None:
        out["usageCoreNanoSeconds"] = total_ns
    return out


def _memory(at: datetime, working_set: int, limit: int | None) -> JsonDict:
    out: JsonDict = {"time": at}
    if limit is not None:
        out["availableBytes"] = max(0, limit - working_set)
    out.update(usageBytes=working_set, workingSetBytes=working_set, rssBytes=working_set)
    return out


def _container_limits(pod: JsonDict) -> dict[str, int | None]:
    return {str(c.get("name")): _quantity(((c.get("resources") or {}).get("limits") or {}).get("memory"), "memory")
            for c in (pod.get("spec") or {}).get("containers") or ()}


def _container_started(pod: JsonDict, name: str, default: datetime) -> datetime:
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        if cs.get("name") == name:
            state = cs.get("state") or {}
            run = state.get("running") or state.get("terminated") or {}
            t = parse_time(run.get("startedAt"))
            if t is not None:
                return t
    return default


def _pod_stats(u: PodUsage, pod: JsonDict) -> JsonDict:
    meta = pod.get("metadata") or {}
    started = (parse_time((pod.get("status") or {}).get("startTime")) or parse_time(meta.get("creationTimestamp"))
               or u.timestamp)
    limits = _container_limits(pod)
    containers = []
    for c in u.containers:
        containers.append({"name": c.name, "startTime": _container_started(pod, c.name, started),
                           "cpu": _cpu(u.timestamp, c.cpu_milli, c.cpu_core_nanoseconds),
                           "memory": _memory(u.timestamp, c.memory_bytes, limits.get(c.name))})
    pod_limit = None
    if limits and all(v is not None for v in limits.values()):
        pod_limit = sum(v for v in limits.values() if v is not None)
    return {"podRef": {"name": u.name, "namespace": u.namespace, "uid": u.uid or str(meta.get("uid") or "")},
            "startTime": started, "containers": containers,
            "cpu": _cpu(u.timestamp, u.cpu_milli, u.cpu_core_nanoseconds),
            "memory": _memory(u.timestamp, u.memory_bytes, pod_limit)}


def summary(stats: KubeletStats, node: JsonDict, pods: list[JsonDict]) -> JsonDict:
    """The Summary (k8s.io/kubelet stats/v1alpha1) in Go field order; times are datetimes
    (`go_indent_json` writes them as metav1.Time, the metrics renderer keeps milliseconds)."""
    at = stats.node.timestamp
    by_uid = {str((p.get("metadata") or {}).get("uid") or ""): p for p in pods}
    by_name = {((p.get("metadata") or {}).get("namespace"), (p.get("metadata") or {}).get("name")): p for p in pods}
    pod_stats = []
    for u in sorted(stats.pods, key=lambda p: (p.namespace, p.name)):
        pod = by_uid.get(u.uid) if u.uid else by_name.get((u.namespace, u.name))
        if pod is not None:
            pod_stats.append(_pod_stats(u, pod))
    capacity = _quantity(((node.get("status") or {}).get("capacity") or {}).get("memory"), "memory")
    pods_container = {"name": "pods", "startTime": stats.started,
                      "cpu": _cpu(at, stats.pods_cpu_milli, stats.pods_cpu_core_nanoseconds),
                      "memory": _memory(at, stats.pods_memory_bytes, None)}
    return {"node": {"nodeName": stats.node.name, "systemContainers": [pods_container], "startTime": stats.started,
                     "cpu": _cpu(at, stats.node.cpu_milli, stats.node.cpu_core_nanoseconds),
                     "memory": _memory(at, stats.node.memory_bytes, capacity)},
            "pods": pod_stats}


def _json_default(value: Any) -> str:
    if isinstance(value, datetime):
        return rfc3339(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def go_indent_json(doc: Any) -> bytes:
    """go-restful's WriteAsJson (PrettyPrintResponses): json.MarshalIndent(v, "", " "), no
    trailing newline; datetimes as metav1.Time."""
    return json.dumps(doc, indent=1, ensure_ascii=False, default=_json_default).encode()


# ---- /metrics/resource -------------------------------------------------------------------------


def _label_value(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


@dataclass(frozen=True, slots=True)
class _Family:
    name: str
    help: str
    type: str


_FAMILIES = {f.name: f for f in (
    _Family("container_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the container in "
            "core-seconds", "counter"),
    _Family("container_memory_working_set_bytes", "[STABLE] Current working set of the container in bytes", "gauge"),
    _Family("container_start_time_seconds", "[STABLE] Start time of the container since unix epoch in seconds",
            "gauge"),
    _Family("node_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the node in core-seconds",
            "counter"),
    _Family("node_memory_working_set_bytes", "[STABLE] Current working set of the node in bytes", "gauge"),
    _Family("pod_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the pod in core-seconds",
            "counter"),
    _Family("pod_memory_working_set_bytes", "[STABLE] Current working set of the pod in bytes", "gauge"),
    _Family("resource_scrape_error", "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise",
            "gauge"),
)}

_Sample = tuple[tuple[tuple[str, str], ...], float, int | None]  # (labels, value, timestamp ms)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _epoch_ns(t: Any) -> int | None:
    """A Summary time as Unix nanoseconds: a datetime (microseconds), or already an int."""
    if isinstance(t, datetime):
        return (t - _EPOCH) // timedelta(microseconds=1) * 1000
    if isinstance(t, int) and not isinstance(t, bool):
        return t
    return None


def _ms(t: Any) -> int | None:
    """The sample timestamp Prometheus writes: Unix milliseconds (floored)."""
    ns = _epoch_ns(t)
    return ns // 1_000_000 if ns is not None else None


def _cpu_sample(stats: Any, labels: tuple[tuple[str, str], ...], out: list[_Sample]) -> None:
    if isinstance(stats, dict) and stats.get("usageCoreNanoSeconds") is not None:
        out.append((labels, stats["usageCoreNanoSeconds"] / 1e9, _ms(stats.get("time"))))


def _memory_sample(stats: Any, labels: tuple[tuple[str, str], ...], out: list[_Sample]) -> None:
    if isinstance(stats, dict) and stats.get("workingSetBytes") is not None:
        out.append((labels, float(stats["workingSetBytes"]), _ms(stats.get("time"))))


def _start_sample(start: Any, labels: tuple[tuple[str, str], ...], out: list[_Sample]) -> None:
    """container_start_time_seconds, unless the start is at or before the epoch (unset)."""
    ns = _epoch_ns(start)
    if ns is not None and ns // 1_000_000_000 > 0:
        out.append((labels, ns / 1e9, None))


def _collect(doc: JsonDict) -> dict[str, list[_Sample]]:
    """resourceMetricsCollector.CollectWithStability over a Summary (cpu and memory only)."""
    samples: dict[str, list[_Sample]] = {name: [] for name in _FAMILIES}
    node = doc.get("node") or {}
    _cpu_sample(node.get("cpu"), (), samples["node_cpu_usage_seconds_total"])
    _memory_sample(node.get("memory"), (), samples["node_memory_working_set_bytes"])
    for pod in doc.get("pods") or ():
        ref = pod.get("podRef") or {}
        pod_labels = (("namespace", str(ref.get("namespace", ""))), ("pod", str(ref.get("name", ""))))
        for c in pod.get("containers") or ():
            labels = (("container", str(c.get("name", ""))), *pod_labels)
            _start_sample(c.get("startTime"), labels, samples["container_start_time_seconds"])
            _cpu_sample(c.get("cpu"), labels, samples["container_cpu_usage_seconds_total"])
            _memory_sample(c.get("memory"), labels, samples["container_memory_working_set_bytes"])
        _cpu_sample(pod.get("cpu"), pod_labels, samples["pod_cpu_usage_seconds_total"])
        _memory_sample(pod.get("memory"), pod_labels, samples["pod_memory_working_set_bytes"])
    return samples


def resource_metrics_text(doc: JsonDict | None) -> str:
    """The kubelet's /metrics/resource in Prometheus text format 0.0.4, as the registry gathers
    it: families sorted by name, samples by label values, empty families left out; None (no
    summary) is a scrape error. `scrape_error`, deprecated in 1.29, is hidden in v1.33."""
    samples = _collect(doc) if doc is not None else {name: [] for name in _FAMILIES}
    samples["resource_scrape_error"] = [((), 0.0 if doc is not None else 1.0, None)]
    lines: list[str] = []
    for name in sorted(samples):
        rows = samples[name]
        if not rows:
            continue
        fam = _FAMILIES[name]
        lines.append(f"# HELP {name} {fam.help}")
        lines.append(f"# TYPE {name} {fam.type}")
        for labels, value, ts in sorted(rows, key=lambda r: tuple(v for _, v in r[0])):
            label_text = ",".join(f'{k}="{_label_value(v)}"' for k, v in labels)
            line = f"{name}{{{label_text}}}" if labels else name
            line += f" {go_float(value)}"
            if ts is not None:
                line += f" {ts}"
            lines.append(line)
    return "".join(f"{ln}\n" for ln in lines)


# ---- /logs/ ------------------------------------------------------------------------------------


def rfc3339_nano(t: datetime) -> str:
    """Go's time.RFC3339Nano (trailing zeros of the fraction dropped), as CRI log lines stamp."""
    t = t.astimezone(UTC)
    frac = f"{t.microsecond:06d}000".rstrip("0")
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def _dir_listing(entries: Iterable[str]) -> Reply:
    """Go's FileServer directory listing (net/http dirList), names sorted, directories with `/`."""
    body = ["<!doctype html>\n", '<meta name="viewport" content="width=device-width">\n', "<pre>\n"]
    for name in sorted(entries):
        text = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;") \
            .replace("'", "&#39;")
        body.append(f'<a href="{name}">{text}</a>\n')
    body.append("</pre>\n")
    return Reply(200, "".join(body).encode(), {"Content-Type": "text/html; charset=utf-8"})


@dataclass(frozen=True, slots=True)
class _LogFile:
    pod: JsonDict
    container: str
    previous: bool


class NodeLogs:
    """The node's /var/log as the kubelet's `/logs/` serves it (http.FileServer): `pods/` holds
    `<namespace>_<pod>_<uid>/<container>/<restartCount>.log` (the current run, and the previous
    one after a restart), `containers/` the `<pod>_<namespace>_<container>-<id>.log` links to
    the current runs. A file's content is its run's simulated output (pods/log's lines) in the
    CRI log format: `<RFC3339Nano> stdout F <line>`."""

    def __init__(self, core: ApiCore, pods: list[JsonDict]) -> None:
        self._core = core
        self.tree: dict[str, dict[str, _LogFile | None]] = {"": {"containers/": None, "pods/": None},
                                                          "containers": {}, "pods": {}}
        for pod in pods:
            self._add(pod)

    def _add(self, pod: JsonDict) -> None:
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        pod_dir = f"pods/{meta.get('namespace')}_{meta.get('name')}_{meta.get('uid')}"
        for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
            for cs in status.get(key) or ():
                cid = str(cs.get("containerID") or "")
                if not cid:
                    continue
                name = str(cs.get("name") or "")
                restarts = int(cs.get("restartCount") or 0)
                self.tree["pods"][pod_dir.split("/", 1)[1] + "/"] = None
                self.tree.setdefault(pod_dir, {})[name + "/"] = None
                files = self.tree.setdefault(f"{pod_dir}/{name}", {})
                files[f"{restarts}.log"] = _LogFile(pod, name, False)
                if restarts and ((cs.get("lastState") or {}).get("terminated") or {}).get("containerID"):
                    files[f"{restarts - 1}.log"] = _LogFile(pod, name, True)
                link = f"{meta.get('name')}_{meta.get('namespace')}_{name}-{cid.split('://', 1)[-1]}.log"
                self.tree["containers"][link] = _LogFile(pod, name, False)

    def serve(self, rel: str) -> Reply:
        """`rel`: the path after `/logs/` (FileServer's canonical-path redirects included)."""
        trailing = rel.endswith("/")
        key = rel.strip("/")
        if key in self.tree:
            if key and not trailing:
                return _redirect(key.rsplit("/", 1)[-1] + "/")
            return _dir_listing(self.tree[key])
        parent, _, base = key.rpartition("/")
        entry = self.tree.get(parent, {}).get(base)
        if entry is None:
            return page_not_found()
        if trailing:
            return _redirect("../" + base)
        return Reply(200, self._content(entry), {"Content-Type": _TEXT, "Accept-Ranges": "bytes"})

    def _content(self, f: _LogFile) -> bytes:
        meta = f.pod.get("metadata") or {}
        query = {"container": f.container, **({"previous": "true"} if f.previous else {})}
        info = self._core.registry.get("", "v1", "pods") or PODS
        try:
            plan = LogREST().plan(self._core, info, meta.get("namespace"), str(meta.get("name") or ""), query)
        except ApiError:
            return b""
        return "".join(f"{rfc3339_nano(ln.at)} stdout F {ln.text}\n" for ln in plan.lines).encode()
