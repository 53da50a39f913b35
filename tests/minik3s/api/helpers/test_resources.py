"""Pod requests as kube-scheduler counts them: the plain and non-zero variants, and the one-walk
`pod_requests_and_non_zero` the scheduler's PodInfo uses, over a table of pod shapes."""

from __future__ import annotations

from typing import Any

import pytest

from minik3s.api.helpers.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    pod_requests,
    pod_requests_and_non_zero,
)

Mi = 1 << 20


def _c(name: str, requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None,
       restart: str | None = None) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    c: dict[str, Any] = {"name": name, "resources": res}
    if restart:
        c["restartPolicy"] = restart
    return c


def _pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None,
         overhead: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers}
    if init is not None:
        spec["initContainers"] = init
    if overhead is not None:
        spec["overhead"] = overhead
    return {"spec": spec}


CASES = [
    # (id, pod, plain requests, non-zero requests)
    ("one container", _pod([_c("a", {"cpu": "100m", "memory": "500Mi"})]),
     {"cpu": 100, "memory": 500 * Mi}, {"cpu": 100, "memory": 500 * Mi}),
    ("no requests: defaults in the non-zero variant only", _pod([_c("a")]),
     {}, {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}),
    # upstream NonMissingContainerRequests: "override if un-set, but not if explicitly set to zero"
    ("an explicit zero cpu stays zero in the non-zero variant", _pod([_c("a", {"cpu": "0", "memory": "1Gi"})]),
     {"cpu": 0, "memory": 1 << 30}, {"cpu": 0, "memory": 1 << 30}),
    ("limits become requests", _pod([_c("a", None, {"cpu": "2", "nvidia.com/gpu": "1"})]),
     {"cpu": 2000, "nvidia.com/gpu": 1}, {"cpu": 2000, "memory": DEFAULT_MEMORY_REQUEST, "nvidia.com/gpu": 1}),
    ("two containers sum", _pod([_c("a", {"cpu": "100m"}), _c("b", {"cpu": "200m", "memory": "1Gi"})]),
     {"cpu": 300, "memory": 1 << 30}, {"cpu": 300, "memory": DEFAULT_MEMORY_REQUEST + (1 << 30)}),
    ("an init container larger than the containers", _pod([_c("a", {"cpu": "300m"})], [_c("i", {"cpu": "500m"})]),
     {"cpu": 500}, {"cpu": 500, "memory": DEFAULT_MEMORY_REQUEST}),
    ("a sidecar adds to everything after it",
     _pod([_c("a", {"cpu": "100m"})], [_c("s", {"cpu": "50m"}, restart="Always"), _c("i", {"cpu": "200m"})]),
     {"cpu": 250}, {"cpu": 250, "memory": 2 * DEFAULT_MEMORY_REQUEST}),
    ("overhead is added to both", _pod([_c("a", {"cpu": "1"})], overhead={"cpu": "250m", "memory": "120Mi"}),
     {"cpu": 1250, "memory": 120 * Mi}, {"cpu": 1250, "memory": DEFAULT_MEMORY_REQUEST + 120 * Mi}),
    ("no spec", {}, {}, {}),
]


@pytest.mark.parametrize(("pod", "plain", "non_zero"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_requests_table(pod: dict[str, Any], plain: dict[str, int], non_zero: dict[str, int]) -> None:
    assert pod_requests(pod) == plain
    assert pod_requests(pod, non_zero=True) == non_zero
    assert pod_requests_and_non_zero(pod) == (plain, non_zero)
