"""/metrics rendering as client_golang's expfmt writes it (`go_float`, `go_text`), checked against
Go's strconv.FormatFloat(v, 'g', -1, 64) outputs and a prometheus_client registry."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from apiserver.handlers.discovery import VERSION_BODY
from apiserver.handlers.metrics import go_float, go_text


@pytest.mark.parametrize(("value", "want"), [
    (0.0, "0"), (1.0, "1"), (-1.0, "-1"), (3.0, "3"), (0.005, "0.005"), (0.3, "0.3"), (0.0001, "0.0001"),
    (1e-05, "1e-05"), (100000.0, "100000"), (123456.0, "123456"), (1e6, "1e+06"), (1.5e6, "1.5e+06"),
    (1234567.0, "1.234567e+06"), (1796316441.5528653, "1.7963164415528653e+09"), (1e21, "1e+21"),
    (-2.5, "-2.5"), (math.inf, "+Inf"), (-math.inf, "-Inf"), (math.nan, "NaN"), (5e-324, "5e-324"),
])
def test_go_float(value: float, want: str) -> None:
    assert go_float(value) == want


def test_go_text_orders_and_formats_like_expfmt() -> None:
    reg = CollectorRegistry()
    c = Counter("apiserver_request_total", "Counter of requests.", ["verb", "code"], registry=reg)
    c.labels("LIST", "200").inc(3)
    c.labels("GET", "404").inc()
    h = Histogram("b_seconds", "A histogram.", ["v"], buckets=(0.005, 1), registry=reg)
    h.labels("z").observe(0.25)
    Gauge("a_gauge", 'with "quotes" and \\ back', registry=reg).set(1.5e6)
    assert go_text(generate_latest(reg)).decode() == (
        '# HELP a_gauge with "quotes" and \\\\ back\n'
        "# TYPE a_gauge gauge\n"
        "a_gauge 1.5e+06\n"
        "# HELP apiserver_request_total [STABLE] Counter of requests.\n"
        "# TYPE apiserver_request_total counter\n"
        'apiserver_request_total{code="200",verb="LIST"} 3\n'
        'apiserver_request_total{code="404",verb="GET"} 1\n'
        "# HELP b_seconds A histogram.\n"
        "# TYPE b_seconds histogram\n"
        'b_seconds_bucket{v="z",le="0.005"} 0\n'
        'b_seconds_bucket{v="z",le="1"} 1\n'
        'b_seconds_bucket{v="z",le="+Inf"} 1\n'
        'b_seconds_sum{v="z"} 0.25\n'
        'b_seconds_count{v="z"} 1\n')


def test_go_text_keeps_a_gauge_named_created_of_nothing() -> None:
    reg = CollectorRegistry()
    Gauge("things_created", "A gauge in its own right.", registry=reg).set(2)
    assert go_text(generate_latest(reg)) == (b"# HELP things_created A gauge in its own right.\n"
                                             b"# TYPE things_created gauge\nthings_created 2\n")


def test_version_body_is_marshal_indent() -> None:
    assert VERSION_BODY.startswith(b'{\n  "major": "1",\n  "minor": "33",\n  "emulationMajor": "1",\n')
    assert not VERSION_BODY.endswith(b"\n")
