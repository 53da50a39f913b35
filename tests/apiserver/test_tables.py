"""Server-side Tables: upstream printers' columns and cells, ages, CRD printer columns, options."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from apiserver.handlers.tables import (
    builtin_printers,
    human_duration,
    pod_status_reason,
    to_table,
    watch_table_event,
)
from minik3s.api.errors import BadRequestError
from minik3s.api.resources import (
    CRDS,
    DEPLOYMENTS,
    ENDPOINTSLICES,
    EVENTS,
    NAMESPACES,
    NODES,
    PODDISRUPTIONBUDGETS,
    PODS,
    PRIORITYCLASSES,
    REPLICASETS,
    SERVICES,
    ResourceInfo,
    ResourceRegistry,
)

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)


def ago(**kw: float) -> str:
    return (NOW - timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%SZ")


def cells(info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
    table = to_table(info, [obj], now=NOW)
    names = [c["name"] for c in table["columnDefinitions"]]
    return dict(zip(names, table["rows"][0]["cells"], strict=True))


# ---- ages: upstream duration_test.go ------------------------------------------------------------


@pytest.mark.parametrize(
    ("d", "want"),
    [
        pytest.param(timedelta(seconds=1), "1s", id="one-second"),
        pytest.param(timedelta(seconds=70), "70s", id="seconds-below-two-minutes"),
        pytest.param(timedelta(seconds=190), "3m10s", id="minutes-and-seconds-below-ten-minutes"),
        pytest.param(timedelta(minutes=5), "5m", id="whole-minutes"),
        pytest.param(timedelta(minutes=70), "70m", id="minutes-below-three-hours"),
        pytest.param(timedelta(hours=3, minutes=20), "3h20m", id="hours-and-minutes-below-eight-hours"),
        pytest.param(timedelta(hours=47), "47h", id="hours-below-two-days"),
        pytest.param(timedelta(hours=49), "2d1h", id="days-and-hours-below-eight-days"),
        pytest.param(timedelta(hours=8 * 24 + 2), "8d", id="days-below-two-years"),
        pytest.param(timedelta(hours=367 * 24), "367d", id="over-a-year-in-days"),
        pytest.param(timedelta(hours=365 * 2 * 24 + 25), "2y1d", id="years-and-days"),
        pytest.param(timedelta(hours=365 * 8 * 24 + 2), "8y", id="years"),
        pytest.param(timedelta(seconds=-1), "0s", id="clock-skew-tolerated"),
        pytest.param(timedelta(seconds=-2), "<invalid>", id="future-timestamp"),
    ],
)
def test_human_duration(d: timedelta, want: str) -> None:
    assert human_duration(d) == want


# ---- pods: modelled on upstream TestPrintPod* tables -------------------------------------------


def pod(*, phase: str = "Running", statuses: list[dict[str, Any]] | None = None,
        init: list[dict[str, Any]] | None = None, init_statuses: list[dict[str, Any]] | None = None,
        containers: int = 2, **extra: Any) -> dict[str, Any]:
    p: dict[str, Any] = {
        "metadata": {"name": "test1", "namespace": "ns", "creationTimestamp": ago(minutes=5)},
        "spec": {"containers": [{"name": f"c{i}"} for i in range(containers)], "initContainers": init or []},
        "status": {"phase": phase, "containerStatuses": statuses or [], "initContainerStatuses": init_statuses or []},
    }
    for k, v in extra.items():
        p["status" if k in ("conditions", "reason") else "metadata"][k] = v
    return p


RUNNING = {"running": {}}


@pytest.mark.parametrize(
    ("obj", "ready", "status", "restarts"),
    [
        pytest.param(pod(statuses=[{"ready": True, "restartCount": 3, "state": RUNNING},
                                   {"restartCount": 3, "state": RUNNING}]),
                     "1/2", "Running", "6", id="one-of-two-ready"),
        pytest.param(pod(phase="Pending", statuses=[{"state": {"waiting": {"reason": "ContainerCreating"}}}],
                         containers=1),
                     "0/1", "ContainerCreating", "0", id="waiting-reason-wins"),
        pytest.param(pod(statuses=[{"state": {"waiting": {"reason": "CrashLoopBackOff"}}, "restartCount": 4}],
                         containers=1),
                     "0/1", "CrashLoopBackOff", "4", id="crashloop"),
        pytest.param(pod(phase="Failed", statuses=[{"state": {"terminated": {"exitCode": 1}}}], containers=1),
                     "0/1", "ExitCode:1", "0", id="terminated-without-reason-shows-exit-code"),
        pytest.param(pod(phase="Failed", statuses=[{"state": {"terminated": {"exitCode": 0, "signal": 9}}}],
                         containers=1),
                     "0/1", "Signal:9", "0", id="terminated-by-signal"),
        pytest.param(pod(phase="Succeeded", statuses=[{"state": {"terminated": {"reason": "Completed"}}}],
                         containers=1),
                     "0/1", "Completed", "0", id="completed"),
        pytest.param(pod(statuses=[{"state": {"terminated": {"reason": "Completed"}}},
                                   {"ready": True, "state": RUNNING}],
                         conditions=[{"type": "Ready", "status": "True"}]),
                     "1/2", "Running", "0", id="completed-container-but-pod-ready-shows-running"),
        pytest.param(pod(statuses=[{"state": {"terminated": {"reason": "Completed"}}},
                                   {"ready": True, "state": RUNNING}]),
                     "1/2", "NotReady", "0", id="completed-container-pod-not-ready"),
        pytest.param(pod(statuses=[{"state": {"terminated": {"reason": "Completed"}}},
                                   {"state": {"terminated": {"reason": "Error", "exitCode": 2}}}], phase="Running"),
                     "0/2", "Error", "0", id="completed-but-another-container-failed-shows-the-error"),
        pytest.param(pod(statuses=[{"ready": True, "state": RUNNING}], containers=1,
                         deletionTimestamp=ago(seconds=1)),
                     "1/1", "Terminating", "0", id="deleting-running-pod-is-terminating"),
        pytest.param(pod(phase="Succeeded", containers=1, deletionTimestamp=ago(seconds=1)),
                     "0/1", "Succeeded", "0", id="deleting-terminal-pod-keeps-phase"),
        pytest.param(pod(containers=1, deletionTimestamp=ago(seconds=1), reason="NodeLost"),
                     "0/1", "Unknown", "0", id="node-lost-pod-is-unknown"),
        pytest.param(pod(phase="Pending", containers=1, init=[{"name": "i1"}, {"name": "i2"}],
                         init_statuses=[{"name": "i1", "state": {"terminated": {"exitCode": 0}}},
                                        {"name": "i2", "state": RUNNING}]),
                     "0/1", "Init:1/2", "0", id="second-init-container-running"),
        pytest.param(pod(phase="Pending", containers=1, init=[{"name": "i1"}],
                         init_statuses=[{"name": "i1", "restartCount": 3,
                                         "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]),
                     "0/1", "Init:CrashLoopBackOff", "3", id="init-container-crashlooping"),
        pytest.param(pod(phase="Pending", containers=1, init=[{"name": "i1"}],
                         init_statuses=[{"name": "i1", "state": {"terminated": {"exitCode": 3}}}]),
                     "0/1", "Init:ExitCode:3", "0", id="init-container-failed"),
        pytest.param(pod(phase="Pending", containers=1, init=[{"name": "i1"}],
                         init_statuses=[{"name": "i1", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]),
                     "0/1", "Init:Error", "0", id="init-container-error-reason"),
        pytest.param(pod(containers=1, init=[{"name": "side", "restartPolicy": "Always"}],
                         init_statuses=[{"name": "side", "started": True, "ready": True, "state": RUNNING}],
                         statuses=[{"ready": True, "state": RUNNING}],
                         conditions=[{"type": "Initialized", "status": "True"}]),
                     "2/2", "Running", "0", id="ready-sidecar-counts-towards-ready"),
        pytest.param(pod(phase="Pending", containers=1,
                         conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]),
                     "0/1", "SchedulingGated", "0", id="scheduling-gated"),
    ],
)
def test_pod_ready_status_restarts(obj: dict[str, Any], ready: str, status: str, restarts: str) -> None:
    c = cells(PODS, obj)
    assert (c["Ready"], c["Status"], c["Restarts"]) == (ready, status, restarts)


def test_pod_restarts_show_time_since_last_restart() -> None:
    obj = pod(containers=1, statuses=[{"ready": True, "state": RUNNING, "restartCount": 5,
                                       "lastState": {"terminated": {"finishedAt": ago(minutes=5)}}}])
    assert cells(PODS, obj)["Restarts"] == "5 (5m ago)"


def test_pod_wide_columns() -> None:
    obj = pod(containers=1, statuses=[{"ready": True, "state": RUNNING}],
              conditions=[{"type": "Ready", "status": "True"}, {"type": "example.com/gate", "status": "True"}])
    obj["spec"].update(nodeName="n1", readinessGates=[{"conditionType": "example.com/gate"},
                                                      {"conditionType": "other"}])
    obj["status"].update(podIPs=[{"ip": "10.0.0.7"}], nominatedNodeName="")
    c = cells(PODS, obj)
    assert [c["IP"], c["Node"], c["Nominated Node"], c["Readiness Gates"]] == ["10.0.0.7", "n1", "<none>", "1/2"]
    assert (c["Name"], c["Age"]) == ("test1", "5m")


def test_pod_column_definitions_and_row_object() -> None:
    table = to_table(PODS, [pod(phase="Succeeded")], now=NOW, list_meta={"resourceVersion": "42", "continue": "c"})
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0),
        ("IP", 1), ("Node", 1), ("Nominated Node", 1), ("Readiness Gates", 1)]
    assert table["columnDefinitions"][0]["format"] == "name"
    assert (table["kind"], table["apiVersion"], table["metadata"]) == (
        "Table", "meta.k8s.io/v1", {"resourceVersion": "42", "continue": "c"})
    row = table["rows"][0]
    assert row["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": pod()["metadata"]}
    assert row["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                  "message": "The pod has completed successfully."}]


def test_pod_status_reason_is_reusable() -> None:
    assert pod_status_reason(pod(containers=1, statuses=[{"ready": True, "state": RUNNING}]))[:3] == (
        1, 1, "Running")


# ---- nodes ---------------------------------------------------------------------------------------


def node(conditions: list[dict[str, Any]] | None, *, unschedulable: bool = False,
         labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "n1", "creationTimestamp": ago(days=3, hours=2), "labels": labels or {}},
            "spec": {"unschedulable": unschedulable},
            "status": {"conditions": conditions or [], "nodeInfo": {"kubeletVersion": "v1.33.0"}}}


@pytest.mark.parametrize(
    ("obj", "status", "roles"),
    [
        pytest.param(node([{"type": "Ready", "status": "True"}]), "Ready", "<none>", id="ready-node"),
        pytest.param(node([{"type": "Ready", "status": "False"}]), "NotReady", "<none>", id="not-ready"),
        pytest.param(node([{"type": "Ready", "status": "Unknown"}]), "NotReady", "<none>",
                     id="unknown-ready-condition-prints-not-ready"),
        pytest.param(node(None), "Unknown", "<none>", id="no-ready-condition"),
        pytest.param(node([{"type": "Ready", "status": "True"}], unschedulable=True), "Ready,SchedulingDisabled",
                     "<none>", id="cordoned"),
        pytest.param(node([{"type": "Ready", "status": "True"}],
                          labels={"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": "",
                                  "kubernetes.io/role": "edge", "node-role.kubernetes.io/": "x"}),
                     "Ready", "control-plane,edge,worker", id="roles-sorted-from-both-label-forms"),
    ],
)
def test_node_status_and_roles(obj: dict[str, Any], status: str, roles: str) -> None:
    c = cells(NODES, obj)
    assert (c["Status"], c["Roles"], c["Age"], c["Version"]) == (status, roles, "3d2h", "v1.33.0")


def test_node_wide_columns_default_to_unknown_and_none() -> None:
    obj = node([{"type": "Ready", "status": "True"}])
    obj["status"]["addresses"] = [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "10.1.0.1"}]
    c = cells(NODES, obj)
    assert [c["Internal-IP"], c["External-IP"], c["OS-Image"], c["Kernel-Version"], c["Container-Runtime"]] == [
        "10.1.0.1", "<none>", "<unknown>", "<unknown>", "<unknown>"]


# ---- other built-in kinds -------------------------------------------------------------------------


def test_event_columns_and_fallbacks() -> None:
    ev = {"metadata": {"name": "web-1.abc", "namespace": "default"}, "type": "Normal", "reason": "Scheduled",
          "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{c}"},
          "message": " Successfully assigned default/web-1 to n1\n", "eventTime": ago(minutes=3),
          "reportingComponent": "default-scheduler", "source": {"host": "n1"}}
    c = cells(EVENTS, ev)
    assert c == {"Last Seen": "3m", "Type": "Normal", "Reason": "Scheduled", "Object": "pod/web-1",
                 "Subobject": "spec.containers{c}", "Source": "default-scheduler, n1",
                 "Message": "Successfully assigned default/web-1 to n1", "First Seen": "3m", "Count": 1,
                 "Name": "web-1.abc"}
    ev.update(firstTimestamp=ago(hours=1), lastTimestamp=ago(minutes=2), count=7)
    c = cells(EVENTS, ev)
    assert (c["Last Seen"], c["First Seen"], c["Count"]) == ("2m", "60m", 7)
    ev["series"] = {"count": 9, "lastObservedTime": ago(seconds=30)}
    assert (cells(EVENTS, ev)["Last Seen"], cells(EVENTS, ev)["Count"]) == ("30s", 9)


def test_events_k8s_io_event_prints_like_core_event() -> None:
    info = ResourceRegistry().get("events.k8s.io", "v1", "events")
    assert info is not None
    ev = {"metadata": {"name": "e"}, "type": "Warning", "reason": "FailedScheduling", "note": "0/3 nodes",
          "regarding": {"kind": "Pod", "name": "p"}, "eventTime": ago(seconds=10),
          "reportingController": "default-scheduler"}
    c = cells(info, ev)
    assert (c["Last Seen"], c["Object"], c["Message"], c["Source"]) == ("10s", "pod/p", "0/3 nodes",
                                                                        "default-scheduler")


@pytest.mark.parametrize(
    ("info", "obj", "expected"),
    [
        pytest.param(DEPLOYMENTS, {"metadata": {"name": "d"}, "spec": {
            "replicas": 3, "selector": {"matchLabels": {"app": "web"},
                                        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["b", "a"]}]},
            "template": {"spec": {"containers": [{"name": "c1", "image": "i1"}, {"name": "c2", "image": "i2"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}},
            {"Ready": "2/3", "Up-to-date": 3, "Available": 2, "Containers": "c1,c2", "Images": "i1,i2",
             "Selector": "app=web,tier notin (a,b)"}, id="deployment"),
        pytest.param(REPLICASETS, {"metadata": {"name": "rs"}, "spec": {"replicas": 2, "template": {}},
                                   "status": {"replicas": 2, "readyReplicas": 1}},
                     {"Desired": 2, "Current": 2, "Ready": 1, "Selector": "<none>"}, id="replicaset-without-selector"),
        pytest.param(NAMESPACES, {"metadata": {"name": "team", "creationTimestamp": ago(seconds=90)},
                                  "status": {"phase": "Active"}},
                     {"Name": "team", "Status": "Active", "Age": "90s"}, id="namespace"),
        pytest.param(PRIORITYCLASSES, {"metadata": {"name": "high"}, "value": 1000,
                                       "preemptionPolicy": "PreemptLowerPriority"},
                     {"Value": 1000, "Global-Default": False, "PreemptionPolicy": "PreemptLowerPriority"},
                     id="priorityclass"),
        pytest.param(PODDISRUPTIONBUDGETS, {"metadata": {"name": "pdb"}, "spec": {"minAvailable": "50%"},
                                            "status": {"disruptionsAllowed": 1}},
                     {"Min Available": "50%", "Max Unavailable": "N/A", "Allowed Disruptions": 1}, id="pdb"),
        pytest.param(SERVICES, {"metadata": {"name": "s"}, "spec": {
            "type": "NodePort", "clusterIPs": ["10.0.0.10"], "selector": {"b": "2", "a": "1"},
            "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "nodePort": 30443, "protocol": "TCP"}]}},
            {"Type": "NodePort", "Cluster-IP": "10.0.0.10", "External-IP": "<none>",
             "Port(s)": "80/TCP,443:30443/TCP", "Selector": "a=1,b=2"}, id="nodeport-service"),
        pytest.param(SERVICES, {"metadata": {"name": "s"}, "spec": {"type": "LoadBalancer", "ports": []}},
                     {"Cluster-IP": "<none>", "External-IP": "<pending>", "Port(s)": "<none>"},
                     id="pending-load-balancer"),
        pytest.param(ResourceRegistry().get("", "v1", "resourcequotas"), {"metadata": {"name": "q"}, "status": {
            "hard": {"pods": "10", "limits.cpu": "4", "requests.cpu": "2"}, "used": {"pods": "3"}}},
            {"Request": "pods: 3/10, requests.cpu: 0/2", "Limit": "limits.cpu: 0/4"}, id="resourcequota"),
        pytest.param(ResourceRegistry().get("", "v1", "persistentvolumeclaims"), {
            "metadata": {"name": "data", "annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
            "spec": {"storageClassName": "fast", "volumeMode": "Filesystem",
                     "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending"}},
            {"Status": "Pending", "Volume": "", "Capacity": "", "Access Modes": "", "StorageClass": "old",
             "VolumeAttributesClass": "<unset>", "VolumeMode": "Filesystem"}, id="pending-claim"),
        pytest.param(ResourceRegistry().get("", "v1", "persistentvolumeclaims"), {
            "metadata": {"name": "data", "deletionTimestamp": "2026-05-01T10:00:00Z"},
            "spec": {"volumeName": "pv-1", "storageClassName": "fast"},
            "status": {"phase": "Bound", "capacity": {"storage": "1024Mi"},
                       "accessModes": ["ReadWriteMany", "ReadWriteOnce"]}},
            {"Status": "Terminating", "Volume": "pv-1", "Capacity": "1Gi", "Access Modes": "RWO,RWX",
             "StorageClass": "fast", "VolumeMode": "<unset>"}, id="bound-claim-being-deleted"),
        pytest.param(ResourceRegistry().get("", "v1", "persistentvolumes"), {
            "metadata": {"name": "pv-1"},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOncePod"],
                     "persistentVolumeReclaimPolicy": "Retain", "claimRef": {"namespace": "ns", "name": "data"},
                     "storageClassName": "fast", "volumeMode": "Block"},
            "status": {"phase": "Bound"}},
            {"Capacity": "10Gi", "Access Modes": "RWOP", "Reclaim Policy": "Retain", "Status": "Bound",
             "Claim": "ns/data", "StorageClass": "fast", "VolumeAttributesClass": "<unset>", "Reason": "",
             "VolumeMode": "Block"}, id="persistentvolume"),
        pytest.param(ENDPOINTSLICES, {"metadata": {"name": "web-abc"}, "addressType": "IPv4",
                                      "ports": [{"port": 80}, {"name": "metrics"}, {}, {"port": 9090}],
                                      "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]},
                                                    {"addresses": ["10.0.0.3", "10.0.0.4"]}, {"addresses": []}]},
                     {"AddressType": "IPv4", "Ports": "80,metrics,* + 1 more...",
                      "Endpoints": "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."}, id="endpointslice-more-than-three"),
        pytest.param(ENDPOINTSLICES, {"metadata": {"name": "web-abc"}, "addressType": "IPv6", "endpoints": []},
                     {"AddressType": "IPv6", "Ports": "<unset>", "Endpoints": "<unset>"}, id="endpointslice-empty"),
        pytest.param(CRDS, {"metadata": {"name": "podgroups.scheduling.x-k8s.io",
                                         "creationTimestamp": "2026-05-01T10:00:00Z"}},
                     {"Name": "podgroups.scheduling.x-k8s.io", "Created At": "2026-05-01T10:00:00Z"},
                     id="crd-uses-default-convertor"),
    ],
)
def test_builtin_printers(info: ResourceInfo, obj: dict[str, Any], expected: dict[str, Any]) -> None:
    c = cells(info, obj)
    assert {k: c[k] for k in expected} == expected


@pytest.mark.parametrize(("key", "printer"), [pytest.param(k, p, id=f"{k[1]}.{k[0] or 'core'}")
                                              for k, p in builtin_printers().items()])
def test_every_printer_emits_one_cell_per_column_even_for_empty_objects(key: tuple[str, str], printer: Any) -> None:
    for obj in ({}, {"metadata": {"name": "x"}, "spec": None, "status": None}):
        assert len(printer.cells(obj, NOW)) == len(printer.columns)


# ---- custom resources -----------------------------------------------------------------------------


def _cr(columns: tuple[dict[str, Any], ...]) -> ResourceInfo:
    return ResourceInfo("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True, builtin=False,
                        printer_columns=columns)


def test_custom_resource_without_printer_columns_prints_name_and_age() -> None:
    table = to_table(_cr(()), [{"metadata": {"name": "pg1", "creationTimestamp": ago(minutes=5)}}], now=NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["columnDefinitions"][1]["type"] == "date"
    assert table["rows"][0]["cells"] == ["pg1", "5m"]


def test_custom_resource_printer_columns() -> None:
    columns = (
        {"name": "Min", "type": "integer", "jsonPath": ".spec.minMember"},
        {"name": "Phase", "type": "string", "jsonPath": ".status.phase", "priority": 1, "description": "phase"},
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Scheduled", "type": "date", "jsonPath": ".status.scheduleStartTime"},
        {"name": "Missing", "type": "string", "jsonPath": ".status.nothing"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        {"name": "Bad", "type": "boolean", "jsonPath": ".spec.minMember"},
    )
    obj = {"metadata": {"name": "pg", "creationTimestamp": ago(hours=5)},
           "spec": {"minMember": 3},
           "status": {"phase": "Running", "scheduleStartTime": ago(seconds=42),
                      "conditions": [{"type": "Other", "status": "False"}, {"type": "Ready", "status": "True"}]}}
    table = to_table(_cr(columns), [obj], now=NOW)
    defs = table["columnDefinitions"]
    assert [d["name"] for d in defs] == ["Name", "Min", "Phase", "Ready", "Scheduled", "Missing", "Age", "Bad"]
    assert defs[2]["priority"] == 1 and defs[2]["description"] == "phase"
    assert defs[1]["description"] == "Custom resource definition column (in JSONPath format): .spec.minMember"
    assert table["rows"][0]["cells"] == ["pg", 3, "Running", "True", "42s", None, "5h", None]


# ---- options and watch ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("include", "expected"),
    [
        pytest.param("None", None, id="include-none"),
        pytest.param("Object", {"metadata": {"name": "team"}, "kind": "Namespace", "apiVersion": "v1"},
                     id="include-full-object"),
    ],
)
def test_include_object(include: str, expected: Any) -> None:
    table = to_table(NAMESPACES, [{"metadata": {"name": "team"}}], now=NOW, include_object=include)
    assert table["rows"][0]["object"] == expected


def test_single_object_table_carries_the_object_resource_version() -> None:
    obj = {"metadata": {"name": "team", "resourceVersion": "12"}}
    assert to_table(NAMESPACES, [obj], now=NOW)["metadata"] == {"resourceVersion": "12"}
    assert to_table(NAMESPACES, [obj], now=NOW, list_meta={"resourceVersion": "99"})["metadata"] == {
        "resourceVersion": "99"}


def test_unknown_include_object_is_bad_request() -> None:
    with pytest.raises(BadRequestError, match='unrecognized includeObject value: "Everything"'):
        to_table(NAMESPACES, [], now=NOW, include_object="Everything")


def test_watch_events_carry_headers_only_first() -> None:
    obj = {"metadata": {"name": "team", "resourceVersion": "7"}, "status": {"phase": "Active"}}
    first = watch_table_event(NAMESPACES, "ADDED", obj, NOW)
    later = watch_table_event(NAMESPACES, "MODIFIED", obj, NOW, no_headers=True)
    assert first["type"] == "ADDED" and first["object"]["kind"] == "Table"
    assert len(first["object"]["columnDefinitions"]) == 3
    assert later["object"]["columnDefinitions"] is None
    assert later["object"]["metadata"] == {"resourceVersion": "7"}
    assert later["object"]["rows"][0]["cells"][:2] == ["team", "Active"]
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410}
    assert watch_table_event(NAMESPACES, "ERROR", status, NOW) == {"type": "ERROR", "object": status}


def test_pod_ages_in_one_table_and_across_tables_follow_each_tables_now() -> None:
    # many pods share a creation second; each table's ages are computed at that table's now
    created = ago(seconds=30)
    pods = [{"metadata": {"name": f"p{i}", "namespace": "default", "creationTimestamp": created},
             "spec": {"containers": [{"name": "c"}]}} for i in range(3)]
    pods.append({"metadata": {"name": "odd", "namespace": "default", "creationTimestamp": {"not": "a time"}},
                 "spec": {"containers": [{"name": "c"}]}})
    first = to_table(PODS, pods, now=NOW)
    later = to_table(PODS, pods, now=NOW + timedelta(minutes=5))
    assert [r["cells"][4] for r in first["rows"]] == ["30s", "30s", "30s", "<unknown>"]
    assert [r["cells"][4] for r in later["rows"]] == ["5m30s", "5m30s", "5m30s", "<unknown>"]
