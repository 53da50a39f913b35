"""Upstream `pkg/printers/internalversion/printers_test.go` tables, ported to the JSON (v1) objects.

Each case names the upstream test function and case; the Go internal objects are written as the v1
JSON the API serves. Timestamps upstream are relative to `time.Now()`; here they are relative to a
fixed NOW (metav1.Time is serialised at second precision, so `Now().Add(1.9e9)` becomes NOW+1s,
still "0s").

kube-apiserver renders every Table with `GenerateOptions{Wide: true}` (pkg/printers/storage), so
the server always returns the priority-1 cells. For an upstream case without `Wide` we compare the
priority-0 cells (what `kubectl get` shows); for a `Wide` case the full row. Two upstream cases
print differently only when not wide (a clipped load-balancer list, PriorityClass's unconditional
PreemptionPolicy column); they are stated as the server prints them, with a comment.

The stored upstream test file is newer than v1.33 (it has DRA `Exactly` requests, v1.34+); every
table below is unchanged in substance since v1.33. Column definitions are checked against
upstream's `AddHandlers` (printers.go, v1.32/v1.33 era).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from apiserver.handlers.tables import SCALE_PRINTER, to_table
from minik3s.api.resources import ResourceInfo, ResourceRegistry, builtin_resources

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)
_INFO = {r.qualified: r for r in builtin_resources()}


def R(qualified: str) -> ResourceInfo:
    return _INFO[qualified]


def at(**kw: float) -> str:
    """A metav1.Time NOW+delta, serialised like the API does (RFC 3339, whole seconds)."""
    t = NOW + timedelta(**kw)
    return t.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro(**kw: float) -> str:
    """A metav1.MicroTime NOW+delta (microsecond precision)."""
    return (NOW + timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


SOON = at(seconds=1.9)           # time.Now().Add(1.9e9)
FIVE_MIN_AGO = at(seconds=-300)  # time.Now().Add(-3e11)
TEN_YEARS_AGO = at(hours=-10 * 365 * 24)


def table_of(info: ResourceInfo, objs: list[dict[str, Any]]) -> dict[str, Any]:
    return to_table(info, objs, now=NOW)


def rows_of(info: ResourceInfo, objs: list[dict[str, Any]], *, wide: bool) -> list[dict[str, Any]]:
    """Rows as upstream's test sees them: cells (all, or only priority-0 when not wide) and conditions."""
    table = table_of(info, objs)
    prio = [c["priority"] for c in table["columnDefinitions"]]
    out = []
    for row in table["rows"]:
        cells = row["cells"] if wide else [c for c, p in zip(row["cells"], prio, strict=True) if p == 0]
        out.append({"cells": cells, "conditions": row.get("conditions")})
    return out


def check(info: ResourceInfo, obj: dict[str, Any], want: list[Any], *, wide: bool = False,
          conditions: list[dict[str, Any]] | None = None) -> None:
    check_list(info, [obj], [want], wide=wide, conditions=[conditions])


def check_list(info: ResourceInfo, objs: list[dict[str, Any]], want: list[list[Any]], *, wide: bool = False,
               conditions: list[list[dict[str, Any]] | None] | None = None) -> None:
    got = rows_of(info, objs, wide=wide)
    assert [r["cells"] for r in got] == want
    # int64 vs bool vs string: Python's 1 == True would hide a wrong cell type
    assert [[type(c) for c in r["cells"]] for r in got] == [[type(c) for c in w] for w in want]
    assert [r["conditions"] for r in got] == (conditions or [None] * len(objs))


POD_SUCCESS = [{"type": "Completed", "status": "True", "reason": "Succeeded",
                "message": "The pod has completed successfully."}]
POD_FAILED = [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
RUNNING: dict[str, Any] = {"running": {}}


def finished(**kw: float) -> dict[str, Any]:
    return {"terminated": {"finishedAt": at(**kw)}}


# =================================================================================================
# TestPrintEvent / TestPrintEventsResultSorted
# =================================================================================================


def _event(name: str, **kw: Any) -> dict[str, Any]:
    ev: dict[str, Any] = {
        "metadata": {"name": name},
        "source": {"component": "kubelet", "host": "Node1"},
        "involvedObject": {"kind": "Deployment", "name": "Deployment Name", "fieldPath": "spec.containers{foo}"},
        "reason": "Event Reason", "message": "Message Data", "type": "Warning",
    }
    ev.update(kw)
    return ev


EVENT_CASES = [
    pytest.param(_event("event1", source={"component": "kubelet"},
                        involvedObject={"kind": "Pod", "name": "Pod Name", "fieldPath": "spec.containers{foo}"},
                        firstTimestamp=at(days=-3), lastTimestamp=at(days=-2), count=6, type="Normal"),
                 False, ["2d", "Normal", "Event Reason", "pod/Pod Name", "Message Data"],
                 id="basic-event-no-options"),
    pytest.param(_event("event2", firstTimestamp=at(days=-3), lastTimestamp=at(days=-2), count=6),
                 True, ["2d", "Warning", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
                        "kubelet, Node1", "Message Data", "3d", 6, "event2"],
                 id="basic-event-wide"),
    pytest.param(_event("event3", eventTime=micro(days=-3), lastTimestamp=at(days=-3), count=1),
                 True, ["3d", "Warning", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
                        "kubelet, Node1", "Message Data", "3d", 1, "event3"],
                 id="without-first-timestamp"),
    pytest.param(_event("event4", eventTime=micro(days=-3), firstTimestamp=at(days=-3), count=1),
                 True, ["3d", "Warning", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
                        "kubelet, Node1", "Message Data", "3d", 1, "event4"],
                 id="without-last-timestamp"),
    pytest.param(_event("event5", eventTime=micro(days=-3), count=1),
                 True, ["3d", "Warning", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
                        "kubelet, Node1", "Message Data", "3d", 1, "event5"],
                 id="without-first-and-last-timestamp"),
    pytest.param(_event("event6", eventTime=micro(days=-3),
                        series={"count": 2, "lastObservedTime": micro(days=-2)}),
                 True, ["2d", "Warning", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
                        "kubelet, Node1", "Message Data", "3d", 2, "event6"],
                 id="series-without-timestamps-and-count"),
    pytest.param(_event("event7", eventTime=micro(days=-3)),
                 True, ["3d", "Warning", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
                        "kubelet, Node1", "Message Data", "3d", 1, "event7"],
                 id="singleton-without-timestamps-and-count"),
    pytest.param(_event("event2", source={}, reportingComponent="kubelet", reportingInstance="test",
                        firstTimestamp=at(days=-3), lastTimestamp=at(days=-2), count=6),
                 True, ["2d", "Warning", "Event Reason", "deployment/Deployment Name", "spec.containers{foo}",
                        "kubelet, test", "Message Data", "3d", 6, "event2"],
                 id="empty-source-uses-reporting-controller-and-instance"),
]


@pytest.mark.parametrize(("obj", "wide", "want"), EVENT_CASES)
def test_print_event(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    check(R("events"), obj, want, wide=wide)


@pytest.mark.parametrize(("obj", "wide", "want"), EVENT_CASES)
def test_print_event_served_as_events_k8s_io(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    """The same events through events.k8s.io/v1 (upstream converts both to one internal type)."""
    v1 = {"metadata": obj["metadata"], "regarding": obj["involvedObject"], "reason": obj["reason"],
          "note": obj["message"], "type": obj["type"], "deprecatedSource": obj.get("source"),
          "deprecatedFirstTimestamp": obj.get("firstTimestamp"), "deprecatedLastTimestamp": obj.get("lastTimestamp"),
          "deprecatedCount": obj.get("count"), "eventTime": obj.get("eventTime"),
          "reportingController": obj.get("reportingComponent"), "reportingInstance": obj.get("reportingInstance")}
    if "series" in obj:
        v1["series"] = obj["series"]
    info = ResourceRegistry().get("events.k8s.io", "v1", "events")
    assert info is not None
    check(info, v1, want, wide=wide)


def test_print_events_result_sorted() -> None:
    """TestPrintEventsResultSorted: rows keep the list's order (Message is cell 4 when not wide)."""
    items = [
        {"metadata": {"name": ""}, "source": {"component": c}, "message": m, "firstTimestamp": t,
         "lastTimestamp": t, "count": 1, "type": "Normal", "involvedObject": {}}
        for c, m, t in (("kubelet", "Item 1", "2014-01-15T00:00:00Z"), ("scheduler", "Item 2", "1987-06-17T00:00:00Z"),
                        ("kubelet", "Item 3", "2002-12-25T00:00:00Z"))
    ]
    rows = rows_of(R("events"), items, wide=False)
    assert len(rows) == 3
    assert [r["cells"][4] for r in rows] == ["Item 1", "Item 2", "Item 3"]


# =================================================================================================
# TestPrintNamespace / TestPrintSecret / TestPrintServiceAccount
# =================================================================================================


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "namespace1", "creationTimestamp": SOON}, "status": {"phase": "FooStatus"}},
                 ["namespace1", "FooStatus", "0s"], id="namespace-with-status-and-age"),
    pytest.param({"metadata": {"name": "namespace2"}}, ["namespace2", "", "<unknown>"],
                 id="namespace-without-status-or-age"),
])
def test_print_namespace(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("namespaces"), obj, want)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "secret1", "creationTimestamp": SOON},
                  "type": "kubernetes.io/service-account-token", "data": {"token": "c2VjcmV0IGRhdGE="}},
                 ["secret1", "kubernetes.io/service-account-token", 1, "0s"], id="secret-with-type-data-age"),
    pytest.param({"metadata": {"name": "secret1", "creationTimestamp": SOON},
                  "type": "kubernetes.io/service-account-token"},
                 ["secret1", "kubernetes.io/service-account-token", 0, "0s"], id="secret-without-data"),
])
def test_print_secret(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("secrets"), obj, want)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "sa1", "creationTimestamp": SOON}, "secrets": []},
                 ["sa1", 0, "0s"], id="service-account-without-secrets"),
    pytest.param({"metadata": {"name": "sa1", "creationTimestamp": SOON},
                  "secrets": [{"name": "Secret1"}, {"name": "Secret2"}]},
                 ["sa1", 2, "0s"], id="service-account-with-two-secrets"),
])
def test_print_service_account(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("serviceaccounts"), obj, want)


# =================================================================================================
# TestPrintNode*
# =================================================================================================


def _node(name: str, *, conditions: list[dict[str, Any]] | None = None, unschedulable: bool = False,
          labels: dict[str, str] | None = None, node_info: dict[str, str] | None = None,
          addresses: list[dict[str, str]] | None = None) -> dict[str, Any]:
    n: dict[str, Any] = {"metadata": {"name": name}, "spec": {}, "status": {}}
    if labels:
        n["metadata"]["labels"] = labels
    if unschedulable:
        n["spec"]["unschedulable"] = True
    if conditions is not None:
        n["status"]["conditions"] = conditions
    if node_info is not None:
        n["status"]["nodeInfo"] = node_info
    if addresses is not None:
        n["status"]["addresses"] = addresses
    return n


READY_TRUE = {"type": "Ready", "status": "True"}
READY_FALSE = {"type": "Ready", "status": "False"}
EXT_1111 = [{"type": "ExternalIP", "address": "1.1.1.1"}]


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_node("foo1", conditions=[READY_TRUE]), ["foo1", "Ready", "<none>", "<unknown>", ""], id="foo1"),
    pytest.param(_node("foo2", conditions=[READY_TRUE], unschedulable=True),
                 ["foo2", "Ready,SchedulingDisabled", "<none>", "<unknown>", ""], id="foo2"),
    pytest.param(_node("foo3", conditions=[READY_TRUE, READY_TRUE]),
                 ["foo3", "Ready", "<none>", "<unknown>", ""], id="foo3"),
    pytest.param(_node("foo4", conditions=[READY_FALSE]), ["foo4", "NotReady", "<none>", "<unknown>", ""], id="foo4"),
    pytest.param(_node("foo5", conditions=[READY_FALSE], unschedulable=True),
                 ["foo5", "NotReady,SchedulingDisabled", "<none>", "<unknown>", ""], id="foo5"),
    pytest.param(_node("foo6", conditions=[{"type": "InvalidValue", "status": "True"}]),
                 ["foo6", "Unknown", "<none>", "<unknown>", ""], id="foo6"),
    pytest.param(_node("foo7", conditions=[{}]), ["foo7", "Unknown", "<none>", "<unknown>", ""], id="foo7"),
    pytest.param(_node("foo8", conditions=[{"type": "InvalidValue", "status": "True"}], unschedulable=True),
                 ["foo8", "Unknown,SchedulingDisabled", "<none>", "<unknown>", ""], id="foo8"),
    pytest.param(_node("foo9", conditions=[{}], unschedulable=True),
                 ["foo9", "Unknown,SchedulingDisabled", "<none>", "<unknown>", ""], id="foo9"),
])
def test_print_node_status(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("nodes"), obj, want)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_node("foo9"), ["foo9", "Unknown", "<none>", "<unknown>", ""], id="no-labels"),
    pytest.param(_node("foo10", labels={"node-role.kubernetes.io/master": "",
                                        "node-role.kubernetes.io/control-plane": "",
                                        "node-role.kubernetes.io/proxy": "", "kubernetes.io/role": "node"}),
                 ["foo10", "Unknown", "control-plane,master,node,proxy", "<unknown>", ""], id="several-roles"),
    pytest.param(_node("foo11", labels={"kubernetes.io/role": "node"}),
                 ["foo11", "Unknown", "node", "<unknown>", ""], id="legacy-role-label"),
])
def test_print_node_role(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("nodes"), obj, want)


def _wide_node(name: str, internal: str, external: str, os_image: str = "<unknown>", kernel: str = "<unknown>",
               runtime: str = "<unknown>") -> list[Any]:
    return [name, "Unknown", "<none>", "<unknown>", "", internal, external, os_image, kernel, runtime]


@pytest.mark.parametrize(("obj", "want"), [
    # TestPrintNodeOSImage
    pytest.param(_node("foo1", node_info={"osImage": "fake-os-image"}, addresses=EXT_1111),
                 _wide_node("foo1", "<none>", "1.1.1.1", os_image="fake-os-image"), id="os-image/foo1"),
    pytest.param(_node("foo2", node_info={"kernelVersion": "fake-kernel-version"}, addresses=EXT_1111),
                 _wide_node("foo2", "<none>", "1.1.1.1", kernel="fake-kernel-version"), id="os-image/foo2"),
    # TestPrintNodeKernelVersion
    pytest.param(_node("foo1", node_info={"kernelVersion": "fake-kernel-version"}, addresses=EXT_1111),
                 _wide_node("foo1", "<none>", "1.1.1.1", kernel="fake-kernel-version"), id="kernel-version/foo1"),
    pytest.param(_node("foo2", node_info={"osImage": "fake-os-image"}, addresses=EXT_1111),
                 _wide_node("foo2", "<none>", "1.1.1.1", os_image="fake-os-image"), id="kernel-version/foo2"),
    # TestPrintNodeContainerRuntimeVersion
    pytest.param(_node("foo1", node_info={"containerRuntimeVersion": "foo://1.2.3"}, addresses=EXT_1111),
                 _wide_node("foo1", "<none>", "1.1.1.1", runtime="foo://1.2.3"), id="container-runtime/foo1"),
    pytest.param(_node("foo2", node_info={}, addresses=EXT_1111),
                 _wide_node("foo2", "<none>", "1.1.1.1"), id="container-runtime/foo2"),
    # TestPrintNodeExternalIP
    pytest.param(_node("foo1", addresses=EXT_1111), _wide_node("foo1", "<none>", "1.1.1.1"), id="external-ip/foo1"),
    pytest.param(_node("foo2", addresses=[{"type": "InternalIP", "address": "1.1.1.1"}]),
                 _wide_node("foo2", "1.1.1.1", "<none>"), id="external-ip/foo2"),
    pytest.param(_node("foo3", addresses=[{"type": "ExternalIP", "address": "2.2.2.2"},
                                          {"type": "InternalIP", "address": "3.3.3.3"},
                                          {"type": "ExternalIP", "address": "4.4.4.4"}]),
                 _wide_node("foo3", "3.3.3.3", "2.2.2.2"), id="external-ip/foo3-first-of-each"),
    # TestPrintNodeInternalIP
    pytest.param(_node("foo1", addresses=[{"type": "InternalIP", "address": "1.1.1.1"}]),
                 _wide_node("foo1", "1.1.1.1", "<none>"), id="internal-ip/foo1"),
    pytest.param(_node("foo2", addresses=EXT_1111), _wide_node("foo2", "<none>", "1.1.1.1"), id="internal-ip/foo2"),
    pytest.param(_node("foo3", addresses=[{"type": "InternalIP", "address": "2.2.2.2"},
                                          {"type": "ExternalIP", "address": "3.3.3.3"},
                                          {"type": "InternalIP", "address": "4.4.4.4"}]),
                 _wide_node("foo3", "2.2.2.2", "3.3.3.3"), id="internal-ip/foo3-first-of-each"),
])
def test_print_node_wide(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("nodes"), obj, want, wide=True)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_node("127.0.0.1", conditions=None), ["127.0.0.1", "Unknown", "<none>", "<unknown>", ""],
                 id="ip-as-name"),
    pytest.param(_node(""), ["", "Unknown", "<none>", "<unknown>", ""], id="empty-name"),
])
def test_print_node_name(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("nodes"), obj, want)


# =================================================================================================
# TestPrintIngress / TestPrintIngressClass
# =================================================================================================


def test_print_ingress() -> None:
    obj = {"metadata": {"name": "test1", "creationTimestamp": TEN_YEARS_AGO},
           "spec": {"ingressClassName": "foo",
                    "defaultBackend": {"service": {"name": "default-backend",
                                                   "port": {"name": "default-backend", "number": 80}}}},
           "status": {"loadBalancer": {"ingress": [{"ip": "2.3.4.5", "hostname": "localhost.localdomain"}]}}}
    check(R("ingresses.networking.k8s.io"), obj, ["test1", "foo", "*", "2.3.4.5", "80", "10y"])


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "test1", "creationTimestamp": TEN_YEARS_AGO},
                  "spec": {"controller": "example.com/controller",
                           "parameters": {"kind": "customgroup", "name": "example"}}},
                 ["test1", "example.com/controller", "customgroup/example", "10y"], id="example with params"),
    pytest.param({"metadata": {"name": "test1", "creationTimestamp": TEN_YEARS_AGO},
                  "spec": {"controller": "example.com/controller",
                           "parameters": {"apiGroup": "example.com", "kind": "customgroup", "name": "example"}}},
                 ["test1", "example.com/controller", "customgroup.example.com/example", "10y"],
                 id="example with params + API Group"),
    pytest.param({"metadata": {"name": "test2", "creationTimestamp": at(hours=-11 * 365 * 24)},
                  "spec": {"controller": "example.com/controller2"}},
                 ["test2", "example.com/controller2", "<none>", "11y"], id="example without params"),
])
def test_print_ingress_class(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("ingressclasses.networking.k8s.io"), obj, want)


# =================================================================================================
# TestPrintServiceLoadBalancer / TestPrintService / TestPrintServiceList
# =================================================================================================


def _svc(name: str, spec: dict[str, Any], lb: list[dict[str, str]] | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"metadata": {"name": name}, "spec": spec}
    if lb is not None:
        s["status"] = {"loadBalancer": {"ingress": lb}}
    return s


THREE_PORTS = [{"port": 80, "protocol": "TCP"}, {"port": 8090, "protocol": "UDP"}, {"port": 8000, "protocol": "TCP"}]
THREE_LB = [{"ip": "2.3.4.5"}, {"ip": "3.4.5.6"}, {"ip": "5.6.7.8", "hostname": "host5678"}]


@pytest.mark.parametrize(("obj", "wide", "want"), [
    pytest.param(_svc("service1", {"clusterIPs": ["1.2.3.4"], "type": "LoadBalancer",
                                   "ports": [{"port": 80, "protocol": "TCP"}]}, [{"ip": "2.3.4.5"}, {"ip": "3.4.5.6"}]),
                 False, ["service1", "LoadBalancer", "1.2.3.4", "2.3.4.5,3.4.5.6", "80/TCP", "<unknown>"],
                 id="multiple-external-ips"),
    pytest.param(_svc("service2", {"clusterIPs": ["1.3.4.5"], "type": "LoadBalancer",
                                   "ports": [{"port": 80, "protocol": "TCP"}, {"port": 8090, "protocol": "UDP"},
                                             {"port": 8000, "protocol": "TCP"}, {"port": 7777, "protocol": "SCTP"}]}),
                 False, ["service2", "LoadBalancer", "1.3.4.5", "<pending>", "80/TCP,8090/UDP,8000/TCP,7777/SCTP",
                         "<unknown>"], id="pending-external-ip"),
    pytest.param(_svc("service3", {"clusterIPs": ["1.4.5.6"], "type": "LoadBalancer", "ports": THREE_PORTS},
                      [{"ip": "2.3.4.5"}]),
                 False, ["service3", "LoadBalancer", "1.4.5.6", "2.3.4.5", "80/TCP,8090/UDP,8000/TCP", "<unknown>"],
                 id="multiple-ports"),
    # upstream (not wide) clips to "2.3.4.5,3.4.5..."; the server renders Wide, which never clips
    pytest.param(_svc("service4", {"clusterIPs": ["1.5.6.7"], "type": "LoadBalancer", "ports": THREE_PORTS},
                      THREE_LB),
                 False, ["service4", "LoadBalancer", "1.5.6.7", "2.3.4.5,3.4.5.6,5.6.7.8", "80/TCP,8090/UDP,8000/TCP",
                         "<unknown>"], id="long-external-ip-list-as-served-wide"),
    pytest.param(_svc("service4", {"clusterIPs": ["1.5.6.7"], "type": "LoadBalancer", "ports": THREE_PORTS,
                                   "selector": {"foo": "bar"}}, THREE_LB),
                 True, ["service4", "LoadBalancer", "1.5.6.7", "2.3.4.5,3.4.5.6,5.6.7.8", "80/TCP,8090/UDP,8000/TCP",
                        "<unknown>", "foo=bar"], id="wide-includes-selector"),
])
def test_print_service_load_balancer(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    check(R("services"), obj, want, wide=wide)


@pytest.mark.parametrize(("obj", "wide", "want"), [
    pytest.param(_svc("test1", {"type": "ClusterIP", "ports": [{"protocol": "tcp", "port": 2233}],
                                "clusterIPs": ["10.9.8.7"], "selector": {"foo": "bar"}}),
                 False, ["test1", "ClusterIP", "10.9.8.7", "<none>", "2233/tcp", "<unknown>"], id="cluster-ip"),
    pytest.param(_svc("test1", {"type": "ClusterIP", "ports": [{"protocol": "tcp", "port": 2233}],
                                "clusterIPs": ["10.9.8.7"], "selector": {"foo": "bar"}}),
                 True, ["test1", "ClusterIP", "10.9.8.7", "<none>", "2233/tcp", "<unknown>", "foo=bar"],
                 id="wide-includes-selector"),
    pytest.param(_svc("test2", {"type": "NodePort", "ports": [{"protocol": "tcp", "port": 8888, "nodePort": 9999}],
                                "clusterIPs": ["10.9.8.7"]}),
                 False, ["test2", "NodePort", "10.9.8.7", "<none>", "8888:9999/tcp", "<unknown>"], id="node-port"),
    pytest.param(_svc("test3", {"type": "LoadBalancer", "ports": [{"protocol": "tcp", "port": 8888}],
                                "clusterIPs": ["10.9.8.7"]}),
                 False, ["test3", "LoadBalancer", "10.9.8.7", "<pending>", "8888/tcp", "<unknown>"],
                 id="load-balancer"),
    pytest.param(_svc("test4", {"type": "LoadBalancer", "ports": [{"protocol": "tcp", "port": 8888}],
                                "clusterIPs": ["10.9.8.7"], "externalIPs": ["80.11.12.10"]}),
                 False, ["test4", "LoadBalancer", "10.9.8.7", "80.11.12.10", "8888/tcp", "<unknown>"],
                 id="load-balancer-single-external-ip-no-status"),
    pytest.param(_svc("test5", {"type": "LoadBalancer", "ports": [{"protocol": "tcp", "port": 8888}],
                                "clusterIPs": ["10.9.8.7"], "externalIPs": ["80.11.12.10"]},
                      [{"ip": "3.4.5.6", "hostname": "test.cluster.com"}]),
                 False, ["test5", "LoadBalancer", "10.9.8.7", "3.4.5.6,80.11.12.10", "8888/tcp", "<unknown>"],
                 id="load-balancer-single-external-ip"),
    pytest.param(_svc("test6", {"type": "LoadBalancer", "ports": [{"protocol": "tcp", "port": 8888}],
                                "clusterIPs": ["10.9.8.7"], "externalIPs": ["80.11.12.10", "80.11.12.11"]},
                      [{"ip": "2.3.4.5", "hostname": "test.cluster.local"},
                       {"ip": "3.4.5.6", "hostname": "test.cluster.com"}]),
                 False, ["test6", "LoadBalancer", "10.9.8.7", "2.3.4.5,3.4.5.6,80.11.12.10,80.11.12.11", "8888/tcp",
                         "<unknown>"], id="load-balancer-multiple-external-ips"),
    pytest.param(_svc("test7", {"type": "ExternalName", "externalName": "my.database.example.com"}),
                 False, ["test7", "ExternalName", "<none>", "my.database.example.com", "<none>", "<unknown>"],
                 id="external-name"),
])
def test_print_service(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    check(R("services"), obj, want, wide=wide)


def test_print_service_list() -> None:
    objs = [_svc("service1", {"type": "ClusterIP", "ports": [{"protocol": "tcp", "port": 2233}],
                              "clusterIPs": ["10.9.8.7"]}),
            _svc("service2", {"type": "NodePort", "ports": [{"protocol": "udp", "port": 5566}],
                              "clusterIPs": ["1.2.3.4"]})]
    check_list(R("services"), objs, [["service1", "ClusterIP", "10.9.8.7", "<none>", "2233/tcp", "<unknown>"],
                                     ["service2", "NodePort", "1.2.3.4", "<none>", "5566/udp", "<unknown>"]])


# =================================================================================================
# TestPrintPod / TestPrintPodWithRestartableInitContainer / TestPrintPodwide / TestPrintPodConditions
# TestPrintPodList / TestPrintNonTerminatedPod
# =================================================================================================


def _pod(name: str, *, containers: int | list[dict[str, Any]] = 1, init: int | list[dict[str, Any]] = 0,
         phase: str | None = None, reason: str | None = None, statuses: list[dict[str, Any]] | None = None,
         init_statuses: list[dict[str, Any]] | None = None, conditions: list[dict[str, Any]] | None = None,
         deleted: bool = False) -> dict[str, Any]:
    def spec_list(v: int | list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"name": ""} for _ in range(v)] if isinstance(v, int) else v

    p: dict[str, Any] = {"metadata": {"name": name}, "spec": {"containers": spec_list(containers)}, "status": {}}
    if init:
        p["spec"]["initContainers"] = spec_list(init)
    if deleted:
        p["metadata"]["deletionTimestamp"] = at(seconds=-10)
    for key, val in (("phase", phase), ("reason", reason), ("containerStatuses", statuses),
                     ("initContainerStatuses", init_statuses), ("conditions", conditions)):
        if val is not None:
            p["status"][key] = val
    return p


def cs(*, ready: bool = False, restarts: int = 0, state: dict[str, Any] | None = None,
       last: dict[str, Any] | None = None, name: str | None = None, started: bool | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"ready": ready, "restartCount": restarts, "state": state or {}}
    if last is not None:
        s["lastState"] = last
    if name is not None:
        s["name"] = name
    if started is not None:
        s["started"] = started
    return s


WAITING: dict[str, Any] = {"waiting": {}}
ALWAYS = "Always"


@pytest.mark.parametrize(("obj", "want", "conditions"), [
    pytest.param(_pod("test1", containers=2, phase="podPhase",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(restarts=3)]),
                 ["test1", "1/2", "podPhase", "6", "<unknown>"], None, id="test1-ready-and-restarts"),
    pytest.param(_pod("test2", containers=2, phase="podPhase",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING),
                                cs(state={"waiting": {"reason": "ContainerWaitingReason"}}, restarts=3)]),
                 ["test2", "1/2", "ContainerWaitingReason", "6", "<unknown>"], None,
                 id="test2-container-error-overwrites-phase"),
    pytest.param(_pod("test3", containers=2, phase="podPhase",
                      statuses=[cs(state={"waiting": {"reason": "ContainerWaitingReason"}}, restarts=3),
                                cs(state={"terminated": {"reason": "ContainerTerminatedReason"}}, restarts=3)]),
                 ["test3", "0/2", "ContainerWaitingReason", "6", "<unknown>"], None,
                 id="test3-first-container-overwrites-the-rest"),
    pytest.param(_pod("test4", containers=2, phase="podPhase",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(ready=True, restarts=3)]),
                 ["test4", "1/2", "podPhase", "6", "<unknown>"], None, id="test4-ready-is-not-enough"),
    pytest.param(_pod("test5", containers=2, phase="podPhase", reason="podReason",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(ready=True, restarts=3)]),
                 ["test5", "1/2", "podReason", "6", "<unknown>"], None, id="test5-pod-reason-wins"),
    pytest.param(_pod("test6", containers=2, phase="Running", reason="",
                      statuses=[cs(ready=True, restarts=3, state={"terminated": {"reason": "Completed", "exitCode": 0}}),
                                cs(ready=True, restarts=3, state=RUNNING)]),
                 ["test6", "1/2", "NotReady", "6", "<unknown>"], None, id="test6-completed-and-running-not-ready"),
    pytest.param(_pod("test6", containers=2, phase="Running", reason="",
                      statuses=[cs(ready=True, restarts=3, state={"terminated": {"reason": "Completed", "exitCode": 0}}),
                                cs(ready=True, restarts=3, state=RUNNING)],
                      conditions=[{"type": "Ready", "status": "True", "lastProbeTime": at()}]),
                 ["test6", "1/2", "Running", "6", "<unknown>"], None, id="test6-completed-and-running-ready"),
    pytest.param(_pod("test7", init=1, phase="podPhase",
                      init_statuses=[cs(restarts=3, state=RUNNING, last=finished(seconds=-10))],
                      statuses=[cs(state=WAITING)]),
                 ["test7", "0/1", "Init:0/1", "3 (10s ago)", "<unknown>"], None, id="test7-init-restarting"),
    pytest.param(_pod("test8", init=2, phase="podPhase",
                      init_statuses=[cs(restarts=3, state=RUNNING, last=finished(seconds=-10)), cs(state=WAITING)],
                      statuses=[cs(state=WAITING)]),
                 ["test8", "0/1", "Init:0/2", "3 (10s ago)", "<unknown>"], None,
                 id="test8-two-init-one-restarting"),
    pytest.param(_pod("test9", init=2, phase="podPhase",
                      init_statuses=[cs(state={"terminated": {}}),
                                     cs(restarts=3, state=RUNNING, last=finished(seconds=-10))],
                      statuses=[cs(state=WAITING)]),
                 ["test9", "0/1", "Init:1/2", "3 (10s ago)", "<unknown>"], None,
                 id="test9-first-init-done-second-restarting"),
    pytest.param(_pod("test10", init=2, phase="podPhase",
                      init_statuses=[cs(restarts=2, state={"terminated": {}}, last=finished(minutes=-2)),
                                     cs(restarts=3, state=RUNNING, last=finished(seconds=-10))],
                      statuses=[cs(state=WAITING)]),
                 ["test10", "0/1", "Init:1/2", "5 (10s ago)", "<unknown>"], None,
                 id="test10-init-done-with-restarts-second-restarting"),
    pytest.param(_pod("test11", init=1, phase="Running",
                      init_statuses=[cs(restarts=2, state={"terminated": {}}, last=finished(minutes=-2))],
                      statuses=[cs(restarts=4, state=RUNNING, last=finished(seconds=-20))]),
                 ["test11", "0/1", "Running", "4 (20s ago)", "<unknown>"], None,
                 id="test11-init-done-container-restarting"),
    pytest.param(_pod("test12", phase="Running",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING, last=finished(days=-5))]),
                 ["test12", "1/1", "Running", "3 (5d ago)", "<unknown>"], None, id="test12-restarted-5d-ago"),
    pytest.param(_pod("test13", containers=2, phase="Running",
                      statuses=[cs(ready=True, state=RUNNING),
                                cs(ready=True, restarts=3, state=RUNNING, last=finished(days=-10))]),
                 ["test13", "2/2", "Running", "3 (10d ago)", "<unknown>"], None, id="test13-one-restarted-10d-ago"),
    pytest.param(_pod("test14", containers=2, phase="Running",
                      statuses=[cs(ready=True, restarts=6, state=RUNNING, last=finished(days=-5)),
                                cs(ready=True, restarts=3, state=RUNNING, last=finished(days=-20))]),
                 ["test14", "2/2", "Running", "9 (5d ago)", "<unknown>"], None, id="test14-latest-restart-wins"),
    pytest.param(_pod("test15", containers=2, phase="podPhase",
                      conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]),
                 ["test15", "0/2", "SchedulingGated", "0", "<unknown>"], None, id="test15-scheduling-gated"),
    pytest.param(_pod("test16", phase="Succeeded",
                      statuses=[cs(state={"terminated": {"reason": "Completed", "exitCode": 0}})]),
                 ["test16", "0/1", "Completed", "0", "<unknown>"], POD_SUCCESS, id="test16-succeeded-condition"),
    pytest.param(_pod("test17", phase="Failed", statuses=[cs(state={"terminated": {"reason": "Error", "exitCode": 1}})]),
                 ["test17", "0/1", "Error", "0", "<unknown>"], POD_FAILED, id="test17-failed-condition"),
    pytest.param(_pod("test18", phase="Succeeded", deleted=True,
                      statuses=[cs(state={"terminated": {"reason": "Completed", "exitCode": 0}})]),
                 ["test18", "0/1", "Completed", "0", "<unknown>"], POD_SUCCESS, id="test18-succeeded-deleted"),
    pytest.param(_pod("test19", phase="Running", deleted=True, statuses=[cs(state=RUNNING)]),
                 ["test19", "0/1", "Terminating", "0", "<unknown>"], None, id="test19-running-deleted"),
    pytest.param(_pod("test20", phase="Pending", deleted=True),
                 ["test20", "0/1", "Terminating", "0", "<unknown>"], None, id="test20-pending-deleted"),
])
def test_print_pod(obj: dict[str, Any], want: list[Any], conditions: list[dict[str, Any]] | None) -> None:
    check(R("pods"), obj, want, conditions=conditions)


def _sidecars(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "restartPolicy": ALWAYS} for n in names]


@pytest.mark.parametrize(("obj", "want", "conditions"), [
    pytest.param(_pod("test1", init=_sidecars("restartable-init-1", "restartable-init-2"), phase="Pending",
                      init_statuses=[cs(name="restartable-init-1", restarts=3, state=RUNNING, started=False,
                                        last=finished(seconds=-10)),
                                     cs(name="restartable-init-2", state=WAITING, started=False)],
                      statuses=[cs(state=WAITING)],
                      conditions=[{"type": "Initialized", "status": "False"}]),
                 ["test1", "0/3", "Init:0/2", "3 (10s ago)", "<unknown>"], None, id="first-running-not-started"),
    pytest.param(_pod("test1", init=_sidecars("restartable-init-1", "restartable-init-2"), phase="Pending",
                      init_statuses=[cs(name="restartable-init-1", restarts=3, state=RUNNING, started=True,
                                        last=finished(seconds=-10)),
                                     cs(name="restartable-init-2", state=RUNNING, started=False)],
                      statuses=[cs(state=WAITING)],
                      conditions=[{"type": "Initialized", "status": "False"}]),
                 ["test1", "0/3", "Init:1/2", "3 (10s ago)", "<unknown>"], None,
                 id="first-started-second-running-not-started"),
    pytest.param(_pod("test2", init=_sidecars("restartable-init-1", "restartable-init-2"), phase="Running",
                      init_statuses=[cs(name="restartable-init-1", restarts=3, state=RUNNING, started=True,
                                        last=finished(seconds=-10)),
                                     cs(name="restartable-init-2", state=RUNNING, started=True)],
                      statuses=[cs(ready=True, restarts=4, state=RUNNING, last=finished(seconds=-20))],
                      conditions=[{"type": "Initialized", "status": "True"}]),
                 ["test2", "1/3", "Running", "7 (10s ago)", "<unknown>"], None, id="both-started-container-running"),
    pytest.param(_pod("test3", init=_sidecars("restartable-init-1", "restartable-init-2"), phase="Succeeded",
                      init_statuses=[cs(name="restartable-init-1", restarts=3,
                                        state={"terminated": {"reason": "Error", "exitCode": 137}}, started=False,
                                        last=finished(seconds=-10)),
                                     cs(name="restartable-init-2",
                                        state={"terminated": {"reason": "Error", "exitCode": 137}}, started=False)],
                      statuses=[cs(restarts=4, state={"terminated": {"reason": "Completed", "exitCode": 0}},
                                   last=finished(seconds=-20))],
                      conditions=[{"type": "Initialized", "status": "True"}]),
                 ["test3", "0/3", "Completed", "7 (10s ago)", "<unknown>"], POD_SUCCESS,
                 id="sidecars-exited-non-zero-container-completed"),
    pytest.param(_pod("test4", init=[{"name": "init1", "image": "initimage"},
                                     {"name": "sidecar1", "image": "sidecarimage", "restartPolicy": ALWAYS}],
                      containers=[{"name": "container1", "image": "containerimage"}], phase="Running",
                      init_statuses=[{"name": "initinvalid"}, {"name": "init1"}, {"name": "sidecar1"}],
                      statuses=[{"name": "containerinvalid"}, {"name": "container1"}]),
                 ["test4", "0/2", "Init:0/2", "0", "<unknown>"], None, id="statuses-for-unknown-containers"),
])
def test_print_pod_with_restartable_init_container(obj: dict[str, Any], want: list[Any],
                                                    conditions: list[dict[str, Any]] | None) -> None:
    check(R("pods"), obj, want, conditions=conditions)


def _gated_pod(name: str, ips: list[str]) -> dict[str, Any]:
    p = _pod(name, containers=2, phase="podPhase",
             statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(restarts=3)],
             conditions=[{"type": "condition1", "status": "False"}, {"type": "condition2", "status": "True"}])
    p["spec"].update(nodeName="test1", readinessGates=[{"conditionType": f"condition{i}"} for i in (1, 2, 3)])
    p["status"].update(podIPs=[{"ip": ip} for ip in ips], nominatedNodeName="node1")
    return p


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_gated_pod("test1", ["1.1.1.1"]),
                 ["test1", "1/2", "podPhase", "6", "<unknown>", "1.1.1.1", "test1", "node1", "1/3"],
                 id="node-name-and-pod-ip"),
    pytest.param(_gated_pod("test1", ["1.1.1.1", "2001:db8::"]),
                 ["test1", "1/2", "podPhase", "6", "<unknown>", "1.1.1.1", "test1", "node1", "1/3"],
                 id="dual-stack-shows-first-ip"),
    pytest.param(_pod("test2", containers=2, phase="podPhase",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING),
                                cs(state={"waiting": {"reason": "ContainerWaitingReason"}}, restarts=3)]),
                 ["test2", "1/2", "ContainerWaitingReason", "6", "<unknown>", "<none>", "<none>", "<none>", "<none>"],
                 id="node-name-and-pod-ip-none"),
])
def test_print_pod_wide(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("pods"), obj, want, wide=True)


def _two_container_pod(name: str, phase: str, labels: dict[str, str]) -> dict[str, Any]:
    p = _pod(name, containers=2, phase=phase, statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(restarts=3)])
    p["metadata"]["labels"] = labels
    return p


@pytest.mark.parametrize(("obj", "want", "conditions"), [
    pytest.param(_two_container_pod("test1", "Running", {"a": "1", "b": "2"}),
                 ["test1", "1/2", "Running", "6", "<unknown>"], None, id="running-no-row-condition"),
    pytest.param(_two_container_pod("test1", "Succeeded", {"a": "1", "b": "2"}),
                 ["test1", "1/2", "Succeeded", "6", "<unknown>"], POD_SUCCESS, id="succeeded-row-condition"),
    pytest.param(_two_container_pod("test2", "Failed", {"b": "2"}),
                 ["test2", "1/2", "Failed", "6", "<unknown>"], POD_FAILED, id="failed-row-condition"),
])
def test_print_pod_conditions(obj: dict[str, Any], want: list[Any], conditions: list[dict[str, Any]] | None) -> None:
    check(R("pods"), obj, want, conditions=conditions)


def test_print_pod_list() -> None:
    objs = [_pod("test1", containers=2, phase="podPhase",
                 statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(ready=True, restarts=3, state=RUNNING)]),
            _pod("test2", phase="podPhase", statuses=[cs(ready=True, restarts=1, state=RUNNING)])]
    check_list(R("pods"), objs, [["test1", "2/2", "podPhase", "6", "<unknown>"],
                                 ["test2", "1/1", "podPhase", "1", "<unknown>"]])


@pytest.mark.parametrize(("obj", "want", "conditions"), [
    pytest.param(_pod("test1", containers=2, phase="Running",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(restarts=3)]),
                 ["test1", "1/2", "Running", "6", "<unknown>"], None, id="running"),
    pytest.param(_pod("test2", containers=2, phase="Pending",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(restarts=3)]),
                 ["test2", "1/2", "Pending", "6", "<unknown>"], None, id="pending"),
    pytest.param(_pod("test3", containers=2, phase="Unknown",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(restarts=3)]),
                 ["test3", "1/2", "Unknown", "6", "<unknown>"], None, id="unknown"),
    pytest.param(_pod("test4", containers=2, phase="Succeeded",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(restarts=3)]),
                 ["test4", "1/2", "Succeeded", "6", "<unknown>"], POD_SUCCESS, id="succeeded"),
    pytest.param(_pod("test5", containers=2, phase="Failed",
                      statuses=[cs(ready=True, restarts=3, state=RUNNING), cs(ready=True, restarts=3)]),
                 ["test5", "1/2", "Failed", "6", "<unknown>"], POD_FAILED, id="failed"),
])
def test_print_non_terminated_pod(obj: dict[str, Any], want: list[Any],
                                  conditions: list[dict[str, Any]] | None) -> None:
    check(R("pods"), obj, want, conditions=conditions)


# =================================================================================================
# TestPrintPodTemplate / TestPrintPodTemplateList
# =================================================================================================


def _template(name: str, tname: str, containers: list[dict[str, str]], labels: dict[str, str] | None = None
              ) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": tname}
    if labels:
        meta["labels"] = labels
    return {"metadata": {"name": name}, "template": {"metadata": meta, "spec": {"containers": containers}}}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_template("pod-template-1", "pod-template-1", []), ["pod-template-1", "", "", "<none>"],
                 id="no-containers"),
    pytest.param(_template("pod-template-2", "pod-template-2",
                           [{"name": "fake-container1", "image": "fake-image1"},
                            {"name": "fake-container2", "image": "fake-image2"}]),
                 ["pod-template-2", "fake-container1,fake-container2", "fake-image1,fake-image2", "<none>"],
                 id="two-containers"),
    pytest.param(_template("pod-template-3", "pod-template-3", [], {"foo": "bar"}),
                 ["pod-template-3", "", "", "foo=bar"], id="pod-labels"),
])
def test_print_pod_template(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("podtemplates"), obj, want)


def test_print_pod_template_list() -> None:
    objs = [_template("pod-template-1", "pod-template-2", [], {"foo": "bar"}),
            _template("pod-template-2", "pod-template-2", [], {"a": "b"})]
    check_list(R("podtemplates"), objs, [["pod-template-1", "", "", "foo=bar"], ["pod-template-2", "", "", "a=b"]])


# =================================================================================================
# TestPrintDeployment / TestPrintDaemonSet(List) / TestPrintJob(List) / TestPrintCronJob(List)
# TestPrintReplicationController / TestPrintReplicaSet(List) / TestPrintStatefulSet
# =================================================================================================

TWO_CONTAINERS = [{"name": "fake-container1", "image": "fake-image1"},
                  {"name": "fake-container2", "image": "fake-image2"}]
FOO_BAR = {"matchLabels": {"foo": "bar"}}


def _deployment() -> dict[str, Any]:
    return {"metadata": {"name": "test1", "creationTimestamp": SOON},
            "spec": {"replicas": 5, "template": {"spec": {"containers": TWO_CONTAINERS}}, "selector": FOO_BAR},
            "status": {"replicas": 10, "updatedReplicas": 2, "availableReplicas": 1, "unavailableReplicas": 4}}


@pytest.mark.parametrize(("wide", "want"), [
    pytest.param(False, ["test1", "0/5", 2, 1, "0s"], id="no-options"),
    pytest.param(True, ["test1", "0/5", 2, 1, "0s", "fake-container1,fake-container2", "fake-image1,fake-image2",
                        "foo=bar"], id="wide"),
])
def test_print_deployment(wide: bool, want: list[Any]) -> None:
    check(R("deployments.apps"), _deployment(), want, wide=wide)


def _daemonset(name: str, template: dict[str, Any], selector: dict[str, Any] | None,
               status: tuple[int, int, int, int, int]) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": template}
    if selector is not None:
        spec["selector"] = selector
    cur, des, ready, upd, avail = status
    return {"metadata": {"name": name, "creationTimestamp": SOON}, "spec": spec,
            "status": {"currentNumberScheduled": cur, "desiredNumberScheduled": des, "numberReady": ready,
                       "updatedNumberScheduled": upd, "numberAvailable": avail}}


@pytest.mark.parametrize(("wide", "want"), [
    pytest.param(False, ["test1", 3, 2, 1, 2, 0, "<none>", "0s"], id="no-options"),
    pytest.param(True, ["test1", 3, 2, 1, 2, 0, "<none>", "0s", "fake-container1,fake-container2",
                        "fake-image1,fake-image2", "foo=bar"], id="wide"),
])
def test_print_daemon_set(wide: bool, want: list[Any]) -> None:
    ds = _daemonset("test1", {"spec": {"containers": TWO_CONTAINERS}}, FOO_BAR, (2, 3, 1, 2, 0))
    check(R("daemonsets.apps"), ds, want, wide=wide)


def test_print_daemon_set_list() -> None:
    objs = [_daemonset("daemonset1", {"spec": {"containers": TWO_CONTAINERS}}, None, (2, 3, 1, 2, 0)),
            _daemonset("daemonset2", {}, FOO_BAR, (4, 2, 9, 3, 3))]
    check_list(R("daemonsets.apps"), objs, [["daemonset1", 3, 2, 1, 2, 0, "<none>", "0s"],
                                            ["daemonset2", 2, 4, 9, 3, 3, "<none>", "0s"]])


JOB_CONTAINERS = [{"name": "fake-job-container1", "image": "fake-job-image1"},
                  {"name": "fake-job-container2", "image": "fake-job-image2"}]


def _job(name: str, created: str, *, completions: int | None = None, succeeded: int = 0,
         selector_value: str | None = None, start: str | None = None, end: str | None = None,
         condition: str | None = None, deleted: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if completions is not None:
        spec["completions"] = completions
    if selector_value is not None:
        spec["template"] = {"spec": {"containers": JOB_CONTAINERS}}
        spec["selector"] = {"matchLabels": {"job-label": selector_value}}
    status: dict[str, Any] = {"succeeded": succeeded}
    if start:
        status["startTime"] = start
    if end:
        status["completionTime"] = end
    if condition:
        status["conditions"] = [{"type": condition, "status": "True"}]
    meta: dict[str, Any] = {"name": name, "creationTimestamp": created}
    if deleted:
        meta["deletionTimestamp"] = SOON
    return {"metadata": meta, "spec": spec, "status": status}


@pytest.mark.parametrize(("obj", "wide", "want"), [
    pytest.param(_job("job1", SOON, completions=2, succeeded=1, selector_value="job-lable-value"), False,
                 ["job1", "Running", "1/2", "", "0s"], id="job1-no-options"),
    pytest.param(_job("job1", SOON, completions=2, succeeded=1, selector_value="job-label-value"), True,
                 ["job1", "Running", "1/2", "", "0s", "fake-job-container1,fake-job-container2",
                  "fake-job-image1,fake-job-image2", "job-label=job-label-value"], id="job1-wide"),
    pytest.param(_job("job2", at(days=-3652)), False, ["job2", "Running", "0/1", "", "10y"],
                 id="job2-ten-year-age"),
    pytest.param(_job("job3", TEN_YEARS_AGO, start=at(minutes=1), end=at(minutes=31)), False,
                 ["job3", "Running", "0/1", "30m", "10y"], id="job3-duration"),
    pytest.param(_job("job4", TEN_YEARS_AGO, start=at(minutes=-20)), False,
                 ["job4", "Running", "0/1", "20m", "10y"], id="job4-running-duration"),
    pytest.param(_job("job5", SOON, condition="Complete"), False, ["job5", "Complete", "0/1", "", "0s"],
                 id="job5-complete"),
    pytest.param(_job("job6", SOON, condition="Failed"), False, ["job6", "Failed", "0/1", "", "0s"],
                 id="job6-failed"),
    pytest.param(_job("job7", SOON, condition="Suspended"), False, ["job7", "Suspended", "0/1", "", "0s"],
                 id="job7-suspended"),
    pytest.param(_job("job8", SOON, condition="FailureTarget"), False, ["job8", "FailureTarget", "0/1", "", "0s"],
                 id="job8-failure-target"),
    pytest.param(_job("job9", SOON, deleted=True), False, ["job9", "Terminating", "0/1", "", "0s"],
                 id="job9-terminating"),
])
def test_print_job(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    check(R("jobs.batch"), obj, want, wide=wide)


def test_print_job_list() -> None:
    objs = [_job("job1", SOON, completions=2, succeeded=1, selector_value="job-lable-value"),
            _job("job2", SOON, completions=2, succeeded=2, selector_value="job-lable-value", start=at(minutes=-20))]
    check_list(R("jobs.batch"), objs, [["job1", "Running", "1/2", "", "0s"], ["job2", "Running", "2/2", "20m", "0s"]])


def _cronjob(name: str, created: str, schedule: str = "0/5 * * * ?", *, tz: str | None = None,
             template: bool = True, last: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedule": schedule, "suspend": False}
    if tz is not None:
        spec["timeZone"] = tz
    if template:
        spec["jobTemplate"] = {"spec": {"completions": 2, "template": {"spec": {"containers": JOB_CONTAINERS}},
                                        "selector": {"matchLabels": {"a": "b"}}}}
    status: dict[str, Any] = {}
    if last is not None:
        status["lastScheduleTime"] = last
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": spec, "status": status}


@pytest.mark.parametrize(("obj", "wide", "want"), [
    pytest.param(_cronjob("cronjob1", SOON, last=SOON), False,
                 ["cronjob1", "0/5 * * * ?", "<none>", "False", 0, "0s", "0s"], id="basic"),
    pytest.param(_cronjob("cronjob1", SOON, tz="LOCAL", last=SOON), False,
                 ["cronjob1", "0/5 * * * ?", "LOCAL", "False", 0, "0s", "0s"], id="with-time-zone"),
    pytest.param(_cronjob("cronjob1", SOON, last=SOON), True,
                 ["cronjob1", "0/5 * * * ?", "<none>", "False", 0, "0s", "0s", "fake-job-container1,fake-job-container2",
                  "fake-job-image1,fake-job-image2", "a=b"], id="wide"),
    pytest.param(_cronjob("cronjob2", FIVE_MIN_AGO, template=False, last=at(seconds=-30)), False,
                 ["cronjob2", "0/5 * * * ?", "<none>", "False", 0, "30s", "5m"], id="last-schedule-and-age"),
    pytest.param(_cronjob("cronjob3", FIVE_MIN_AGO, template=False), False,
                 ["cronjob3", "0/5 * * * ?", "<none>", "False", 0, "<none>", "5m"], id="without-last-schedule"),
])
def test_print_cron_job(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    check(R("cronjobs.batch"), obj, want, wide=wide)


def test_print_cron_job_list() -> None:
    objs = [_cronjob("cronjob1", SOON, tz="LOCAL", last=SOON),
            _cronjob("cronjob2", SOON, "4/5 1 1 1 ?", last=at(minutes=-20))]
    for o in objs:  # the list's job templates carry no pod template
        o["spec"]["jobTemplate"]["spec"].pop("template")
    check_list(R("cronjobs.batch"), objs, [["cronjob1", "0/5 * * * ?", "LOCAL", "False", 0, "0s", "0s"],
                                           ["cronjob2", "4/5 1 1 1 ?", "<none>", "False", 0, "20m", "0s"]])


def _rc(name: str, replicas: int, *, template: bool = True, status: tuple[int, int] | None = None,
        annotations: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas}
    if template:
        spec["selector"] = {"a": "b"}
        spec["template"] = {"metadata": {"labels": {"a": "b"}}, "spec": {
            "containers": [{"name": "test", "image": "test_image", "imagePullPolicy": "IfNotPresent",
                            "terminationMessagePolicy": "File"}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst"}}
    meta: dict[str, Any] = {"name": name} if name else {}
    if annotations:
        meta["annotations"] = annotations
    rc: dict[str, Any] = {"metadata": meta, "spec": spec}
    if status:
        rc["status"] = {"replicas": status[0], "readyReplicas": status[1]}
    return rc


@pytest.mark.parametrize(("obj", "wide", "want"), [
    pytest.param(_rc("rc1", 0), False, ["rc1", 0, 0, 0, "<unknown>"], id="basic"),
    pytest.param(_rc("rc1", 5, status=(3, 1)), False, ["rc1", 5, 3, 1, "<unknown>"], id="basic with replicas"),
    pytest.param(_rc("rc1", 5, status=(3, 1)), True, ["rc1", 5, 3, 1, "<unknown>", "test", "test_image", "a=b"],
                 id="wide"),
    pytest.param(_rc("", 0, template=False, annotations={"k8s.io/initial-events-end": "true"}), True,
                 ["", 0, 0, 0, "<unknown>", "", "", "<none>"], id="no panic"),
])
def test_print_replication_controller(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    check(R("replicationcontrollers"), obj, want, wide=wide)


def _rs(name: str, replicas: int, template: dict[str, Any], selector: dict[str, Any] | None,
        status: tuple[int, int]) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas, "template": template}
    if selector is not None:
        spec["selector"] = selector
    return {"metadata": {"name": name, "creationTimestamp": SOON}, "spec": spec,
            "status": {"replicas": status[0], "readyReplicas": status[1]}}


@pytest.mark.parametrize(("wide", "want"), [
    pytest.param(False, ["test1", 5, 5, 2, "0s"], id="no-options"),
    pytest.param(True, ["test1", 5, 5, 2, "0s", "fake-container1,fake-container2", "fake-image1,fake-image2",
                        "foo=bar"], id="wide"),
])
def test_print_replica_set(wide: bool, want: list[Any]) -> None:
    rs = _rs("test1", 5, {"spec": {"containers": TWO_CONTAINERS}}, FOO_BAR, (5, 2))
    check(R("replicasets.apps"), rs, want, wide=wide)


def test_print_replica_set_list() -> None:
    objs = [_rs("replicaset1", 5, {"spec": {"containers": TWO_CONTAINERS}}, None, (5, 2)),
            _rs("replicaset2", 4, {}, FOO_BAR, (3, 1))]
    check_list(R("replicasets.apps"), objs, [["replicaset1", 5, 5, 2, "0s"], ["replicaset2", 4, 3, 1, "0s"]])


@pytest.mark.parametrize(("wide", "want"), [
    pytest.param(False, ["test1", "2/5", "0s"], id="no-options"),
    pytest.param(True, ["test1", "2/5", "0s", "fake-container1,fake-container2", "fake-image1,fake-image2"],
                 id="wide"),
])
def test_print_stateful_set(wide: bool, want: list[Any]) -> None:
    sts = {"metadata": {"name": "test1", "creationTimestamp": SOON},
           "spec": {"replicas": 5, "template": {"spec": {"containers": TWO_CONTAINERS}}},
           "status": {"replicas": 5, "readyReplicas": 2}}
    check(R("statefulsets.apps"), sts, want, wide=wide)


# =================================================================================================
# TestPrintHPA
# =================================================================================================


def _hpa(metrics: list[dict[str, Any]] | None = None, current: list[dict[str, Any]] | None = None,
         min_replicas: int | None = 2) -> dict[str, Any]:
    spec: dict[str, Any] = {"scaleTargetRef": {"name": "some-rc", "kind": "ReplicationController"}, "maxReplicas": 10}
    if min_replicas is not None:
        spec["minReplicas"] = min_replicas
    if metrics is not None:
        spec["metrics"] = metrics
    status: dict[str, Any] = {"currentReplicas": 4, "desiredReplicas": 5}
    if current is not None:
        status["currentMetrics"] = current
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "some-hpa"}, "spec": spec, "status": status}


SELECTOR = {"matchLabels": {"label": "value"}}


def _ext(target: dict[str, Any], name: str = "some-external-metric") -> dict[str, Any]:
    return {"type": "External", "external": {"metric": {"name": name, "selector": SELECTOR}, "target": target}}


def _ext_status(current: dict[str, Any], selector: bool = True) -> dict[str, Any]:
    metric: dict[str, Any] = {"name": "some-external-metric"}
    if selector:
        metric["selector"] = SELECTOR
    return {"type": "External", "external": {"metric": metric, "current": current}}


def _pods(avg: str, name: str = "some-pods-metric") -> dict[str, Any]:
    return {"type": "Pods", "pods": {"metric": {"name": name}, "target": {"type": "AverageValue", "averageValue": avg}}}


def _pods_status(avg: str) -> dict[str, Any]:
    return {"type": "Pods", "pods": {"metric": {"name": "some-pods-metric"}, "current": {"averageValue": avg}}}


SERVICE_REF = {"name": "some-service", "kind": "Service"}


def _obj(target: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Object", "object": {"describedObject": SERVICE_REF, "metric": {"name": "some-service-metric"},
                                         "target": target}}


def _obj_status(current: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Object", "object": {"describedObject": SERVICE_REF, "metric": {"name": "some-service-metric"},
                                         "current": current}}


def _res(target: dict[str, Any], kind: str = "Resource", container: str | None = None) -> dict[str, Any]:
    key = "resource" if kind == "Resource" else "containerResource"
    src: dict[str, Any] = {"name": "cpu", "target": target}
    if container is not None:
        src["container"] = container
    return {"type": kind, key: src}


def _res_status(current: dict[str, Any], kind: str = "Resource", container: str | None = None) -> dict[str, Any]:
    key = "resource" if kind == "Resource" else "containerResource"
    st: dict[str, Any] = {"name": "cpu", "current": current}
    if container is not None:
        st["container"] = container
    return {"type": kind, key: st}


AVG100 = {"type": "AverageValue", "averageValue": "100m"}
VAL100 = {"type": "Value", "value": "100m"}
UTIL80 = {"type": "Utilization", "averageUtilization": 80}
CUR_UTIL = {"averageUtilization": 50, "averageValue": "40m"}


def _hpa_row(targets: str, min_pods: str = "2") -> list[Any]:
    return ["some-hpa", "ReplicationController/some-rc", targets, min_pods, 10, 4, "<unknown>"]


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_hpa(min_replicas=None), _hpa_row("<none>", "<unset>"), id="minReplicas unset"),
    pytest.param(_hpa([_ext(AVG100)]), _hpa_row("<unknown>/100m (avg)"),
                 id="external source type, target average value (no current)"),
    pytest.param(_hpa([_ext(AVG100)], [_ext_status({"averageValue": "50m"})]), _hpa_row("50m/100m (avg)"),
                 id="external source type, target average value"),
    pytest.param(_hpa([_ext(VAL100, "some-service-metric")]), _hpa_row("<unknown>/100m"),
                 id="external source type, target value (no current)"),
    pytest.param(_hpa([_ext(VAL100)], [_ext_status({"value": "50m"}, selector=False)]), _hpa_row("50m/100m"),
                 id="external source type, target value"),
    pytest.param(_hpa([_pods("100m")]), _hpa_row("<unknown>/100m"), id="pods source type (no current)"),
    pytest.param(_hpa([_pods("100m")], [_pods_status("50m")]), _hpa_row("50m/100m"), id="pods source type"),
    pytest.param(_hpa([_obj(VAL100)]), _hpa_row("<unknown>/100m"), id="object source type (no current)"),
    pytest.param(_hpa([_obj(VAL100)], [_obj_status({"value": "50m"})]), _hpa_row("50m/100m"),
                 id="object source type"),
    pytest.param(_hpa([_res(AVG100)]), _hpa_row("cpu: <unknown>/100m"),
                 id="resource source type, targetVal (no current)"),
    pytest.param(_hpa([_res(AVG100)], [_res_status({"averageValue": "50m"})]), _hpa_row("cpu: 50m/100m"),
                 id="resource source type, targetVal"),
    pytest.param(_hpa([_res(UTIL80)]), _hpa_row("cpu: <unknown>/80%"),
                 id="resource source type, targetUtil (no current)"),
    pytest.param(_hpa([_res(UTIL80)], [_res_status(CUR_UTIL)]), _hpa_row("cpu: 50%/80%"),
                 id="resource source type, targetUtil"),
    pytest.param(_hpa([_res(AVG100, "ContainerResource", "application")]), _hpa_row("cpu: <unknown>/100m"),
                 id="container resource source type, targetVal (no current)"),
    pytest.param(_hpa([_res(AVG100, "ContainerResource")],
                      [_res_status({"averageValue": "50m"}, "ContainerResource", "application")]),
                 _hpa_row("cpu: 50m/100m"), id="container resource source type, targetVal"),
    pytest.param(_hpa([_res(UTIL80, "ContainerResource", "application")]), _hpa_row("cpu: <unknown>/80%"),
                 id="container resource source type, targetUtil (no current)"),
    pytest.param(_hpa([_res(UTIL80, "ContainerResource")],
                      [_res_status(CUR_UTIL, "ContainerResource", "application")]),
                 _hpa_row("cpu: 50%/80%"), id="container resource source type, targetUtil"),
    pytest.param(_hpa([_pods("100m"), _res(UTIL80), _pods("400m", "other-pods-metric")],
                      [_pods_status("50m"), _res_status(CUR_UTIL)]),
                 _hpa_row("50m/100m, cpu: 50%/80% + 1 more..."), id="multiple specs"),
])
def test_print_hpa(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("horizontalpodautoscalers.autoscaling"), obj, want)


# =================================================================================================
# TestPrintPodDisruptionBudget(List) / TestPrintControllerRevision / TestPrintConfigMap
# TestPrintNetworkPolicy / TestPrintRoleBinding / TestPrintClusterRoleBinding
# =================================================================================================


def _pdb(ns: str, name: str, spec: dict[str, Any], allowed: int) -> dict[str, Any]:
    return {"metadata": {"namespace": ns, "name": name, "creationTimestamp": SOON}, "spec": spec,
            "status": {"disruptionsAllowed": allowed}}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_pdb("ns1", "pdb1", {"minAvailable": 22}, 5), ["pdb1", "22", "N/A", 5, "0s"],
                 id="min-available-set"),
    pytest.param(_pdb("ns2", "pdb2", {"maxUnavailable": 11}, 5), ["pdb2", "N/A", "11", 5, "0s"],
                 id="max-unavailable-set"),
])
def test_print_pod_disruption_budget(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("poddisruptionbudgets.policy"), obj, want)


def test_print_pod_disruption_budget_list() -> None:
    objs = [_pdb("ns1", "pdb1", {"maxUnavailable": 11}, 5), _pdb("ns2", "pdb2", {"minAvailable": 22}, 3)]
    check_list(R("poddisruptionbudgets.policy"), objs, [["pdb1", "N/A", "11", 5, "0s"], ["pdb2", "22", "N/A", 3, "0s"]])


def _revision(name: str, revision: int, owners: list[dict[str, Any]] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "creationTimestamp": SOON}
    if owners is not None:
        meta["ownerReferences"] = owners
    return {"metadata": meta, "revision": revision}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_revision("test1", 1, [{"controller": True, "apiVersion": "apps/v1", "kind": "DaemonSet",
                                         "name": "foo"}]),
                 ["test1", "daemonset.apps/foo", 1, "0s"], id="controller-owner"),
    pytest.param(_revision("test2", 2, [{"controller": False, "kind": "ABC", "name": "foo"}]),
                 ["test2", "<none>", 2, "0s"], id="non-controller-owner"),
    pytest.param(_revision("test3", 3, []), ["test3", "<none>", 3, "0s"], id="empty-owners"),
    pytest.param(_revision("test4", 4, None), ["test4", "<none>", 4, "0s"], id="nil-owners"),
])
def test_print_controller_revision(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("controllerrevisions.apps"), obj, want)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "configmap1", "creationTimestamp": SOON}}, ["configmap1", 0, "0s"],
                 id="no-data"),
    pytest.param({"metadata": {"name": "configmap2", "creationTimestamp": SOON}, "data": {"foo": "bar"}},
                 ["configmap2", 1, "0s"], id="one-data-entry"),
    pytest.param({"metadata": {"name": "configmap3", "creationTimestamp": SOON}, "data": {"foo": "bar"},
                  "binaryData": {"bin": "YmluYXJ5IGRhdGE="}},
                 ["configmap3", 2, "0s"], id="data-and-binary-data"),
])
def test_print_config_map(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("configmaps"), obj, want)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "policy1", "creationTimestamp": SOON}, "spec": {}},
                 ["policy1", "<none>", "0s"], id="empty-spec"),
    pytest.param({"metadata": {"name": "policy2", "creationTimestamp": SOON}, "spec": {"podSelector": FOO_BAR}},
                 ["policy2", "foo=bar", "0s"], id="pod-selector"),
])
def test_print_network_policy(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("networkpolicies.networking.k8s.io"), obj, want)


BINDING_CASES = [
    pytest.param({"metadata": {"name": "binding1", "creationTimestamp": SOON},
                  "subjects": [{"kind": "User", "name": "system:kube-controller-manager"}],
                  "roleRef": {"kind": "Role", "name": "extension-apiserver-authentication-reader"}},
                 False, ["binding1", "Role/extension-apiserver-authentication-reader", "0s"], id="basic"),
    pytest.param({"metadata": {"name": "binding2", "creationTimestamp": SOON},
                  "subjects": [{"kind": "User", "name": "user-name"}, {"kind": "Group", "name": "group-name"},
                               {"kind": "ServiceAccount", "name": "service-account-name",
                                "namespace": "service-account-namespace"}],
                  "roleRef": {"kind": "Role", "name": "role-name"}},
                 True, ["binding2", "Role/role-name", "0s", "user-name", "group-name",
                        "service-account-namespace/service-account-name"], id="wide-subjects"),
]


@pytest.mark.parametrize(("obj", "wide", "want"), BINDING_CASES)
def test_print_role_binding(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    check(R("rolebindings.rbac.authorization.k8s.io"), obj, want, wide=wide)


@pytest.mark.parametrize(("obj", "wide", "want"), BINDING_CASES)
def test_print_cluster_role_binding(obj: dict[str, Any], wide: bool, want: list[Any]) -> None:
    check(R("clusterrolebindings.rbac.authorization.k8s.io"), obj, want, wide=wide)


# =================================================================================================
# TestPrintCertificateSigningRequest
# =================================================================================================


def _csr(name: str, spec: dict[str, Any], conditions: list[str] | None = None, cert: bool = False
         ) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if conditions:
        status["conditions"] = [{"type": t, "status": "True"} for t in conditions]
    if cert:
        status["certificate"] = "Y2VydCBkYXRh"
    return {"metadata": {"name": name, "creationTimestamp": SOON}, "spec": spec, "status": status}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_csr("csr1", {}), ["csr1", "0s", "<none>", "", "<none>", "Pending"], id="no-spec-or-status"),
    pytest.param(_csr("csr2", {"username": "CSR Requestor"}, ["Approved"]),
                 ["csr2", "0s", "<none>", "CSR Requestor", "<none>", "Approved"], id="approved"),
    pytest.param(_csr("csr2", {"username": "CSR Requestor", "signerName": "example.com/test-signer"}, ["Approved"]),
                 ["csr2", "0s", "example.com/test-signer", "CSR Requestor", "<none>", "Approved"],
                 id="signer-name"),
    pytest.param(_csr("csr2", {"username": "CSR Requestor", "signerName": "example.com/test-signer",
                               "expirationSeconds": 7 * 24 * 3600 + 3600}, ["Approved"]),
                 ["csr2", "0s", "example.com/test-signer", "CSR Requestor", "7d1h", "Approved"],
                 id="expiration-seconds"),
    pytest.param(_csr("csr2", {"username": "CSR Requestor"}, ["Approved"], cert=True),
                 ["csr2", "0s", "<none>", "CSR Requestor", "<none>", "Approved,Issued"], id="approved-issued"),
    pytest.param(_csr("csr3", {"username": "CSR Requestor"}, ["Denied"]),
                 ["csr3", "0s", "<none>", "CSR Requestor", "<none>", "Denied"], id="denied"),
])
def test_print_certificate_signing_request(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("certificatesigningrequests.certificates.k8s.io"), obj, want)


# =================================================================================================
# TestPrintPersistentVolume / TestPrintPersistentVolumeClaim / TestPrintComponentStatus
# TestPrintStorageClass / TestPrintLease / TestPrintPriorityClass / TestPrintRuntimeClass
# =================================================================================================

CLAIM_REF = {"name": "test", "namespace": "default"}


def _pv(name: str, phase: str, modes: list[str], size: str, scn: str | None = None, vacn: str | None = None
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"claimRef": CLAIM_REF, "accessModes": modes, "capacity": {"storage": size}}
    if scn:
        spec["storageClassName"] = scn
    if vacn:
        spec["volumeAttributesClassName"] = vacn
    return {"metadata": {"name": name}, "spec": spec, "status": {"phase": phase}}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_pv("test1", "Bound", ["ReadOnlyMany"], "4Gi"),
                 ["test1", "4Gi", "ROX", "", "Bound", "default/test", "", "<unset>", "", "<unknown>", "<unset>"],
                 id="bound"),
    pytest.param(_pv("test2", "Failed", ["ReadOnlyMany"], "4Gi"),
                 ["test2", "4Gi", "ROX", "", "Failed", "default/test", "", "<unset>", "", "<unknown>", "<unset>"],
                 id="failed"),
    pytest.param(_pv("test3", "Pending", ["ReadWriteMany"], "10Gi"),
                 ["test3", "10Gi", "RWX", "", "Pending", "default/test", "", "<unset>", "", "<unknown>", "<unset>"],
                 id="pending"),
    pytest.param(_pv("test4", "Pending", ["ReadWriteOnce"], "10Gi", "my-scn"),
                 ["test4", "10Gi", "RWO", "", "Pending", "default/test", "my-scn", "<unset>", "", "<unknown>",
                  "<unset>"], id="pending-storage-class"),
    pytest.param(_pv("test4", "Pending", ["ReadWriteOnce"], "10Gi", "my-scn", "my-vacn"),
                 ["test4", "10Gi", "RWO", "", "Pending", "default/test", "my-scn", "my-vacn", "", "<unknown>",
                  "<unset>"], id="pending-storage-class-volume-attributes-class"),
    pytest.param(_pv("test5", "Available", ["ReadWriteOnce"], "10Gi", "my-scn"),
                 ["test5", "10Gi", "RWO", "", "Available", "default/test", "my-scn", "<unset>", "", "<unknown>",
                  "<unset>"], id="available"),
    pytest.param(_pv("test6", "Released", ["ReadWriteOnce"], "10Gi", "my-scn"),
                 ["test6", "10Gi", "RWO", "", "Released", "default/test", "my-scn", "<unset>", "", "<unknown>",
                  "<unset>"], id="released"),
])
def test_print_persistent_volume(obj: dict[str, Any], want: list[Any]) -> None:
    # upstream always appends the VolumeMode cell, wide or not
    check(R("persistentvolumes"), obj, want, wide=True)


def _pvc(name: str, phase: str, modes: list[str], size: str, *, volume: str = "", scn: str | None = None,
         vacn: str | None = None, fs: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    if fs:
        spec["volumeMode"] = "Filesystem"
    if scn:
        spec["storageClassName"] = scn
    if vacn:
        spec["volumeAttributesClassName"] = vacn
    return {"metadata": {"name": name}, "spec": spec,
            "status": {"phase": phase, "accessModes": modes, "capacity": {"storage": size}}}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_pvc("test1", "Bound", ["ReadOnlyMany"], "4Gi", volume="my-volume"),
                 ["test1", "Bound", "my-volume", "4Gi", "ROX", "", "<unset>", "<unknown>", "Filesystem"], id="bound"),
    pytest.param(_pvc("test2", "Lost", ["ReadOnlyMany"], "4Gi"),
                 ["test2", "Lost", "", "", "", "", "<unset>", "<unknown>", "Filesystem"], id="lost-no-volume"),
    pytest.param(_pvc("test3", "Pending", ["ReadWriteMany"], "10Gi", volume="my-volume"),
                 ["test3", "Pending", "my-volume", "10Gi", "RWX", "", "<unset>", "<unknown>", "Filesystem"],
                 id="pending"),
    pytest.param(_pvc("test4", "Pending", ["ReadWriteOnce"], "10Gi", volume="my-volume", scn="my-scn"),
                 ["test4", "Pending", "my-volume", "10Gi", "RWO", "my-scn", "<unset>", "<unknown>", "Filesystem"],
                 id="pending-storage-class"),
    pytest.param(_pvc("test5", "Pending", ["ReadWriteOnce"], "10Gi", volume="my-volume", scn="my-scn", fs=False),
                 ["test5", "Pending", "my-volume", "10Gi", "RWO", "my-scn", "<unset>", "<unknown>", "<unset>"],
                 id="no-volume-mode"),
    pytest.param(_pvc("test5", "Pending", ["ReadWriteOnce"], "10Gi", volume="my-volume", scn="my-scn",
                      vacn="my-vacn", fs=False),
                 ["test5", "Pending", "my-volume", "10Gi", "RWO", "my-scn", "my-vacn", "<unknown>", "<unset>"],
                 id="volume-attributes-class"),
])
def test_print_persistent_volume_claim(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("persistentvolumeclaims"), obj, want, wide=True)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "cs1"}, "conditions": []}, ["cs1", "Unknown", "", ""], id="no-conditions"),
    pytest.param({"metadata": {"name": "cs2"}, "conditions": [
        {"type": "Healthy", "status": "True", "message": "test message", "error": "test error"}]},
        ["cs2", "Healthy", "test message", "test error"], id="healthy"),
    pytest.param({"metadata": {"name": "cs3"}, "conditions": [
        {"type": "Healthy", "status": "False", "message": "test message", "error": "test error"}]},
        ["cs3", "Unhealthy", "test message", "test error"], id="unhealthy"),
])
def test_print_component_status(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("componentstatuses"), obj, want)


def _sc(name: str, created: str, provisioner: str, **kw: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "creationTimestamp": created}, "provisioner": provisioner, **kw}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param(_sc("sc1", SOON, "kubernetes.io/glusterfs"),
                 ["sc1", "kubernetes.io/glusterfs", "Delete", "Immediate", False, "0s"], id="sc1"),
    pytest.param(_sc("sc2", FIVE_MIN_AGO, "kubernetes.io/nfs"),
                 ["sc2", "kubernetes.io/nfs", "Delete", "Immediate", False, "5m"], id="sc2"),
    pytest.param(_sc("sc3", FIVE_MIN_AGO, "kubernetes.io/nfs", reclaimPolicy="Delete"),
                 ["sc3", "kubernetes.io/nfs", "Delete", "Immediate", False, "5m"], id="sc3"),
    pytest.param(_sc("sc4", FIVE_MIN_AGO, "kubernetes.io/nfs", reclaimPolicy="Retain", volumeBindingMode="Immediate"),
                 ["sc4", "kubernetes.io/nfs", "Retain", "Immediate", False, "5m"], id="sc4"),
    pytest.param(_sc("sc5", FIVE_MIN_AGO, "kubernetes.io/nfs", reclaimPolicy="Retain",
                     volumeBindingMode="WaitForFirstConsumer"),
                 ["sc5", "kubernetes.io/nfs", "Retain", "WaitForFirstConsumer", False, "5m"], id="sc5"),
    pytest.param(_sc("sc6", FIVE_MIN_AGO, "kubernetes.io/nfs", reclaimPolicy="Retain", allowVolumeExpansion=True,
                     volumeBindingMode="WaitForFirstConsumer"),
                 ["sc6", "kubernetes.io/nfs", "Retain", "WaitForFirstConsumer", True, "5m"], id="sc6"),
])
def test_print_storage_class(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("storageclasses.storage.k8s.io"), obj, want)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "lease1", "creationTimestamp": SOON}, "spec": {"holderIdentity": "holder1"}},
                 ["lease1", "holder1", "0s"], id="lease1"),
    pytest.param({"metadata": {"name": "lease2", "creationTimestamp": FIVE_MIN_AGO},
                  "spec": {"holderIdentity": "holder2"}},
                 ["lease2", "holder2", "5m"], id="lease2"),
])
def test_print_lease(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("leases.coordination.k8s.io"), obj, want)


# Upstream appends PreemptionPolicy only when Wide although the column has priority 0; the server
# renders Wide, so every row carries it (the not-wide upstream cases are stated with it appended).
@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "pc1", "creationTimestamp": SOON}, "value": 1,
                  "preemptionPolicy": "Never"},
                 ["pc1", 1, False, "0s", "Never"], id="Test case with PreemptNever policy"),
    pytest.param({"metadata": {"name": "pc2", "creationTimestamp": FIVE_MIN_AGO}, "value": 1000000000,
                  "globalDefault": True, "preemptionPolicy": "PreemptLowerPriority"},
                 ["pc2", 1000000000, True, "5m", "PreemptLowerPriority"],
                 id="Test case with PreemptLowerPriority policy"),
    pytest.param({"metadata": {"name": "pc2", "creationTimestamp": FIVE_MIN_AGO}, "value": 1000000000,
                  "globalDefault": True, "preemptionPolicy": "PreemptLowerPriority"},
                 ["pc2", 1000000000, True, "5m", "PreemptLowerPriority"],
                 id="Test case with PreemptLowerPriority policy and wide output"),
    pytest.param({"metadata": {"name": "pc2", "creationTimestamp": FIVE_MIN_AGO}, "value": 1000000000,
                  "globalDefault": True},
                 ["pc2", 1000000000, True, "5m", ""], id="Test case without set PreemptLowerPriority policy"),
])
def test_print_priority_class(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("priorityclasses.scheduling.k8s.io"), obj, want, wide=True)


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "rc1", "creationTimestamp": SOON}, "handler": "h1"}, ["rc1", "h1", "0s"],
                 id="rc1"),
    pytest.param({"metadata": {"name": "rc2", "creationTimestamp": FIVE_MIN_AGO}, "handler": "h2"},
                 ["rc2", "h2", "5m"], id="rc2"),
])
def test_print_runtime_class(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("runtimeclasses.node.k8s.io"), obj, want)


# =================================================================================================
# TestPrintEndpoint / TestPrintEndpointSlice
# =================================================================================================


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "endpoint1", "creationTimestamp": SOON}}, ["endpoint1", "<none>", "0s"],
                 id="no-ips"),
    pytest.param({"metadata": {"name": "endpoint3", "creationTimestamp": FIVE_MIN_AGO},
                  "subsets": [{"addresses": [{"ip": "1.2.3.4"}, {"ip": "5.6.7.8"}]}]},
                 ["endpoint3", "1.2.3.4,5.6.7.8", "5m"], id="no-ports"),
    pytest.param({"metadata": {"name": "endpoint2", "creationTimestamp": SOON},
                  "subsets": [{"addresses": [{"ip": "1.2.3.4"}, {"ip": "5.6.7.8"}],
                               "ports": [{"port": 8001, "protocol": "tcp"}]}]},
                 ["endpoint2", "1.2.3.4:8001,5.6.7.8:8001", "0s"], id="two-ips-one-port"),
    pytest.param({"metadata": {"name": "endpoint2", "creationTimestamp": SOON},
                  "subsets": [{"addresses": [{"ip": "1.2.3.4"}, {"ip": "5.6.7.8"}, {"ip": "9.8.7.6"},
                                             {"ip": "6.6.6.6"}],
                               "ports": [{"port": 8001, "protocol": "tcp"}]}]},
                 ["endpoint2", "1.2.3.4:8001,5.6.7.8:8001,9.8.7.6:8001 + 1 more...", "0s"], id="more-than-three"),
])
def test_print_endpoint(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("endpoints"), obj, want)


def _port(name: str, port: int) -> dict[str, Any]:
    return {"name": name, "port": port, "protocol": "TCP"}


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "abcslice.123", "creationTimestamp": SOON}, "addressType": "IPv4",
                  "ports": [_port("http", 80)], "endpoints": [{"addresses": ["10.1.2.3", "2001:db8::1234:5678"]}]},
                 ["abcslice.123", "IPv4", "80", "10.1.2.3,2001:db8::1234:5678", "0s"], id="one-port"),
    pytest.param({"metadata": {"name": "longerslicename.123", "creationTimestamp": FIVE_MIN_AGO},
                  "addressType": "IPv6", "ports": [_port("http", 80), _port("https", 443)],
                  "endpoints": [{"addresses": ["10.1.2.3", "2001:db8::1234:5678"]},
                                {"addresses": ["10.2.3.4", "2001:db8::2345:6789"]}]},
                 ["longerslicename.123", "IPv6", "80,443", "10.1.2.3,2001:db8::1234:5678,10.2.3.4 + 1 more...", "5m"],
                 id="two-ports-four-addresses"),
    pytest.param({"metadata": {"name": "multiportslice.123", "creationTimestamp": FIVE_MIN_AGO},
                  "addressType": "IPv4",
                  "ports": [_port("http", 80), _port("https", 443), _port("extra1", 3000), _port("extra2", 3001)],
                  "endpoints": [{"addresses": ["10.1.2.3", "2001:db8::1234:5678"]},
                                {"addresses": ["10.2.3.4", "2001:db8::2345:6789"]}]},
                 ["multiportslice.123", "IPv4", "80,443,3000 + 1 more...",
                  "10.1.2.3,2001:db8::1234:5678,10.2.3.4 + 1 more...", "5m"], id="four-ports"),
])
def test_print_endpoint_slice(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("endpointslices.discovery.k8s.io"), obj, want)


# =================================================================================================
# TestPrintScale / TestPrintValidatingAdmissionPolicyBinding / TestPrintResourceQuota
# =================================================================================================


def test_print_scale() -> None:
    scale = {"kind": "Scale", "apiVersion": "autoscaling/v1",
             "metadata": {"name": "test-autoscaling", "creationTimestamp": SOON},
             "spec": {"replicas": 2}, "status": {"replicas": 1}}
    cells = SCALE_PRINTER.cells(scale, NOW)
    assert cells == ["test-autoscaling", 2, 1, "0s"]
    assert [type(c) for c in cells] == [str, int, int, str]
    assert [(c.name, c.type, c.format, c.priority) for c in SCALE_PRINTER.columns] == [
        ("Name", "string", "", 0), ("Desired", "integer", "", 0), ("Available", "integer", "", 0),
        ("Age", "string", "", 0)]


def test_print_validating_admission_policy_binding() -> None:
    obj = {"metadata": {"name": "config", "creationTimestamp": FIVE_MIN_AGO},
           "spec": {"policyName": "test-scale.example.com",
                    "paramRef": {"name": "test-scale-setting.example.com", "parameterNotFoundAction": "Deny"}}}
    check(R("validatingadmissionpolicybindings.admissionregistration.k8s.io"), obj,
          ["config", "test-scale.example.com", "*/test-scale-setting.example.com", "5m"])


def test_print_resource_quota() -> None:
    obj = {"metadata": {"name": "test-resourcequota", "creationTimestamp": FIVE_MIN_AGO}, "spec": {},
           "status": {"used": {"cpu": "1", "memory": "1Gi", "pods": "1", "services": "1",
                               "replicationcontrollers": "1", "resourcequotas": "1", "limits.cpu": "2",
                               "limits.memory": "2Gi"},
                      "hard": {"cpu": "100", "memory": "4Gi", "pods": "10", "services": "10",
                               "replicationcontrollers": "10", "resourcequotas": "1", "limits.cpu": "200",
                               "limits.memory": "8Gi"}}}
    check(R("resourcequotas"), obj, [
        "test-resourcequota",
        "cpu: 1/100, memory: 1Gi/4Gi, pods: 1/10, replicationcontrollers: 1/10, resourcequotas: 1/1, services: 1/10",
        "limits.cpu: 2/200, limits.memory: 2Gi/8Gi", "5m"])


# =================================================================================================
# TestTableRowDeepCopyShouldNotPanic (the served kinds): an empty object prints one row
# =================================================================================================

EMPTY_OBJECT_KINDS = [
    "pods", "podtemplates", "poddisruptionbudgets.policy", "replicationcontrollers", "replicasets.apps", "jobs.batch",
    "cronjobs.batch", "services", "ingresses.networking.k8s.io", "ingressclasses.networking.k8s.io",
    "statefulsets.apps", "daemonsets.apps", "endpoints", "endpointslices.discovery.k8s.io",
    "csinodes.storage.k8s.io", "csidrivers.storage.k8s.io", "csistoragecapacities.storage.k8s.io",
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "validatingadmissionpolicies.admissionregistration.k8s.io",
    "validatingadmissionpolicybindings.admissionregistration.k8s.io", "namespaces", "secrets", "serviceaccounts",
    "nodes", "persistentvolumes", "persistentvolumeclaims", "events", "rolebindings.rbac.authorization.k8s.io",
    "clusterrolebindings.rbac.authorization.k8s.io", "certificatesigningrequests.certificates.k8s.io",
    "componentstatuses", "deployments.apps", "horizontalpodautoscalers.autoscaling", "configmaps",
    "networkpolicies.networking.k8s.io", "storageclasses.storage.k8s.io", "leases.coordination.k8s.io",
    "controllerrevisions.apps", "resourcequotas", "priorityclasses.scheduling.k8s.io", "runtimeclasses.node.k8s.io",
    "volumeattachments.storage.k8s.io",
]


@pytest.mark.parametrize("qualified", EMPTY_OBJECT_KINDS)
def test_table_row_for_empty_object(qualified: str) -> None:
    table = table_of(R(qualified), [{}])
    assert len(table["rows"]) == 1
    assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"])
    assert None not in table["rows"][0]["cells"]  # no printer failure swallowed into null cells


# =================================================================================================
# Column definitions: upstream AddHandlers (name, type, format, priority)
# =================================================================================================

N = ("Name", "string", "name", 0)
AGE = ("Age", "string", "", 0)


def s(name: str, prio: int = 0, typ: str = "string") -> tuple[str, str, str, int]:
    return (name, typ, "", prio)


def i(name: str) -> tuple[str, str, str, int]:
    return (name, "integer", "", 0)


def b(name: str) -> tuple[str, str, str, int]:
    return (name, "boolean", "", 0)


TEMPLATE_WIDE = [s("Containers", 1), s("Images", 1), s("Selector", 1)]

COLUMNS = {
    "pods": [N, s("Ready"), s("Status"), s("Restarts"), AGE, s("IP", 1), s("Node", 1), s("Nominated Node", 1),
             s("Readiness Gates", 1)],
    "podtemplates": [N, s("Containers"), s("Images"), s("Pod Labels")],
    "poddisruptionbudgets.policy": [N, s("Min Available"), s("Max Unavailable"), i("Allowed Disruptions"), AGE],
    "replicationcontrollers": [N, i("Desired"), i("Current"), i("Ready"), AGE, *TEMPLATE_WIDE],
    "replicasets.apps": [N, i("Desired"), i("Current"), i("Ready"), AGE, *TEMPLATE_WIDE],
    "daemonsets.apps": [N, i("Desired"), i("Current"), i("Ready"), i("Up-to-date"), i("Available"),
                        s("Node Selector"), AGE, *TEMPLATE_WIDE],
    "jobs.batch": [N, s("Status"), s("Completions"), s("Duration"), AGE, *TEMPLATE_WIDE],
    "cronjobs.batch": [N, s("Schedule"), s("Timezone"), b("Suspend"), i("Active"), s("Last Schedule"), AGE,
                       *TEMPLATE_WIDE],
    "services": [N, s("Type"), s("Cluster-IP"), s("External-IP"), s("Port(s)"), AGE, s("Selector", 1)],
    "ingresses.networking.k8s.io": [N, s("Class"), s("Hosts"), s("Address"), s("Ports"), AGE],
    "ingressclasses.networking.k8s.io": [N, s("Controller"), s("Parameters"), AGE],
    "statefulsets.apps": [N, s("Ready"), AGE, s("Containers", 1), s("Images", 1)],
    "endpoints": [N, s("Endpoints"), AGE],
    "nodes": [N, s("Status"), s("Roles"), AGE, s("Version"), s("Internal-IP", 1), s("External-IP", 1),
              s("OS-Image", 1), s("Kernel-Version", 1), s("Container-Runtime", 1)],
    "events": [s("Last Seen"), s("Type"), s("Reason"), s("Object"), s("Subobject", 1), s("Source", 1), s("Message"),
               s("First Seen", 1), s("Count", 1), ("Name", "string", "name", 1)],
    "namespaces": [N, s("Status"), AGE],
    "secrets": [N, s("Type"), s("Data"), AGE],
    "serviceaccounts": [N, s("Secrets"), AGE],
    "persistentvolumes": [N, s("Capacity"), s("Access Modes"), s("Reclaim Policy"), s("Status"), s("Claim"),
                          s("StorageClass"), s("VolumeAttributesClass"), s("Reason"), AGE, s("VolumeMode", 1)],
    "persistentvolumeclaims": [N, s("Status"), s("Volume"), s("Capacity"), s("Access Modes"), s("StorageClass"),
                               s("VolumeAttributesClass"), AGE, s("VolumeMode", 1)],
    "componentstatuses": [N, s("Status"), s("Message"), s("Error")],
    "deployments.apps": [N, s("Ready"), s("Up-to-date"), s("Available"), AGE, *TEMPLATE_WIDE],
    "horizontalpodautoscalers.autoscaling": [N, s("Reference"), s("Targets"), s("MinPods"), s("MaxPods"),
                                             s("Replicas"), AGE],
    "configmaps": [N, s("Data"), AGE],
    "networkpolicies.networking.k8s.io": [N, s("Pod-Selector"), AGE],
    "rolebindings.rbac.authorization.k8s.io": [N, s("Role"), AGE, s("Users", 1), s("Groups", 1),
                                               s("ServiceAccounts", 1)],
    "clusterrolebindings.rbac.authorization.k8s.io": [N, s("Role"), AGE, s("Users", 1), s("Groups", 1),
                                                      s("ServiceAccounts", 1)],
    "certificatesigningrequests.certificates.k8s.io": [N, AGE, s("SignerName"), s("Requestor"),
                                                       s("RequestedDuration"), s("Condition")],
    "leases.coordination.k8s.io": [N, s("Holder"), AGE],
    "storageclasses.storage.k8s.io": [N, s("Provisioner"), s("ReclaimPolicy"), s("VolumeBindingMode"),
                                      s("AllowVolumeExpansion"), AGE],
    "controllerrevisions.apps": [N, s("Controller"), s("Revision"), AGE],
    "resourcequotas": [N, s("Request"), s("Limit"), AGE],
    "priorityclasses.scheduling.k8s.io": [N, i("Value"), b("Global-Default"), AGE, s("PreemptionPolicy")],
    "runtimeclasses.node.k8s.io": [N, s("Handler"), AGE],
    "volumeattachments.storage.k8s.io": [N, ("Attacher", "string", "name", 0), s("PV"), s("Node"), b("Attached"),
                                         AGE],
    "endpointslices.discovery.k8s.io": [N, s("AddressType"), s("Ports"), s("Endpoints"), AGE],
    "csinodes.storage.k8s.io": [N, i("Drivers"), AGE],
    "csidrivers.storage.k8s.io": [N, b("AttachRequired"), b("PodInfoOnMount"), b("StorageCapacity"),
                                  s("TokenRequests"), b("RequiresRepublish"), s("Modes"), AGE],
    "csistoragecapacities.storage.k8s.io": [N, s("StorageClassName"), s("Capacity")],
    "mutatingwebhookconfigurations.admissionregistration.k8s.io": [N, i("Webhooks"), AGE],
    "validatingwebhookconfigurations.admissionregistration.k8s.io": [N, i("Webhooks"), AGE],
    "validatingadmissionpolicies.admissionregistration.k8s.io": [N, i("Validations"), s("ParamKind"), AGE],
    "validatingadmissionpolicybindings.admissionregistration.k8s.io": [N, s("PolicyName"), s("ParamRef"), AGE],
}


@pytest.mark.parametrize(("qualified", "want"), [pytest.param(k, v, id=k) for k, v in COLUMNS.items()])
def test_column_definitions(qualified: str, want: list[tuple[str, str, str, int]]) -> None:
    defs = table_of(R(qualified), [])["columnDefinitions"]
    assert [(d["name"], d["type"], d["format"], d["priority"]) for d in defs] == want


# the literal (non-SwaggerDoc) descriptions upstream's AddHandlers spells out
@pytest.mark.parametrize(("qualified", "column", "description"), [
    ("ingresses.networking.k8s.io", "Class",
     "The name of the IngressClass resource that should be used for additional configuration"),
    ("mutatingwebhookconfigurations.admissionregistration.k8s.io", "Webhooks",
     "Webhooks indicates the number of webhooks registered in this configuration"),
    ("validatingwebhookconfigurations.admissionregistration.k8s.io", "Webhooks",
     "Webhooks indicates the number of webhooks registered in this configuration"),
    ("rolebindings.rbac.authorization.k8s.io", "Users", "Users in the roleBinding"),
    ("clusterrolebindings.rbac.authorization.k8s.io", "Users", "Users in the clusterRoleBinding"),
    ("clusterrolebindings.rbac.authorization.k8s.io", "Groups", "Groups in the clusterRoleBinding"),
    ("clusterrolebindings.rbac.authorization.k8s.io", "ServiceAccounts", "ServiceAccounts in the clusterRoleBinding"),
    # metav1.ObjectMeta{}.SwaggerDoc()["handler"]: ObjectMeta has no such field, so ""
    ("runtimeclasses.node.k8s.io", "Handler", ""),
    ("csinodes.storage.k8s.io", "Drivers", "Drivers indicates the number of CSI drivers registered on the node"),
    ("validatingadmissionpolicies.admissionregistration.k8s.io", "Validations",
     "Validations indicates the number of validation rules defined in this configuration"),
    ("validatingadmissionpolicybindings.admissionregistration.k8s.io", "ParamRef",
     "ParamRef indicates the param resource which sets the configration param"),
    ("resourcequotas", "Limit",
     "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
    ("jobs.batch", "Duration", "Time required to complete the job."),
    ("controllerrevisions.apps", "Controller", "Controller of the object"),
])
def test_literal_column_descriptions(qualified: str, column: str, description: str) -> None:
    defs = {d["name"]: d for d in table_of(R(qualified), [])["columnDefinitions"]}
    assert defs[column]["description"] == description


# =================================================================================================
# Not in upstream's tables: behaviour read from upstream printers.go that the fixes above follow
# =================================================================================================


@pytest.mark.parametrize(("rules", "want"), [
    pytest.param([], "*", id="no-rules"),
    pytest.param([{"http": {}}], "*", id="rule-without-host"),
    pytest.param([{"host": "a"}, {"host": "b"}, {"host": "c"}], "a,b,c", id="three-hosts"),
    pytest.param([{"host": "a"}, {"host": "b"}, {"host": "c"}, {}], "a,b,c + 1 more...",
                 id="hostless-fourth-rule-still-counts"),
    pytest.param([{}, {"host": "a"}, {"host": "b"}, {"host": "c"}, {"host": "d"}], "a,b,c + 2 more...",
                 id="more-counts-rules-not-hosts"),
])
def test_source_ingress_format_hosts(rules: list[dict[str, Any]], want: str) -> None:
    obj = {"metadata": {"name": "i"}, "spec": {"rules": rules}}
    assert rows_of(R("ingresses.networking.k8s.io"), [obj], wide=True)[0]["cells"][2] == want


@pytest.mark.parametrize(("spec", "want"), [
    pytest.param({}, [True, False, False, "<unset>", False, "<none>"], id="defaults"),
    pytest.param({"attachRequired": False, "podInfoOnMount": True, "storageCapacity": True,
                  "tokenRequests": [{"audience": "a"}, {"audience": ""}], "requiresRepublish": True,
                  "volumeLifecycleModes": ["Persistent", "Ephemeral"]},
                 [False, True, True, "a,", True, "Persistent,Ephemeral"], id="all-set"),
    pytest.param({"tokenRequests": []}, [True, False, False, "", False, "<none>"], id="empty-token-requests"),
])
def test_source_csi_driver(spec: dict[str, Any], want: list[Any]) -> None:
    obj = {"metadata": {"name": "d", "creationTimestamp": FIVE_MIN_AGO}, "spec": spec}
    check(R("csidrivers.storage.k8s.io"), obj, ["d", *want, "5m"])


@pytest.mark.parametrize(("ref", "want"), [
    pytest.param(None, "<unset>", id="no-param-ref"),
    pytest.param({"name": "p", "namespace": "ns"}, "ns/p", id="namespaced-name"),
    pytest.param({"selector": {"matchLabels": {"b": "2", "a": "1"},
                               "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}]}},
                 "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement"
                 "{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}", id="selector-printed-as-go-struct"),
])
def test_source_validating_admission_policy_binding_param_ref(ref: dict[str, Any] | None, want: str) -> None:
    spec: dict[str, Any] = {"policyName": "p"}
    if ref is not None:
        spec["paramRef"] = ref
    obj = {"metadata": {"name": "b"}, "spec": spec}
    assert rows_of(R("validatingadmissionpolicybindings.admissionregistration.k8s.io"), [obj],
                   wide=True)[0]["cells"][2] == want


@pytest.mark.parametrize(("metrics", "current", "want"), [
    pytest.param([_obj(AVG100)], None, "<unknown>/100m (avg)", id="object-average-value-no-current"),
    pytest.param([_obj(AVG100)], [_obj_status({"averageValue": "50m"})], "50m/100m (avg)",
                 id="object-average-value"),
    pytest.param([{"type": "Custom"}], None, "<unknown type>", id="unknown-metric-type"),
    pytest.param([_res({"type": "Utilization"})], None, "cpu: <unknown>/<auto>", id="utilization-without-target"),
])
def test_source_hpa_metrics(metrics: list[dict[str, Any]], current: list[dict[str, Any]] | None, want: str) -> None:
    check(R("horizontalpodautoscalers.autoscaling"), _hpa(metrics, current), _hpa_row(want))


@pytest.mark.parametrize(("obj", "want"), [
    pytest.param({"metadata": {"name": "c"}, "storageClassName": "fast", "capacity": "1024Mi"}, ["c", "fast", "1Gi"],
                 id="capacity"),
    pytest.param({"metadata": {"name": "c"}, "storageClassName": "fast"}, ["c", "fast", "<unset>"], id="no-capacity"),
])
def test_source_csi_storage_capacity(obj: dict[str, Any], want: list[Any]) -> None:
    check(R("csistoragecapacities.storage.k8s.io"), obj, want)


def test_scale_table_through_to_table() -> None:
    scale = {"metadata": {"name": "web", "creationTimestamp": FIVE_MIN_AGO, "resourceVersion": "9"},
             "spec": {"replicas": 3}, "status": {"replicas": 2}}
    table = to_table(R("deployments.apps"), [scale], now=NOW, printer=SCALE_PRINTER)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Desired", "Available", "Age"]
    assert table["rows"][0]["cells"] == ["web", 3, 2, "5m"]
