"""/metrics on a real server: kube-scheduler's and kube-apiserver's metrics, upstream names and
labels, moving with what the cluster does (pods scheduled, rejected, gated; API requests)."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from minik3s.testing.wait import wait_for

PROFILE = "default-scheduler"


def scrape(http: httpx.Client) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    r = http.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for fam in text_string_to_metric_families(r.text):
        for s in fam.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def pod(name: str, **spec: object) -> dict[str, object]:
    body: dict[str, object] = {"containers": [{"name": "c", "image": "busybox"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def test_scheduler_metrics_move_with_scheduling(http: httpx.Client, ns: str) -> None:
    before = scrape(http)
    for i in range(3):
        http.post(f"/api/v1/namespaces/{ns}/pods", json=pod(f"ok-{i}")).raise_for_status()
    http.post(f"/api/v1/namespaces/{ns}/pods",
              json=pod("nowhere", nodeSelector={"metrics-test": "no-such-node"})).raise_for_status()
    http.post(f"/api/v1/namespaces/{ns}/pods",
              json=pod("held", schedulingGates=[{"name": "example.com/hold"}])).raise_for_status()

    def bound() -> bool:
        items = http.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]
        return sum(1 for p in items if p["spec"].get("nodeName")) == 3

    wait_for(bound, timeout=60)

    def rejected() -> dict[tuple[str, frozenset[tuple[str, str]]], float] | None:
        s = scrape(http)
        done = value(s, "scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE) > value(
            before, "scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE)
        return s if done else None

    after = wait_for(rejected, timeout=60)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) >= 3
    assert delta("scheduler_scheduling_attempt_duration_seconds_count", result="scheduled", profile=PROFILE) >= 3
    # upstream's first bucket is 1 ms, doubling, 15 buckets (last finite bound 16.384 s)
    assert ("scheduler_scheduling_attempt_duration_seconds_bucket",
            frozenset({("result", "scheduled"), ("profile", PROFILE), ("le", "16.384")})) in after
    assert delta("scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") >= 3
    assert delta("scheduler_pod_scheduling_attempts_count") >= 3
    # new pods enter activeQ (the gated one goes to unschedulablePods); the rejected one comes
    # back after its failed attempt
    assert delta("scheduler_queue_incoming_pods_total", queue="active", event="UnschedulablePodAdd") >= 4
    assert delta("scheduler_queue_incoming_pods_total", queue="unschedulable", event="UnschedulablePodAdd") >= 1
    assert delta("scheduler_queue_incoming_pods_total", queue="unschedulable", event="ScheduleAttemptFailure") >= 1
    assert value(after, "scheduler_pending_pods", queue="unschedulable") >= 1
    assert value(after, "scheduler_pending_pods", queue="gated") >= 1
    assert ("scheduler_pending_pods", frozenset({("queue", "active")})) in after
    assert ("scheduler_pending_pods", frozenset({("queue", "backoff")})) in after
    # the gated pod stops at PreEnqueue (SchedulingGates), the others pass it
    assert delta("scheduler_framework_extension_point_duration_seconds_count",
                 extension_point="PreEnqueue", status="UnschedulableAndUnresolvable", profile=PROFILE) >= 1
    for ep in ("PreEnqueue", "PreFilter", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind"):
        assert delta("scheduler_framework_extension_point_duration_seconds_count",
                     extension_point=ep, status="Success", profile=PROFILE) >= 3, ep
    # the unschedulable pod ran PostFilter (DefaultPreemption found no victims)
    assert delta("scheduler_framework_extension_point_duration_seconds_count",
                 extension_point="PostFilter", status="Unschedulable", profile=PROFILE) >= 1
    assert delta("scheduler_preemption_attempts_total") >= 1


def test_apiserver_request_metrics_count_requests_by_verb_resource_scope_and_code(
        http: httpx.Client, ns: str) -> None:
    before = scrape(http)
    http.post(f"/api/v1/namespaces/{ns}/configmaps",
              json={"metadata": {"name": "m"}, "data": {"a": "1"}}).raise_for_status()
    http.get(f"/api/v1/namespaces/{ns}/configmaps/m").raise_for_status()
    http.get(f"/api/v1/namespaces/{ns}/configmaps").raise_for_status()
    http.get("/api/v1/configmaps").raise_for_status()
    assert http.get(f"/api/v1/namespaces/{ns}/configmaps/missing").status_code == 404
    http.patch(f"/api/v1/namespaces/{ns}/configmaps/m", params={"dryRun": "All"}, json={"data": {"b": "2"}},
               headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()
    http.patch(f"/api/v1/namespaces/{ns}/configmaps/m", params={"fieldManager": "t"},
               content=b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": {"c": "3"}}',
               headers={"Content-Type": "application/apply-patch+yaml"}).raise_for_status()
    http.delete(f"/api/v1/namespaces/{ns}/configmaps/m").raise_for_status()
    assert http.get("/apis/no.such.group/v1/things").status_code == 404
    http.get(f"/api/v1/namespaces/{ns}/configmaps", params={"watch": "1", "timeoutSeconds": "1"}).raise_for_status()
    http.get("/healthz").raise_for_status()
    http.get("/apis/apps/v1/deployments").raise_for_status()
    after = scrape(http)

    def delta(code: str, *, verb: str, scope: str, dry_run: str = "", resource: str = "configmaps",
              subresource: str = "", group: str = "", version: str = "v1") -> float:
        labels = {"verb": verb, "dry_run": dry_run, "group": group, "version": version, "resource": resource,
                  "subresource": subresource, "scope": scope, "component": "apiserver"}
        return (value(after, "apiserver_request_total", **labels, code=code)
                - value(before, "apiserver_request_total", **labels, code=code))

    assert delta("201", verb="POST", scope="resource") == 1
    assert delta("200", verb="GET", scope="resource") == 1
    assert delta("404", verb="GET", scope="resource") == 1
    assert delta("200", verb="LIST", scope="namespace") >= 1
    assert delta("200", verb="LIST", scope="cluster") >= 1
    assert delta("200", verb="PATCH", scope="resource", dry_run="All") == 1
    assert delta("200", verb="APPLY", scope="resource") == 1
    assert delta("200", verb="DELETE", scope="resource") == 1
    assert delta("200", verb="WATCH", scope="namespace") == 1  # counted when the stream ended
    assert delta("200", verb="LIST", scope="cluster", group="apps", resource="deployments") == 1
    assert delta("200", verb="GET", scope="", resource="", subresource="/healthz", version="") >= 1
    # a path naming no served resource adds no label set
    assert not any(name == "apiserver_request_total" and ("group", "no.such.group") in labels
                   for name, labels in after)
    dur = {"verb": "POST", "dry_run": "", "group": "", "version": "v1", "resource": "configmaps",
           "subresource": "", "scope": "resource", "component": "apiserver"}
    assert value(after, "apiserver_request_duration_seconds_count", **dur) - value(
        before, "apiserver_request_duration_seconds_count", **dur) == 1
    assert ("apiserver_request_duration_seconds_bucket", frozenset({**dur, "le": "0.005"}.items())) in after
