"""What the simulated kubelet writes behind `nodes/{name}/proxy`, byte for byte: the
/metrics/resource Prometheus text (upstream's TestCollectResourceMetrics table,
pkg/kubelet/metrics/collectors/resource_metrics_test.go), Go's float formatting, go-restful's
indented JSON, the healthz page, the pod list items and the proxy's path and node-id rules."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from multidict import MultiDict

from apiserver.handlers.node_proxy import (
    clean_path,
    go_float,
    go_indent_json,
    healthz,
    kubelet_pod,
    preferred_address,
    resource_metrics_text,
    rfc3339_nano,
    split_scheme_name_port,
)
from minik3s.api.errors import ApiError, BadRequestError

# upstream's static timestamp, 2021-06-23 05:11:18.302091597 +0800, as Unix nanoseconds
STATIC = 1624396278302091597
SECOND = 1_000_000_000

SCRAPE_OK = """# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
"""


def _cpu(total: int | None) -> dict[str, Any]:
    return {"time": STATIC, "usageCoreNanoSeconds": total}


def _memory(working_set: int | None, usage: int | None = None) -> dict[str, Any]:
    return {"time": STATIC, "workingSetBytes": working_set, "usageBytes": usage}


def _pod(name: str, ns: str, containers: list[dict[str, Any]], **stats: Any) -> dict[str, Any]:
    return {"podRef": {"name": name, "namespace": ns}, "containers": containers, **stats}


def _container(name: str, start: int, cpu: int | None, ws: int | None) -> dict[str, Any]:
    return {"name": name, "startTime": start, "cpu": _cpu(cpu), "memory": _memory(ws)}


# Upstream's cases minus what v1.33's kubelet does not write for a simulated node: the swap
# families (no swap stats here) and node_/container_memory_commit_bytes (Windows, newer than
# v1.33); `scrape_error`, deprecated since 1.29.0, is hidden from 1.30 on.
CASES: list[tuple[str, dict[str, Any] | None, str]] = [
    ("error getting summary", None, """# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 1
"""),
    ("arbitrary node metrics", {"node": {"cpu": _cpu(10 * SECOND), "memory": _memory(1000, 2000)}},
     """# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 10 1624396278302
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1000 1624396278302
""" + SCRAPE_OK),
    ("nil node metrics", {"node": {"cpu": _cpu(None), "memory": _memory(None)}}, SCRAPE_OK),
    ("arbitrary container metrics for different container, pods and namespaces", {"pods": [
        _pod("pod_a", "namespace_a", [_container("container_a", STATIC - 30 * SECOND, 10 * SECOND, 1000),
                                      _container("container_b", STATIC - 120 * SECOND, 10 * SECOND, 1000)]),
        _pod("pod_b", "namespace_b", [_container("container_a", STATIC - 600 * SECOND, 10 * SECOND, 1000)]),
    ]}, """# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="container_a",namespace="namespace_a",pod="pod_a"} 10 1624396278302
container_cpu_usage_seconds_total{container="container_a",namespace="namespace_b",pod="pod_b"} 10 1624396278302
container_cpu_usage_seconds_total{container="container_b",namespace="namespace_a",pod="pod_a"} 10 1624396278302
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 1000 1624396278302
container_memory_working_set_bytes{container="container_a",namespace="namespace_b",pod="pod_b"} 1000 1624396278302
container_memory_working_set_bytes{container="container_b",namespace="namespace_a",pod="pod_a"} 1000 1624396278302
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="container_a",namespace="namespace_a",pod="pod_a"} 1.6243962483020916e+09
container_start_time_seconds{container="container_a",namespace="namespace_b",pod="pod_b"} 1.6243956783020916e+09
container_start_time_seconds{container="container_b",namespace="namespace_a",pod="pod_a"} 1.6243961583020916e+09
""" + SCRAPE_OK),
    ("arbitrary container metrics for negative StartTime", {"pods": [
        _pod("pod_a", "namespace_a", [_container("container_a", -STATIC, 10 * SECOND, 1000)]),
    ]}, """# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="container_a",namespace="namespace_a",pod="pod_a"} 10 1624396278302
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 1000 1624396278302
""" + SCRAPE_OK),
    ("nil container metrics", {"pods": [
        _pod("pod_a", "namespace_a", [_container("container_a", STATIC - 30 * SECOND, None, None)]),
        _pod("pod_b", "namespace_b", [_container("container_a", STATIC - 600 * SECOND, 10 * SECOND, 1000)]),
    ]}, """# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="container_a",namespace="namespace_b",pod="pod_b"} 10 1624396278302
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="container_a",namespace="namespace_b",pod="pod_b"} 1000 1624396278302
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="container_a",namespace="namespace_a",pod="pod_a"} 1.6243962483020916e+09
container_start_time_seconds{container="container_a",namespace="namespace_b",pod="pod_b"} 1.6243956783020916e+09
""" + SCRAPE_OK),
    ("arbitrary pod metrics", {"pods": [
        _pod("pod_a", "namespace_a", [], cpu=_cpu(10 * SECOND), memory=_memory(1000)),
    ]}, """# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="namespace_a",pod="pod_a"} 10 1624396278302
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="namespace_a",pod="pod_a"} 1000 1624396278302
""" + SCRAPE_OK),
    ("nil pod metrics", {"pods": [
        _pod("pod_a", "namespace_a", [], cpu=_cpu(None), memory=_memory(None)),
    ]}, SCRAPE_OK),
]


@pytest.mark.parametrize(("summary", "expected"), [(s, e) for _, s, e in CASES], ids=[n for n, _, _ in CASES])
def test_collect_resource_metrics(summary: dict[str, Any] | None, expected: str) -> None:
    assert resource_metrics_text(summary) == expected


def test_resource_metrics_from_a_summary_with_datetimes() -> None:
    """The live path: Summary times are datetimes (microseconds); cumulative nanoseconds become
    core-seconds, label values are escaped."""
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    doc = {"node": {"cpu": {"time": at, "usageCoreNanoSeconds": 12_345_678_901},
                    "memory": {"time": at, "workingSetBytes": 134_217_728}},
           "pods": [{"podRef": {"name": 'we"b', "namespace": "default"},
                     "containers": [{"name": "c\\1", "startTime": datetime(2026, 1, 2, 3, 0, 0, tzinfo=UTC),
                                     "cpu": {"time": at, "usageCoreNanoSeconds": 500_000_000},
                                     "memory": {"time": at, "workingSetBytes": 10_485_760}}]}]}
    text = resource_metrics_text(doc)
    assert "node_cpu_usage_seconds_total 12.345678901 1767323045678\n" in text
    assert "node_memory_working_set_bytes 1.34217728e+08 1767323045678\n" in text
    assert 'container_cpu_usage_seconds_total{container="c\\\\1",namespace="default",pod="we\\"b"} 0.5 ' \
           "1767323045678\n" in text
    assert 'container_start_time_seconds{container="c\\\\1",namespace="default",pod="we\\"b"} 1.7673228e+09\n' in text


@pytest.mark.parametrize(("value", "text"), [
    (10.0, "10"), (1.0, "1"), (0.0, "0"), (1000.0, "1000"), (100000.0, "100000"), (1e6, "1e+06"),
    (134217728.0, "1.34217728e+08"), (0.5, "0.5"), (0.0001, "0.0001"), (1e-05, "1e-05"), (123456.7, "123456.7"),
    (-2.5, "-2.5"), (1624396248.3020916, "1.6243962483020916e+09"), (float("inf"), "+Inf"), (float("nan"), "NaN"),
])
def test_go_float(value: float, text: str) -> None:
    """strconv.FormatFloat(v, 'g', -1, 64)."""
    assert go_float(value) == text


def test_summary_json_is_go_restful_indented() -> None:
    """json.MarshalIndent(v, "", " "): one space per level, no trailing newline, metav1.Time."""
    doc = {"node": {"nodeName": "n", "startTime": datetime(2026, 1, 2, 3, 4, 5, 999, tzinfo=UTC)}, "pods": []}
    assert go_indent_json(doc) == (b'{\n "node": {\n  "nodeName": "n",\n  "startTime": "2026-01-02T03:04:05Z"\n },'
                                   b'\n "pods": []\n}')


def test_healthz_page() -> None:
    assert healthz("/healthz", MultiDict()).body == b"ok"
    verbose = healthz("/healthz", MultiDict(verbose=""))
    assert verbose.body == b"[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n"
    assert verbose.headers == {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}
    excluded = healthz("/healthz", MultiDict([("verbose", ""), ("exclude", "log"), ("exclude", "nope")]))
    assert excluded.body == (b'[+]ping ok\n[+]log excluded: ok\n[+]syncloop ok\nwarn: some health checks cannot be '
                             b'excluded: no matches for "nope"\nhealthz check passed\n')
    assert healthz("/healthz/syncloop", MultiDict()).body == b"ok"
    missing = healthz("/healthz/etcd", MultiDict())
    assert (missing.status, missing.body) == (404, b"404 page not found\n")


def test_kubelet_pod_drops_type_meta_and_adds_config_annotations() -> None:
    pod = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": "p", "namespace": "d", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z",
                        "labels": {"a": "b"}, "managedFields": []},
           "status": {"conditions": [{"type": "PodScheduled", "status": "True",
                                      "lastTransitionTime": "2026-01-01T00:00:02Z"}]}}
    out = kubelet_pod(pod)
    assert list(out) == ["metadata", "status"]
    assert list(out["metadata"]) == ["name", "namespace", "uid", "creationTimestamp", "labels", "annotations",
                                     "managedFields"]
    assert out["metadata"]["annotations"] == {"kubernetes.io/config.seen": "2026-01-01T00:00:02Z",
                                              "kubernetes.io/config.source": "api"}
    assert "annotations" not in pod["metadata"]  # the stored object is untouched


@pytest.mark.parametrize(("raw", "path"), [
    ("", ""), ("/", "/"), ("/healthz", "/healthz"), ("/logs/", "/logs/"), ("//stats//summary", "/stats/summary"),
    ("/a/../healthz", "/healthz"), ("/./pods/", "/pods/"),
])
def test_clean_path(raw: str, path: str) -> None:
    """net.JoinPreservingTrailingSlash of the remainder after `proxy`."""
    assert clean_path(raw) == path


def test_node_ids() -> None:
    """utilnet.SplitSchemeNamePort."""
    assert split_scheme_name_port("node-1") == ("", "node-1", "")
    assert split_scheme_name_port("node-1:10250") == ("", "node-1", "10250")
    assert split_scheme_name_port("https:node-1:10250") == ("https", "node-1", "10250")
    for bad in ("ftp:node-1:1", ":10250", "a:b:c:d"):
        with pytest.raises(BadRequestError, match=f'invalid node request "{bad}"'):
            split_scheme_name_port(bad)


def test_preferred_address_order_and_failure() -> None:
    node = {"status": {"addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP",
                                                                               "address": "10.0.0.7"}]}}
    assert preferred_address(node) == "10.0.0.7"
    assert preferred_address({"status": {"addresses": [{"type": "Hostname", "address": "n1"}]}}) == "n1"
    with pytest.raises(ApiError) as e:
        preferred_address({"status": {"addresses": [{"type": "InternalDNS", "address": "n1.local"}]}})
    assert e.value.to_status() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                   "message": "no preferred addresses found; known addresses: [{InternalDNS n1.local}]",
                                   "code": 500}


def test_rfc3339_nano_drops_trailing_zeros() -> None:
    assert rfc3339_nano(datetime(2026, 1, 2, 3, 4, 5, 120000, tzinfo=UTC)) == "2026-01-02T03:04:05.12Z"
    assert rfc3339_nano(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05Z"

