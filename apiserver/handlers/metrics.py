"""/metrics: the Prometheus text exposition of this server, and kube-apiserver's request metrics
(layer L4).

kube-apiserver and the descheduler each serve `/metrics`; in one process the composition root
owns one `prometheus_client` registry and hands the apiserver a provider (`METRICS`) that
renders it, so the apiserver imports no component.

`RequestMetrics(registry)` adds upstream's two request metrics (k8s.io/apiserver
pkg/endpoints/metrics), recorded by `RequestMetrics.middleware`, the outermost middleware, once a
response is complete (a watch when its stream ends, as upstream's MonitorRequest):

- `apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}`
- `apiserver_request_duration_seconds{verb,dry_run,group,version,resource,subresource,scope,component}`
  (upstream's buckets, 5 ms to 60 s).

Labels as upstream derives them: `verb` GET / LIST / WATCH / POST / PUT / PATCH / APPLY (a patch
sent as application/apply-patch+yaml) / DELETE / DELETECOLLECTION / CONNECT (exec, attach,
portforward, proxy); `scope` `resource` for a named object or a create, `namespace` for a
collection in a namespace, `cluster` otherwise, empty for non-resource paths (which carry their
path in `subresource`); `dry_run` the sorted `dryRun` values (`invalid` when not `All`);
`component` `apiserver`. Paths naming no served resource (404s) and unknown non-resource paths are
not recorded, which keeps the label sets bounded (upstream records only its registered routes).
Worked example: `kubectl get pods -n default` -> `verb="LIST",group="",version="v1",
resource="pods",subresource="",scope="namespace",code="200"`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Iterable
from decimal import Decimal
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from apiserver.handlers.authz import authorize_request, parsed_request_attributes
from apiserver.keys import CORE, METRICS
from minik3s.api.errors import ApiError
from minik3s.api.user import ANONYMOUS

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

COMPONENT = "apiserver"
DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20,
                    30, 45, 60)
_CONNECT_SUBRESOURCES = frozenset({"exec", "attach", "portforward", "proxy"})
_NON_RESOURCE = frozenset({"/healthz", "/livez", "/readyz", "/version", "/openapi/v2", "/openapi/v3", "/api",
                           "/apis", "/metrics"})
_APPLY_PATCH = "application/apply-patch+yaml"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# component-base's stability prefix of HELP ("[STABLE] ", "[ALPHA] "...) for the families we
# serve whose upstream registration declares a StabilityLevel
# (k8s.io/apiserver/pkg/endpoints/metrics, pkg/scheduler/metrics/metrics.go)
STABILITY: dict[str, str] = {
    "apiserver_request_total": "STABLE",
    "apiserver_request_duration_seconds": "STABLE",
    "scheduler_schedule_attempts_total": "STABLE",
    "scheduler_scheduling_attempt_duration_seconds": "STABLE",
    "scheduler_preemption_victims": "STABLE",
    "scheduler_preemption_attempts_total": "STABLE",
    "scheduler_pending_pods": "STABLE",
    "scheduler_pod_scheduling_sli_duration_seconds": "BETA",
    "scheduler_pod_scheduling_attempts": "STABLE",
    "scheduler_framework_extension_point_duration_seconds": "STABLE",
    "scheduler_queue_incoming_pods_total": "STABLE",
    "scheduler_permit_wait_duration_seconds": "ALPHA",
}


async def serve_metrics(request: web.Request) -> web.Response:
    authorize_request(request)  # `get` on the non-resource path /metrics (system:monitoring has it)
    provider = request.app[METRICS]
    body = go_text(provider()) if provider is not None else b""
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


def go_float(v: float) -> str:
    """A sample value as expfmt's writeFloat writes it: strconv.FormatFloat(v, 'g', -1, 64), the
    shortest digits that round-trip, in %e form (two exponent digits at least) when the decimal
    exponent is below -4 or at least 6: `3`, `0.005`, `1.5e+06`, `1.796e+09`, `+Inf`."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0"
    sign = "-" if v < 0 else ""
    tup = Decimal(repr(abs(v))).normalize().as_tuple()
    digits = "".join(map(str, tup.digits))
    dp = len(digits) + int(tup.exponent)  # where the decimal point goes
    exp = dp - 1
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if dp <= 0:
        return f"{sign}0.{'0' * -dp}{digits}"
    if dp >= len(digits):
        return f"{sign}{digits}{'0' * (dp - len(digits))}"
    return f"{sign}{digits[:dp]}.{digits[dp:]}"


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _sample_line(sample: Sample, bound: str | None = None) -> str:
    """One sample as expfmt writes it: labels sorted by name (client_golang's MakeLabelPairs),
    `le`/`quantile` last, values in Go's float format."""
    pairs = sorted((k, v) for k, v in sample.labels.items() if k not in ("le", "quantile"))
    body = [f'{k}="{_escape_value(v)}"' for k, v in pairs]
    if bound is not None:
        body.append(f'{bound}="{go_float(float(sample.labels[bound]))}"')
    labels = "{" + ",".join(body) + "}" if body else ""
    return f"{sample.name}{labels} {go_float(sample.value)}"


def _series_key(sample: Sample) -> tuple[str, ...]:
    """NormalizeMetricFamilies' order of a family's metrics: their label values, by label name."""
    return tuple(v for _, v in sorted((k, v) for k, v in sample.labels.items() if k not in ("le", "quantile")))


def _family_lines(name: str, typ: str, samples: Iterable[Sample]) -> list[str]:
    """A family's series in label order; a histogram's (summary's) buckets (quantiles), then
    `_sum`, then `_count`, as client_golang writes them."""
    series: dict[tuple[str, ...], list[Sample]] = {}
    for sample in samples:
        series.setdefault(_series_key(sample), []).append(sample)
    lines: list[str] = []
    for key in sorted(series):
        group = series[key]
        if typ in ("histogram", "summary"):
            bound = "le" if typ == "histogram" else "quantile"
            lines += [_sample_line(x, bound) for x in group if bound in x.labels]
            for suffix in ("_sum", "_count"):
                lines += [_sample_line(x) for x in group if x.name == name + suffix]
        else:
            lines += [_sample_line(x) for x in group]
    return lines


def go_text(text: bytes) -> bytes:
    """prometheus_client's text exposition rewritten as client_golang's expfmt writes it
    (kube-apiserver's /metrics): families sorted by name, no `_created` series, Go float
    formatting, sorted labels, HELP with upstream's stability prefix. (prometheus_client's
    `disable_created_metrics()` is process-wide, so the `_created` gauges are dropped here.)"""
    parsed = list(text_string_to_metric_families(text.decode()))
    # the creation-time gauges prometheus_client adds beside counters, histograms and summaries
    created = {f"{f.name}_created" for f in parsed if f.type in ("counter", "histogram", "summary")}
    families = []
    for fam in parsed:
        if fam.name in created and fam.type == "gauge":
            continue
        counter_total = fam.type == "counter" and any(x.name == fam.name + "_total" for x in fam.samples)
        families.append((fam.name + "_total" if counter_total else fam.name, fam))
    out: list[str] = []
    for name, fam in sorted(families, key=lambda f: f[0]):
        doc = fam.documentation
        level = STABILITY.get(name)
        if level and not doc.startswith("["):
            doc = f"[{level}] {doc}"
        out.append(f"# HELP {name} {_escape_help(doc)}")
        out.append(f"# TYPE {name} {'untyped' if fam.type == 'unknown' else fam.type}")
        out += _family_lines(fam.name, fam.type, fam.samples)
    return ("\n".join(out) + "\n").encode() if out else b""



# RequestInfo verbs as kube-apiserver's metrics report them (the route's verb: POST for create...)
_REPORTED_VERBS = {"create": "POST", "update": "PUT", "patch": "PATCH", "get": "GET", "list": "LIST",
                   "watch": "WATCH", "delete": "DELETE", "deletecollection": "DELETECOLLECTION", "proxy": "CONNECT"}


def request_labels(request: web.Request) -> tuple[str, str, str, str, str, str, str] | None:
    """(verb, dry_run, group, version, resource, subresource, scope) of a request, or None when
    it names no served resource and no known non-resource path. Derived from the same request
    attributes the authorizer uses (upstream's RequestInfo), then upstream's CleanVerb/CleanScope."""
    try:
        attrs = parsed_request_attributes(request, ANONYMOUS)
    except ApiError:  # a path RequestInfo cannot read (`/api/v1/watch`): no resource named
        return None
    if not attrs.resource_request:
        p = attrs.path.rstrip("/") or "/"
        if p not in _NON_RESOURCE and p.split("/", 2)[1:2] not in (["api"], ["apis"]):
            return None
        return request.method, "", "", "", "", p, ""
    if request.app[CORE].registry.get(attrs.api_group, attrs.api_version, attrs.resource) is None:
        return None
    verb = _REPORTED_VERBS.get(attrs.verb, request.method)
    if attrs.subresource in _CONNECT_SUBRESOURCES:
        verb = "CONNECT"
    elif verb == "PATCH" and request.content_type == _APPLY_PATCH:
        verb = "APPLY"
    dry = request.query.getall("dryRun", [])
    if not dry:
        dry_run = ""
    elif all(v == "All" for v in dry):
        dry_run = "All"
    else:
        dry_run = "invalid"
    if attrs.name or verb == "POST":
        scope = "resource"
    elif attrs.namespace:
        scope = "namespace"
    else:
        scope = "cluster"
    return verb, dry_run, attrs.api_group, attrs.api_version, attrs.resource, attrs.subresource, scope


class RequestMetrics:
    """`apiserver_request_total` and `apiserver_request_duration_seconds` on `registry`."""

    def __init__(self, registry: CollectorRegistry, *, now: Callable[[], float] = time.perf_counter) -> None:
        labels = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
        self.total = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, "
            "scope, component, and HTTP response code.",
            labelnames=(*labels, "code"), registry=registry)
        self.duration = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, "
            "subresource, scope and component.",
            labelnames=labels, registry=registry, buckets=DURATION_BUCKETS)
        self._now = now
        self._children: dict[tuple[str, ...], Any] = {}

    def observe(self, labels: tuple[str, ...], code: int, seconds: float) -> None:
        key = (*labels, str(code))
        pair = self._children.get(key)
        if pair is None:
            full = (*labels, COMPONENT)
            pair = self._children[key] = (self.total.labels(*full, str(code)), self.duration.labels(*full))
        pair[0].inc()
        pair[1].observe(seconds)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        start = self._now()
        resp = await handler(request)
        labels = request_labels(request)
        # discovery paths (/api/v1, /apis/<group>/<version>) only when served, so unknown paths
        # cannot grow the label sets
        if labels is not None and (labels[6] or labels[5] in _NON_RESOURCE or resp.status == 200):
            self.observe(labels, resp.status, self._now() - start)
        return resp
