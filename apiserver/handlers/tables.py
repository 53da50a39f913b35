"""Server-side Tables for `kubectl get` (layer L4, apiserver; pure functions, no I/O).

kubectl asks for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` on every human-readable
`get` and prints the cells verbatim, so the server owns the columns, the STATUS logic and the age
formatting. This module mirrors kube-apiserver's printers
(`pkg/printers/internalversion/printers.go`, served through `pkg/printers/storage` with
`Wide: true`, so priority-1 cells are always present), the CRD table convertor
(`apiextensions-apiserver/.../tableconvertor`: Name + `additionalPrinterColumns`, defaulting to an
Age column) and the generic default convertor (`registry/rest/table.go`: Name + Created At).

Data flow: handler lists/gets objects → `to_table(info, objects, now=...)` → Table JSON dict.
Watch handlers call `watch_table_event(...)` per event; upstream sends `columnDefinitions` only on
the first event of a stream (later ones carry `null`), so pass `no_headers=True` after the first.

Ages follow `k8s.io/apimachinery/pkg/util/duration.HumanDuration` exactly (see `human_duration`).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from minik3s.api.autoscaling_v1 import V1 as HPA_V1
from minik3s.api.autoscaling_v1 import ConversionError, hpa_v1_to_v2
from minik3s.api.errors import BadRequestError
from minik3s.api.helpers.persistent_volumes import is_default_class
from minik3s.api.quantity import canonical_or_text
from minik3s.api.resources import ResourceInfo
from minik3s.api.selectors import label_selector_string
from minik3s.api.types import JsonDict
from minik3s.utils import clock as _clock

logger = logging.getLogger(__name__)

TABLE_API_VERSION = "meta.k8s.io/v1"

# --------------------------------------------------------------------------------------------
# Durations and timestamps
# --------------------------------------------------------------------------------------------

human_duration = _clock.human_duration
parse_timestamp = _clock.parse_time


def since(value: Any, now: datetime) -> str:
    """Upstream `translateTimestampSince`: "<unknown>" for a zero/missing time, else an age."""
    if not isinstance(value, str):
        return "<unknown>"
    return _since_text(value, now)


@functools.lru_cache(maxsize=4096)
def _since_text(value: str, now: datetime) -> str:
    # A pure function of its arguments, memoised: one table is rendered at one `now`, and the
    # objects of a list share few distinct timestamps (seconds resolution), so a 50,000-pod
    # table parses a few hundred of them instead of 50,000.
    ts = parse_timestamp(value)
    if ts is None:
        return "<unknown>"
    return human_duration(now - ts)


# --------------------------------------------------------------------------------------------
# Small formatting helpers (upstream names in comments)
# --------------------------------------------------------------------------------------------


def _d(obj: Any, *path: str) -> Any:
    cur = obj
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def _dict(v: Any) -> JsonDict:
    return v if isinstance(v, dict) else {}


def _int(v: Any, default: int = 0) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return default
    return default


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def format_labels(labels: Any) -> str:
    """`labels.FormatLabels`: sorted `k=v` joined by ",", or "<none>"."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


selector_string = label_selector_string


def format_label_selector(selector: Any) -> str:
    """`metav1.FormatLabelSelector`: like `selector_string` but "<none>" when empty, "<error>" if bad."""
    s = selector_string(selector)
    if s is None:
        return "<error>"
    return s or "<none>"


def _containers_cells(pod_spec: Any) -> tuple[str, str]:
    """`layoutContainerCells`: container names and images, comma separated."""
    containers = _d(pod_spec, "containers") or []
    names = ",".join(_str(c.get("name")) for c in containers if isinstance(c, dict))
    images = ",".join(_str(c.get("image")) for c in containers if isinstance(c, dict))
    return names, images


def _int_or_string(v: Any) -> str:
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    return _str(v)


def _has_condition(conditions: Any, ctype: str, status: str = "True") -> bool:
    for c in conditions or []:
        if isinstance(c, dict) and c.get("type") == ctype:
            return c.get("status") == status
    return False


# --------------------------------------------------------------------------------------------
# Column definitions
# --------------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Column:
    name: str
    type: str = "string"
    description: str = ""
    format: str = ""
    priority: int = 0

    def to_json(self) -> JsonDict:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


_NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC."
)
_CONTAINERS_DOC = "Names of each container in the template."
_IMAGES_DOC = "Images referenced by each container in the template."


def _name() -> Column:
    return Column("Name", "string", _NAME_DOC, "name")


def _age() -> Column:
    return Column("Age", "string", _AGE_DOC)


def _wide(name: str, doc: str, type_: str = "string") -> Column:
    return Column(name, type_, doc, priority=1)


CellsFn = Callable[[JsonDict, datetime], list[Any]]


@dataclass(slots=True, frozen=True)
class Printer:
    columns: tuple[Column, ...]
    cells: CellsFn
    row_conditions: Callable[[JsonDict], list[JsonDict] | None] | None = None
    # a kind's list printer that sorts its rows (printFlowSchemaList: by matchingPrecedence, name)
    order: Callable[[list[JsonDict]], list[JsonDict]] | None = None


# --------------------------------------------------------------------------------------------
# Pods
# --------------------------------------------------------------------------------------------

_NODE_UNREACHABLE_POD_REASON = "NodeLost"


def _is_restartable_init(container: Any) -> bool:
    return isinstance(container, dict) and container.get("restartPolicy") == "Always"


def _finished_at(cs: JsonDict) -> datetime | None:
    return parse_timestamp(_d(cs, "lastState", "terminated", "finishedAt"))


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if b is None:
        return a
    if a is None or a < b:
        return b
    return a


def pod_status_reason(pod: JsonDict) -> tuple[int, int, str, int, datetime | None]:
    """upstream printPod's core: (ready, total, STATUS, restarts, last restart time).

    STATUS starts from `status.reason` or `status.phase` (SchedulingGated when the PodScheduled
    condition says so); the first unfinished init container yields `Init:<reason>`,
    `Init:ExitCode:N`, `Init:Signal:N` or `Init:i/n`; otherwise the last container (scanning
    backwards) in waiting/terminated state names it (`ContainerCreating`, `CrashLoopBackOff`,
    `Completed`, `ExitCode:N`...); "Completed" flips back to Running/NotReady/error while some
    container still runs; deletion shows `Terminating` (or `Unknown` for NodeLost pods).
    """
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    containers = spec.get("containers") or []
    init_specs = spec.get("initContainers") or []
    total = len(containers)
    ready = 0
    restarts = 0
    restartable_restarts = 0
    last_restart: datetime | None = None
    last_restartable_restart: datetime | None = None

    phase = _str(status.get("phase"))
    reason = _str(status.get("reason")) or phase
    for cond in status.get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_by_name: dict[str, JsonDict] = {}
    for c in init_specs:
        if isinstance(c, dict):
            init_by_name[_str(c.get("name"))] = c
            if _is_restartable_init(c):
                total += 1

    initializing = False
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        if not isinstance(cs, dict):
            continue
        restarts += _int(cs.get("restartCount"))
        last_restart = _later(last_restart, _finished_at(cs))
        restartable = _is_restartable_init(init_by_name.get(_str(cs.get("name"))))
        if restartable:
            restartable_restarts += _int(cs.get("restartCount"))
            last_restartable_restart = _later(last_restartable_restart, _finished_at(cs))
        state = cs.get("state") or {}
        terminated = state.get("terminated") if isinstance(state.get("terminated"), dict) else None
        waiting = state.get("waiting") if isinstance(state.get("waiting"), dict) else None
        if terminated is not None and _int(terminated.get("exitCode")) == 0:
            continue
        if restartable and cs.get("started") is True:
            if cs.get("ready"):
                ready += 1
            continue
        if terminated is not None:
            t_reason = _str(terminated.get("reason"))
            if not t_reason:
                if _int(terminated.get("signal")) != 0:
                    reason = f"Init:Signal:{_int(terminated.get('signal'))}"
                else:
                    reason = f"Init:ExitCode:{_int(terminated.get('exitCode'))}"
            else:
                reason = "Init:" + t_reason
        elif waiting is not None and _str(waiting.get("reason")) and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + _str(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _has_condition(status.get("conditions"), "Initialized"):
        restarts = restartable_restarts
        last_restart = last_restartable_restart
        has_running = False
        error_reason = ""
        for cs in reversed(status.get("containerStatuses") or []):
            if not isinstance(cs, dict):
                continue
            restarts += _int(cs.get("restartCount"))
            last_restart = _later(last_restart, _finished_at(cs))
            state = cs.get("state") or {}
            waiting = state.get("waiting") if isinstance(state.get("waiting"), dict) else None
            terminated = state.get("terminated") if isinstance(state.get("terminated"), dict) else None
            running = state.get("running") if isinstance(state.get("running"), dict) else None
            if waiting is not None and _str(waiting.get("reason")):
                reason = _str(waiting.get("reason"))
            elif terminated is not None:
                if _str(terminated.get("reason")):
                    reason = _str(terminated.get("reason"))
                elif _int(terminated.get("signal")) != 0:
                    reason = f"Signal:{_int(terminated.get('signal'))}"
                else:
                    reason = f"ExitCode:{_int(terminated.get('exitCode'))}"
                if _int(terminated.get("exitCode")) != 0:
                    error_reason = reason
            elif cs.get("ready") and running is not None:
                has_running = True
                ready += 1
        if reason == "Completed":
            if has_running and _has_condition(status.get("conditions"), "Ready"):
                reason = "Running"
            elif error_reason:
                reason = error_reason
            elif has_running:
                reason = "NotReady"

    deleting = bool(_d(pod, "metadata", "deletionTimestamp"))
    if deleting and status.get("reason") == _NODE_UNREACHABLE_POD_REASON:
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return ready, total, reason, restarts, last_restart


def _pod_cells(pod: JsonDict, now: datetime) -> list[Any]:
    ready, total, reason, restarts, last_restart = pod_status_reason(pod)
    restarts_str = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_str = f"{restarts} ({human_duration(now - last_restart)} ago)"
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    ips = status.get("podIPs") or []
    pod_ip = _str(ips[0].get("ip")) if ips and isinstance(ips[0], dict) else ""
    gates = spec.get("readinessGates") or []
    readiness = "<none>"
    if gates:
        true_count = 0
        for gate in gates:
            ctype = _d(gate, "conditionType")
            for cond in status.get("conditions") or []:
                if isinstance(cond, dict) and cond.get("type") == ctype:
                    if cond.get("status") == "True":
                        true_count += 1
                    break
        readiness = f"{true_count}/{len(gates)}"
    md = pod.get("metadata")
    if not isinstance(md, dict):
        md = {}
    return [
        md.get("name") or "",
        f"{ready}/{total}",
        reason,
        restarts_str,
        since(md.get("creationTimestamp"), now),
        pod_ip or "<none>",
        _str(spec.get("nodeName")) or "<none>",
        _str(status.get("nominatedNodeName")) or "<none>",
        readiness,
    ]


def _pod_conditions(pod: JsonDict) -> list[JsonDict] | None:
    phase = _d(pod, "status", "phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded",
                 "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


POD_PRINTER = Printer(
    (
        _name(),
        Column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
        Column("Status", "string", "The aggregate status of the containers in this pod."),
        Column("Restarts", "string", "The number of times the containers in this pod have been restarted "
               "and when the last container in this pod has restarted."),
        _age(),
        _wide("IP", "podIP address allocated to the pod. Routable at least within the cluster. "
              "Empty if not yet allocated."),
        _wide("Node", "NodeName indicates in which node this pod is scheduled."),
        _wide("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on "
              "the node, but it cannot be scheduled right away as preemption victims receive their "
              "graceful termination periods."),
        _wide("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness."),
    ),
    _pod_cells,
    _pod_conditions,
)

# --------------------------------------------------------------------------------------------
# Nodes, namespaces, events
# --------------------------------------------------------------------------------------------


def node_roles(labels: Any) -> str:
    """`findNodeRoles`: `node-role.kubernetes.io/<role>` keys and `kubernetes.io/role=<role>`."""
    roles: set[str] = set()
    for k, v in (labels or {}).items():
        if k.startswith("node-role.kubernetes.io/"):
            role = k[len("node-role.kubernetes.io/"):]
            if role:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(_str(v))
    return ",".join(sorted(roles)) or "<none>"


def node_status(node: JsonDict) -> str:
    """`Ready` / `NotReady` (any non-True Ready condition) / `Unknown` (none), + `SchedulingDisabled`."""
    parts: list[str] = []
    ready: JsonDict | None = None
    for cond in _d(node, "status", "conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            ready = cond  # the last one wins, like upstream's map
    if ready is not None:
        parts.append("Ready" if ready.get("status") == "True" else "NotReady")
    if not parts:
        parts.append("Unknown")
    if _d(node, "spec", "unschedulable"):
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _node_address(node: JsonDict, kind: str) -> str:
    for addr in _d(node, "status", "addresses") or []:
        if isinstance(addr, dict) and addr.get("type") == kind:
            return _str(addr.get("address"))
    return "<none>"


def _node_cells(node: JsonDict, now: datetime) -> list[Any]:
    info = _d(node, "status", "nodeInfo") or {}
    return [
        _d(node, "metadata", "name") or "",
        node_status(node),
        node_roles(_d(node, "metadata", "labels")),
        since(_d(node, "metadata", "creationTimestamp"), now),
        _str(info.get("kubeletVersion")),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        _str(info.get("osImage")) or "<unknown>",
        _str(info.get("kernelVersion")) or "<unknown>",
        _str(info.get("containerRuntimeVersion")) or "<unknown>",
    ]


_ADDR_DOC = "List of addresses reachable to the node."
NODE_PRINTER = Printer(
    (
        _name(),
        Column("Status", "string", "The status of the node"),
        Column("Roles", "string", "The roles of the node"),
        _age(),
        Column("Version", "string", "Kubelet Version reported by the node."),
        _wide("Internal-IP", _ADDR_DOC),
        _wide("External-IP", _ADDR_DOC),
        _wide("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
        _wide("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
        _wide("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote "
              "API (e.g. containerd://1.4.2)."),
    ),
    _node_cells,
)

NAMESPACE_PRINTER = Printer(
    (_name(), Column("Status", "string", "The status of the namespace"), _age()),
    lambda o, now: [_d(o, "metadata", "name") or "", _str(_d(o, "status", "phase")),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)


def _micro_since(value: Any, now: datetime) -> str:
    return since(value, now)


def _core_event_cells(ev: JsonDict, now: datetime) -> list[Any]:
    """`printEvent` (wide): first/last seen fall back to eventTime; a series overrides last/count."""
    first = since(ev.get("firstTimestamp"), now) if parse_timestamp(ev.get("firstTimestamp")) else \
        _micro_since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if parse_timestamp(ev.get("lastTimestamp")) else first
    count = _int(ev.get("count"))
    series = ev.get("series")
    if isinstance(series, dict):
        last = _micro_since(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1
    involved = ev.get("involvedObject") or {}
    kind = _str(involved.get("kind")).lower()
    name = _str(involved.get("name"))
    target = f"{kind}/{name}" if name else kind
    source = ev.get("source") or {}
    component = _str(source.get("component")) or _str(ev.get("reportingComponent"))
    host = _str(source.get("host")) or _str(ev.get("reportingInstance"))
    src = f"{component}, {host}" if host else component
    return [
        last,
        _str(ev.get("type")),
        _str(ev.get("reason")),
        target,
        _str(involved.get("fieldPath")),
        src,
        _str(ev.get("message")).strip(),
        first,
        count,
        _d(ev, "metadata", "name") or "",
    ]


def events_v1_to_core(ev: JsonDict) -> JsonDict:
    """events.k8s.io/v1 Event → core/v1 field names (upstream converts both to one internal type)."""
    out: JsonDict = {
        "metadata": ev.get("metadata") or {},
        "involvedObject": ev.get("regarding") or {},
        "reason": ev.get("reason"),
        "message": ev.get("note"),
        "type": ev.get("type"),
        "source": ev.get("deprecatedSource") or {},
        "firstTimestamp": ev.get("deprecatedFirstTimestamp"),
        "lastTimestamp": ev.get("deprecatedLastTimestamp"),
        "count": ev.get("deprecatedCount"),
        "eventTime": ev.get("eventTime"),
        "reportingComponent": ev.get("reportingController"),
        "reportingInstance": ev.get("reportingInstance"),
    }
    if isinstance(ev.get("series"), dict):
        out["series"] = ev["series"]
    return out


_EVENT_COLUMNS = (
    Column("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded."),
    Column("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future"),
    Column("Reason", "string", "This should be a short, machine understandable string that gives the "
           "reason for the transition into the object's current status."),
    Column("Object", "string", "The object that this event is about."),
    _wide("Subobject", "If referring to a piece of an object instead of an entire object, this string "
          "should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]."),
    _wide("Source", "The component reporting this event. Should be a short machine understandable string."),
    Column("Message", "string", "A human-readable description of the status of this operation."),
    _wide("First Seen", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"),
    _wide("Count", "The number of times this event has occurred."),
    Column("Name", "string", _NAME_DOC, "name", 1),
)
EVENT_PRINTER = Printer(_EVENT_COLUMNS, _core_event_cells)
EVENT_V1_PRINTER = Printer(_EVENT_COLUMNS, lambda ev, now: _core_event_cells(events_v1_to_core(ev), now))

# --------------------------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------------------------


def _deployment_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    status = o.get("status") or {}
    sel = selector_string(spec.get("selector"))
    names, images = _containers_cells(_d(spec, "template", "spec"))
    return [
        _d(o, "metadata", "name") or "",
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'), 1) if 'replicas' in spec else 1}",
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
        since(_d(o, "metadata", "creationTimestamp"), now),
        names,
        images,
        "<invalid>" if sel is None else sel,
    ]


DEPLOYMENT_PRINTER = Printer(
    (
        _name(),
        Column("Ready", "string", "Number of the pod with ready state"),
        Column("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment "
               "that have the desired template spec."),
        Column("Available", "string", "Total number of available pods (ready for at least minReadySeconds) "
               "targeted by this deployment."),
        _age(),
        _wide("Containers", _CONTAINERS_DOC),
        _wide("Images", _IMAGES_DOC),
        _wide("Selector", "Label selector for pods. Existing ReplicaSets whose pods are selected by this "
              "will be the ones affected by this deployment."),
    ),
    _deployment_cells,
)


def _replicaset_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    status = o.get("status") or {}
    names, images = _containers_cells(_d(spec, "template", "spec"))
    return [
        _d(o, "metadata", "name") or "",
        _int(spec.get("replicas"), 1) if "replicas" in spec else 1,
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        since(_d(o, "metadata", "creationTimestamp"), now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


_RS_COLUMNS = (
    _name(),
    Column("Desired", "integer", "Replicas is the number of desired replicas."),
    Column("Current", "integer", "Replicas is the most recently observed number of replicas."),
    Column("Ready", "integer", "The number of ready replicas for this replica set."),
    _age(),
    _wide("Containers", _CONTAINERS_DOC),
    _wide("Images", _IMAGES_DOC),
    _wide("Selector", "Selector is a label query over pods that should match the replica count."),
)
REPLICASET_PRINTER = Printer(_RS_COLUMNS, _replicaset_cells)


def _rc_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    status = o.get("status") or {}
    names, images = _containers_cells(_d(spec, "template", "spec"))
    return [
        _d(o, "metadata", "name") or "",
        _int(spec.get("replicas")),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        since(_d(o, "metadata", "creationTimestamp"), now),
        names,
        images,
        format_labels(spec.get("selector")),
    ]


RC_PRINTER = Printer(_RS_COLUMNS, _rc_cells)


def _statefulset_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    names, images = _containers_cells(_d(spec, "template", "spec"))
    desired = _int(spec.get("replicas"), 1) if "replicas" in spec else 1
    return [
        _d(o, "metadata", "name") or "",
        f"{_int(_d(o, 'status', 'readyReplicas'))}/{desired}",
        since(_d(o, "metadata", "creationTimestamp"), now),
        names,
        images,
    ]


STATEFULSET_PRINTER = Printer(
    (_name(), Column("Ready", "string", "Number of the pod with ready state"), _age(),
     _wide("Containers", _CONTAINERS_DOC), _wide("Images", _IMAGES_DOC)),
    _statefulset_cells,
)

def _quantity(v: Any) -> str:
    """A Quantity's String(); a nil *Quantity prints "<nil>" in Go."""
    return "<nil>" if v is None else _str(v)


def _hpa_metric(spec: JsonDict, status: JsonDict | None) -> str:
    """One entry of upstream `formatHPAMetrics` (`status` is the same-index currentMetrics entry)."""
    typ = spec.get("type")
    key = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
           "Object": "object", "External": "external"}.get(str(typ))
    if key is None:
        return "<unknown type>"
    src = _dict(spec.get(key))
    target = _dict(src.get("target"))
    # upstream reads the current value only when the same-index status is of the same type
    st = status.get(key) if status is not None and isinstance(status.get(key), dict) else None
    cur = _dict(st.get("current")) if st is not None else {}
    if key in ("external", "object"):
        if target.get("averageValue") is not None:
            current = _quantity(cur["averageValue"]) if cur.get("averageValue") is not None else "<unknown>"
            return f"{current}/{_quantity(target['averageValue'])} (avg)"
        current = _quantity(cur.get("value")) if st is not None else "<unknown>"
        return f"{current}/{_quantity(target.get('value'))}"
    if key == "pods":
        current = _quantity(cur.get("averageValue")) if st is not None else "<unknown>"
        return f"{current}/{_quantity(target.get('averageValue'))}"
    name = _str(src.get("name"))
    if target.get("averageValue") is not None:
        current = _quantity(cur.get("averageValue")) if st is not None else "<unknown>"
        return f"{name}: {current}/{_quantity(target['averageValue'])}"
    cu, tu = cur.get("averageUtilization"), target.get("averageUtilization")
    current = f"{_int(cu)}%" if st is not None and cu is not None else "<unknown>"
    return f"{name}: {current}/{f'{_int(tu)}%' if tu is not None else '<auto>'}"


def format_hpa_metrics(specs: Any, statuses: Any) -> str:
    """upstream `formatHPAMetrics`: `cpu: 60%/50%` per metric (External/Object average values end in
    " (avg)"), at most two then `+ N more...`; `<none>` without metrics."""
    if not isinstance(specs, list) or not specs:
        return "<none>"
    statuses = statuses if isinstance(statuses, list) else []
    out: list[str] = []
    for i, spec in enumerate(specs):
        status = statuses[i] if i < len(statuses) and isinstance(statuses[i], dict) else None
        out.append(_hpa_metric(spec if isinstance(spec, dict) else {}, status))
    if len(out) > 2:
        return f"{', '.join(out[:2])} + {len(out) - 2} more..."
    return ", ".join(out)


def _hpa_cells(o: JsonDict, now: datetime) -> list[Any]:
    if o.get("apiVersion") == HPA_V1:
        # served at autoscaling/v1: upstream prints from the internal (v2-shaped) object
        try:
            o = hpa_v1_to_v2(o)
        except ConversionError:
            pass
    spec = o.get("spec") or {}
    ref = spec.get("scaleTargetRef") or {}
    mn = spec.get("minReplicas")
    return [
        _d(o, "metadata", "name") or "",
        f"{ref.get('kind') or ''}/{ref.get('name') or ''}",
        format_hpa_metrics(spec.get("metrics"), _d(o, "status", "currentMetrics")),
        str(mn) if mn is not None else "<unset>",
        _int(spec.get("maxReplicas")),
        _int(_d(o, "status", "currentReplicas")),
        since(_d(o, "metadata", "creationTimestamp"), now),
    ]


HPA_PRINTER = Printer(
    (_name(), Column("Reference", "string", "The reference to the autoscaled object."),
     Column("Targets", "string", "The current and target metrics."),
     Column("MinPods", "string", "The minimum number of pods to scale to."),
     Column("MaxPods", "string", "The maximum number of pods to scale to."),
     Column("Replicas", "string", "The current number of replicas."), _age()),
    _hpa_cells,
)


def _daemonset_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    status = o.get("status") or {}
    names, images = _containers_cells(_d(spec, "template", "spec"))
    return [
        _d(o, "metadata", "name") or "",
        _int(status.get("desiredNumberScheduled")),
        _int(status.get("currentNumberScheduled")),
        _int(status.get("numberReady")),
        _int(status.get("updatedNumberScheduled")),
        _int(status.get("numberAvailable")),
        format_labels(_d(spec, "template", "spec", "nodeSelector")),
        since(_d(o, "metadata", "creationTimestamp"), now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


DAEMONSET_PRINTER = Printer(
    (
        _name(),
        Column("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
        Column("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are "
               "supposed to run the daemon pod."),
        Column("Ready", "integer", "The number of nodes that should be running the daemon pod and have one "
               "or more of the daemon pod running and ready."),
        Column("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
        Column("Available", "integer", "The number of nodes that should be running the daemon pod and have "
               "one or more of the daemon pod running and available."),
        Column("Node Selector", "string", "NodeSelector is a selector which must be true for the pod to fit "
               "on a node."),
        _age(),
        _wide("Containers", _CONTAINERS_DOC),
        _wide("Images", _IMAGES_DOC),
        _wide("Selector", "A label query over pods that are managed by the daemon set."),
    ),
    _daemonset_cells,
)


def _job_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    status = o.get("status") or {}
    succeeded = _int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_int(spec.get('completions'))}"
    else:
        parallelism = _int(spec.get("parallelism"))
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start = parse_timestamp(status.get("startTime"))
    end = parse_timestamp(status.get("completionTime"))
    if start is None:
        job_duration = ""
    elif end is None:
        job_duration = human_duration(now - start)
    else:
        job_duration = human_duration(end - start)
    conds = status.get("conditions")
    if _has_condition(conds, "Complete"):
        state = "Complete"
    elif _has_condition(conds, "Failed"):
        state = "Failed"
    elif _d(o, "metadata", "deletionTimestamp"):
        state = "Terminating"
    elif _has_condition(conds, "Suspended"):
        state = "Suspended"
    elif _has_condition(conds, "FailureTarget"):
        state = "FailureTarget"
    elif _has_condition(conds, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    else:
        state = "Running"
    names, images = _containers_cells(_d(spec, "template", "spec"))
    return [
        _d(o, "metadata", "name") or "",
        state,
        completions,
        job_duration,
        since(_d(o, "metadata", "creationTimestamp"), now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


JOB_PRINTER = Printer(
    (
        _name(),
        Column("Status", "string", "Status of the job."),
        Column("Completions", "string", "The number of pods which reached phase Succeeded."),
        Column("Duration", "string", "Time required to complete the job."),
        _age(),
        _wide("Containers", _CONTAINERS_DOC),
        _wide("Images", _IMAGES_DOC),
        _wide("Selector", "A label query over pods that should match the pod count."),
    ),
    _job_cells,
)


def _cronjob_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    status = o.get("status") or {}
    last = "<none>"
    if status.get("lastScheduleTime"):
        last = since(status.get("lastScheduleTime"), now)
    suspend = spec.get("suspend")
    names, images = _containers_cells(_d(spec, "jobTemplate", "spec", "template", "spec"))
    return [
        _d(o, "metadata", "name") or "",
        _str(spec.get("schedule")),
        _str(spec.get("timeZone")) or "<none>",
        "<unset>" if suspend is None else ("True" if suspend else "False"),
        len(status.get("active") or []),
        last,
        since(_d(o, "metadata", "creationTimestamp"), now),
        names,
        images,
        format_label_selector(_d(spec, "jobTemplate", "spec", "selector")),
    ]


CRONJOB_PRINTER = Printer(
    (
        _name(),
        Column("Schedule", "string", "The schedule in Cron format."),
        Column("Timezone", "string", "The time zone name for the given schedule."),
        Column("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
        Column("Active", "integer", "A list of pointers to currently running jobs."),
        Column("Last Schedule", "string", "Information when was the last time the job was successfully scheduled."),
        _age(),
        _wide("Containers", _CONTAINERS_DOC),
        _wide("Images", _IMAGES_DOC),
        _wide("Selector", "A label query over pods that should match the pod count."),
    ),
    _cronjob_cells,
)

# --------------------------------------------------------------------------------------------
# Services, config, scheduling, policy, coordination
# --------------------------------------------------------------------------------------------


def _service_external_ip(svc: JsonDict) -> str:
    spec = svc.get("spec") or {}
    stype = spec.get("type") or "ClusterIP"
    external = [_str(x) for x in spec.get("externalIPs") or []]
    if stype in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if stype == "LoadBalancer":
        ips = sorted({_str(i.get("ip") or i.get("hostname")) for i in _d(svc, "status", "loadBalancer", "ingress") or []
                      if isinstance(i, dict) and (i.get("ip") or i.get("hostname"))})
        lb = ",".join(ips)  # wide output: never clipped (the server always prints wide)
        if external:
            return ",".join([*([x for x in lb.split(",")] if lb else []), *external])
        return lb or "<pending>"
    if stype == "ExternalName":
        return _str(spec.get("externalName"))
    return "<unknown>"


def _service_ports(ports: Any) -> str:
    pieces = []
    for p in ports or []:
        if not isinstance(p, dict):
            continue
        proto = _str(p.get("protocol")) or "TCP"
        if _int(p.get("nodePort")) > 0:
            pieces.append(f"{_int(p.get('port'))}:{_int(p.get('nodePort'))}/{proto}")
        else:
            pieces.append(f"{_int(p.get('port'))}/{proto}")
    return ",".join(pieces) or "<none>"


def _service_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    cluster_ips = spec.get("clusterIPs") or []
    internal = _str(cluster_ips[0]) if cluster_ips else "<none>"
    return [
        _d(o, "metadata", "name") or "",
        _str(spec.get("type")),
        internal,
        _service_external_ip(o),
        _service_ports(spec.get("ports")),
        since(_d(o, "metadata", "creationTimestamp"), now),
        format_labels(spec.get("selector")),
    ]


SERVICE_PRINTER = Printer(
    (
        _name(),
        Column("Type", "string", "type determines how the Service is exposed."),
        Column("Cluster-IP", "string", "clusterIP is the IP address of the service and is usually assigned "
               "randomly."),
        Column("External-IP", "string", "externalIPs is a list of IP addresses for which nodes in the cluster "
               "will also accept traffic for this service."),
        Column("Port(s)", "string", "The list of ports that are exposed by this service."),
        _age(),
        _wide("Selector", "Route service traffic to pods with label keys and values matching this selector."),
    ),
    _service_cells,
)


def _endpoints_cells(o: JsonDict, now: datetime) -> list[Any]:
    subsets = o.get("subsets") or []
    shown: list[str] = []
    count = 0
    more = False
    for ss in subsets:
        if not isinstance(ss, dict):
            continue
        addrs = [a for a in ss.get("addresses") or [] if isinstance(a, dict)]
        ports = [p for p in ss.get("ports") or [] if isinstance(p, dict)]
        if not ports:
            count += len(addrs)
            for a in addrs:
                if len(shown) == 3:
                    more = True
                    break
                shown.append(_str(a.get("ip")))
            continue
        for p in ports:
            count += len(addrs)
            for a in addrs:
                if len(shown) == 3:
                    more = True
                    break
                ip = _str(a.get("ip"))
                host = f"[{ip}]" if ":" in ip else ip
                shown.append(f"{host}:{_int(p.get('port'))}")
    if not subsets:
        text = "<none>"
    else:
        text = ",".join(shown)
        if more:
            text = f"{text} + {count - 3} more..."
    return [_d(o, "metadata", "name") or "", text, since(_d(o, "metadata", "creationTimestamp"), now)]


ENDPOINTS_PRINTER = Printer(
    (_name(), Column("Endpoints", "string", "The set of all endpoints is the union of all subsets."), _age()),
    _endpoints_cells,
)

def _list_with_more(shown: list[str], count: int) -> str:
    """printers.go listWithMoreString: the first three, "+ N more..." past them, `<unset>` for none."""
    text = ",".join(shown[:3])
    if count > 3:
        return f"{text} + {count - 3} more..."
    return text or "<unset>"


def _endpoint_slice_cells(o: JsonDict, now: datetime) -> list[Any]:
    ports: list[str] = []
    for p in o.get("ports") or []:
        if isinstance(p, dict):
            # a port with neither number nor name matches every port of the endpoints
            port = p.get("port")
            ports.append(str(port) if port is not None else (_str(p.get("name")) if p.get("name") is not None else "*"))
    addresses = [_str(a) for ep in o.get("endpoints") or [] if isinstance(ep, dict)
                 for a in ep.get("addresses") or []]
    return [_d(o, "metadata", "name") or "", _str(o.get("addressType")), _list_with_more(ports, len(ports)),
            _list_with_more(addresses, len(addresses)), since(_d(o, "metadata", "creationTimestamp"), now)]


ENDPOINTSLICE_PRINTER = Printer(
    (_name(),
     Column("AddressType", "string", "addressType specifies the type of address carried by this EndpointSlice."),
     Column("Ports", "string", "ports specifies the list of network ports exposed by each endpoint in this slice."),
     Column("Endpoints", "string", "endpoints is a list of unique endpoints in this slice."),
     _age()),
    _endpoint_slice_cells,
)

CONFIGMAP_PRINTER = Printer(
    (_name(), Column("Data", "string", "Data contains the configuration data."), _age()),
    lambda o, now: [_d(o, "metadata", "name") or "",
                    len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)

SECRET_PRINTER = Printer(
    (_name(), Column("Type", "string", "Used to facilitate programmatic handling of secret data."),
     Column("Data", "string", "Data contains the secret data."), _age()),
    lambda o, now: [_d(o, "metadata", "name") or "", _str(o.get("type")), len(o.get("data") or {}),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)

SERVICEACCOUNT_PRINTER = Printer(
    (
        _name(),
        Column("Secrets", "string", "Secrets is a list of the secrets in the same namespace that pods running "
               "using this ServiceAccount are allowed to use. Pods are only limited to this list if this service "
               "account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The "
               "\"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate "
               "namespaces to isolate access to mounted secrets. This field should not be used to find "
               "auto-generated service account token secrets for use outside of pods. Instead, tokens can be "
               "requested directly using the TokenRequest API, or service account token secrets can be manually "
               "created. More info: https://kubernetes.io/docs/concepts/configuration/secret"),
        _age(),
    ),
    lambda o, now: [_d(o, "metadata", "name") or "", len(o.get("secrets") or []),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)

RUNTIMECLASS_PRINTER = Printer(
    (
        _name(),
        # upstream takes metav1.ObjectMeta{}.SwaggerDoc()["handler"], a key ObjectMeta lacks: ""
        Column("Handler", "string", ""),
        _age(),
    ),
    lambda o, now: [_d(o, "metadata", "name") or "", _str(o.get("handler")),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)

PRIORITYCLASS_PRINTER = Printer(
    (
        _name(),
        Column("Value", "integer", "value represents the integer value of this priority class."),
        Column("Global-Default", "boolean", "globalDefault specifies whether this PriorityClass should be "
               "considered as the default priority for pods that do not have any priority class."),
        _age(),
        Column("PreemptionPolicy", "string", "preemptionPolicy is the Policy for preempting pods with lower "
               "priority."),
    ),
    lambda o, now: [_d(o, "metadata", "name") or "", _int(o.get("value")), bool(o.get("globalDefault")),
                    since(_d(o, "metadata", "creationTimestamp"), now), _str(o.get("preemptionPolicy"))],
)

# scheduling.k8s.io/v1alpha1 Workload (v1.35 printers: name and age)
WORKLOAD_PRINTER = Printer(
    (_name(), _age()),
    lambda o, now: [_d(o, "metadata", "name") or "", since(_d(o, "metadata", "creationTimestamp"), now)],
)


def _pdb_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    min_av = _int_or_string(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A"
    max_un = _int_or_string(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A"
    return [_d(o, "metadata", "name") or "", min_av, max_un, _int(_d(o, "status", "disruptionsAllowed")),
            since(_d(o, "metadata", "creationTimestamp"), now)]


PDB_PRINTER = Printer(
    (
        _name(),
        Column("Min Available", "string", "The minimum number of pods that must be available."),
        Column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
        Column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
        _age(),
    ),
    _pdb_cells,
)

LEASE_PRINTER = Printer(
    (_name(), Column("Holder", "string", "holderIdentity contains the identity of the holder of a current lease."),
     _age()),
    lambda o, now: [_d(o, "metadata", "name") or "", _str(_d(o, "spec", "holderIdentity")),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)


def _resource_quota_cells(o: JsonDict, now: datetime) -> list[Any]:
    """`printResourceQuota`: "res: used/hard" pairs from status, `limits.*` in the Limit column."""
    hard = _d(o, "status", "hard") or {}
    used = _d(o, "status", "used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        pair = f"{name}: {_str(used.get(name)) or '0'}/{_str(hard[name])}"
        pieces = name.split(".")
        (limits if len(pieces) > 1 and pieces[0] == "limits" else requests).append(pair)
    return [_d(o, "metadata", "name") or "", ", ".join(requests), ", ".join(limits),
            since(_d(o, "metadata", "creationTimestamp"), now)]


RESOURCE_QUOTA_PRINTER = Printer(
    (
        _name(),
        Column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
        Column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use "
               "independent of contention on the node."),
        _age(),
    ),
    _resource_quota_cells,
)


# --------------------------------------------------------------------------------------------
# PersistentVolumeClaims and PersistentVolumes
# --------------------------------------------------------------------------------------------

_ACCESS_MODE_ABBREVIATIONS = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                              ("ReadWriteOncePod", "RWOP"))
_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def _access_modes(modes: Any) -> str:
    """helper.GetAccessModesAsString: the modes present, in a fixed order, abbreviated."""
    have = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _ACCESS_MODE_ABBREVIATIONS if mode in have)


def _storage_class(o: JsonDict) -> str:
    """GetPersistentVolume(Claim)Class: the beta annotation, else spec.storageClassName."""
    beta = (_d(o, "metadata", "annotations") or {}).get(_BETA_STORAGE_CLASS)
    return _str(beta) if beta is not None else _str(_d(o, "spec", "storageClassName"))


def _pvc_cells(o: JsonDict, now: datetime) -> list[Any]:
    """printPersistentVolumeClaim: capacity and access modes only once the claim names a volume."""
    phase = "Terminating" if _d(o, "metadata", "deletionTimestamp") else _str(_d(o, "status", "phase"))
    volume = _str(_d(o, "spec", "volumeName"))
    capacity = modes = ""
    if volume:
        modes = _access_modes(_d(o, "status", "accessModes"))
        capacity = canonical_or_text((_d(o, "status", "capacity") or {}).get("storage", "0"))
    vac = _str(_d(o, "spec", "volumeAttributesClassName")) or "<unset>"
    return [_d(o, "metadata", "name") or "", phase, volume, capacity, modes, _storage_class(o), vac,
            since(_d(o, "metadata", "creationTimestamp"), now), _str(_d(o, "spec", "volumeMode")) or "<unset>"]


PVC_PRINTER = Printer(
    (
        _name(),
        Column("Status", "string", "phase represents the current phase of PersistentVolumeClaim."),
        Column("Volume", "string", "volumeName is the binding reference to the PersistentVolume backing this claim."),
        Column("Capacity", "string", "capacity represents the actual resources of the underlying volume."),
        Column("Access Modes", "string", "accessModes contains the actual access modes the volume backing the PVC "
               "has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"),
        Column("StorageClass", "string", "StorageClass of the pvc"),
        Column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
        _age(),
        _wide("VolumeMode", "volumeMode defines what type of volume is required by the claim. Value of Filesystem "
              "is implied when not included in claim spec."),
    ),
    _pvc_cells,
)


def _pv_cells(o: JsonDict, now: datetime) -> list[Any]:
    """printPersistentVolume."""
    ref = _d(o, "spec", "claimRef")
    claim = f"{_str(ref.get('namespace'))}/{_str(ref.get('name'))}" if isinstance(ref, dict) else ""
    phase = "Terminating" if _d(o, "metadata", "deletionTimestamp") else _str(_d(o, "status", "phase"))
    size = canonical_or_text((_d(o, "spec", "capacity") or {}).get("storage", "0"))
    vac = _d(o, "spec", "volumeAttributesClassName")
    return [_d(o, "metadata", "name") or "", size, _access_modes(_d(o, "spec", "accessModes")),
            _str(_d(o, "spec", "persistentVolumeReclaimPolicy")), phase, claim, _storage_class(o),
            _str(vac) if vac is not None else "<unset>", _str(_d(o, "status", "reason")),
            since(_d(o, "metadata", "creationTimestamp"), now), _str(_d(o, "spec", "volumeMode")) or "<unset>"]


PV_PRINTER = Printer(
    (
        _name(),
        Column("Capacity", "string", "capacity is the description of the persistent volume's resources and "
               "capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity"),
        Column("Access Modes", "string", "accessModes contains all ways the volume can be mounted. More info: "
               "https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes"),
        Column("Reclaim Policy", "string", "persistentVolumeReclaimPolicy defines what happens to a persistent "
               "volume when released from its claim. Valid options are Retain (default for manually created "
               "PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle "
               "(deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. "
               "More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming"),
        Column("Status", "string", "phase indicates if a volume is available, bound to a claim, or released by a "
               "claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase"),
        Column("Claim", "string", "claimRef is part of a bi-directional binding between PersistentVolume and "
               "PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative "
               "bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes"
               "#binding"),
        Column("StorageClass", "string", "StorageClass of the pv"),
        Column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
        Column("Reason", "string", "reason is a brief CamelCase string that describes any failure and is meant for "
               "machine parsing and tidy display in the CLI."),
        _age(),
        _wide("VolumeMode", "volumeMode defines if a volume is intended to be used with a formatted filesystem or "
              "to remain in raw block state. Value of Filesystem is implied when not included in spec."),
    ),
    _pv_cells,
)


def _controller_revision_cells(o: JsonDict, now: datetime) -> list[Any]:
    controller = "<none>"
    for ref in _d(o, "metadata", "ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            group = _str(ref.get("apiVersion")).rpartition("/")[0]
            kind = _str(ref.get("kind"))
            gk = f"{kind}.{group}" if group else kind  # schema.GroupKind.String()
            controller = f"{gk.lower()}/{_str(ref.get('name'))}" if gk else _str(ref.get("name"))
            break
    return [_d(o, "metadata", "name") or "", controller, _int(o.get("revision")),
            since(_d(o, "metadata", "creationTimestamp"), now)]


CONTROLLER_REVISION_PRINTER = Printer(
    (_name(), Column("Controller", "string", "Controller of the object"),
     Column("Revision", "string", "Revision indicates the revision of the state represented by Data."), _age()),
    _controller_revision_cells,
)


def _pod_template_cells(o: JsonDict, now: datetime) -> list[Any]:
    names, images = _containers_cells(_d(o, "template", "spec"))
    return [_d(o, "metadata", "name") or "", names, images, format_labels(_d(o, "template", "metadata", "labels"))]


# printPodTemplate
POD_TEMPLATE_PRINTER = Printer(
    (_name(), Column("Containers", "string", "Names of each container in the template."),
     Column("Images", "string", "Images referenced by each container in the template."),
     Column("Pod Labels", "string", "The labels for the pod template.")),
    _pod_template_cells,
)


def _component_status_cells(o: JsonDict, now: datetime) -> list[Any]:
    status, message, error = "Unknown", "", ""
    for c in o.get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "Healthy":
            status = "Healthy" if c.get("status") == "True" else "Unhealthy"
            message, error = _str(c.get("message")), _str(c.get("error"))
            break
    return [_d(o, "metadata", "name") or "", status, message, error]


# printComponentStatus
COMPONENT_STATUS_PRINTER = Printer(
    (_name(), Column("Status", "string", "Status of the component conditions"),
     Column("Message", "string", "Message of the component conditions"),
     Column("Error", "string", "Error of the component conditions")),
    _component_status_cells,
)


def _default_cells(o: JsonDict, now: datetime) -> list[Any]:
    ts = parse_timestamp(_d(o, "metadata", "creationTimestamp"))
    created = ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if ts else "0001-01-01T00:00:00Z"
    return [_d(o, "metadata", "name") or "", created]


# rest.DefaultTableConvertor: built-in kinds without a printer (and CRDs themselves).
DEFAULT_PRINTER = Printer(
    (_name(), Column("Created At", "date", _AGE_DOC)),
    _default_cells,
)


# --------------------------------------------------------------------------------------------
# rbac, networking, storage, certificates, admissionregistration, apiregistration
# (upstream printRole ... printAPIService; same columns and cell rules)
# --------------------------------------------------------------------------------------------


# printRole / printClusterRole: Name and the creation time in RFC 3339
ROLE_PRINTER = Printer((_name(), Column("Created At", "date", _AGE_DOC)), _default_cells)
CLUSTERROLE_PRINTER = ROLE_PRINTER


def _binding_cells(o: JsonDict, now: datetime) -> list[Any]:
    ref = o.get("roleRef") or {}
    users: list[str] = []
    groups: list[str] = []
    sas: list[str] = []
    for s in o.get("subjects") or []:
        if not isinstance(s, dict):
            continue
        kind, name = s.get("kind"), _str(s.get("name"))
        if kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
        elif kind == "ServiceAccount":
            sas.append(f"{_str(s.get('namespace'))}/{name}")
    return [_d(o, "metadata", "name") or "", f"{_str(ref.get('kind'))}/{_str(ref.get('name'))}",
            since(_d(o, "metadata", "creationTimestamp"), now), ", ".join(users), ", ".join(groups), ", ".join(sas)]


_BINDING_COLUMNS = (
    _name(),
    Column("Role", "string", "RoleRef is the reference to the role referenced by this binding."),
    _age(),
    _wide("Users", "Users in the roleBinding"),
    _wide("Groups", "Groups in the roleBinding"),
    _wide("ServiceAccounts", "ServiceAccounts in the roleBinding"),
)
ROLEBINDING_PRINTER = Printer(_BINDING_COLUMNS, _binding_cells)
CLUSTERROLEBINDING_PRINTER = Printer(
    (
        *_BINDING_COLUMNS[:3],
        _wide("Users", "Users in the clusterRoleBinding"),
        _wide("Groups", "Groups in the clusterRoleBinding"),
        _wide("ServiceAccounts", "ServiceAccounts in the clusterRoleBinding"),
    ),
    _binding_cells,
)


def _ingress_hosts(rules: Any) -> str:
    """`formatHosts`: the first three hosts; once three are listed any further rule (with a host
    or not) makes it ` + N more...`, N counting every rule past three; "*" without any host."""
    rules = [r for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []
    shown: list[str] = []
    more = False
    for rule in rules:
        if len(shown) == 3:
            more = True
        if not more and rule.get("host"):
            shown.append(_str(rule["host"]))
    if not shown:
        return "*"
    return ",".join(shown) + (f" + {len(rules) - 3} more..." if more else "")


def _ingress_address(o: JsonDict) -> str:
    out = []
    for ing in _d(o, "status", "loadBalancer", "ingress") or []:
        if isinstance(ing, dict):
            if ing.get("ip"):
                out.append(_str(ing["ip"]))
            elif ing.get("hostname"):
                out.append(_str(ing["hostname"]))
    return ",".join(out)


def _ingress_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    return [_d(o, "metadata", "name") or "", _str(spec.get("ingressClassName")) or "<none>",
            _ingress_hosts(spec.get("rules")), _ingress_address(o), "80, 443" if spec.get("tls") else "80",
            since(_d(o, "metadata", "creationTimestamp"), now)]


INGRESS_PRINTER = Printer(
    (
        _name(),
        Column("Class", "string", "The name of the IngressClass resource that should be used for additional "
               "configuration"),
        Column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
        Column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
        Column("Ports", "string", "Ports of TLS configurations that open"),
        _age(),
    ),
    _ingress_cells,
)


def _ingress_class_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    params = spec.get("parameters")
    shown = "<none>"
    if isinstance(params, dict):
        shown = _str(params.get("kind"))
        if params.get("apiGroup"):
            shown += "." + _str(params["apiGroup"])
        shown += "/" + _str(params.get("name"))
    return [_d(o, "metadata", "name") or "", _str(spec.get("controller")), shown,
            since(_d(o, "metadata", "creationTimestamp"), now)]


INGRESSCLASS_PRINTER = Printer(
    (
        _name(),
        Column("Controller", "string", "Controller that is responsible for handling this class"),
        Column("Parameters", "string", "A reference to a resource with additional parameters"),
        _age(),
    ),
    _ingress_class_cells,
)

SERVICECIDR_PRINTER = Printer(
    (_name(),
     Column("CIDRs", "string", 'CIDRs defines the IP blocks in CIDR notation (e.g. "192.168.0.0/24" or '
            '"2001:db8::/64") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP '
            'family. This field is immutable.'),
     _age()),
    lambda o, now: [_d(o, "metadata", "name") or "", ",".join(str(c) for c in _d(o, "spec", "cidrs") or []),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)


def _parent_ref(ref: Any) -> str:
    """printIPAddress's ParentRef cell: `resource[.group]/[namespace/]name`, lower case."""
    if not isinstance(ref, dict):
        return "<none>"
    gr = _str(ref.get("resource"))
    if ref.get("group"):
        gr += "." + _str(ref["group"])
    out = gr.lower()
    if ref.get("namespace"):
        out += "/" + _str(ref["namespace"])
    return out + "/" + _str(ref.get("name"))


# upstream's printIPAddress also writes an age cell that has no column (kubectl drops it); the
# rows here keep one cell per column, which is what kubectl prints
IPADDRESS_PRINTER = Printer(
    (_name(), Column("ParentRef", "string", "ParentRef references the resource that an IPAddress is attached to. "
                                            "An IPAddress must reference a parent object.")),
    lambda o, now: [_d(o, "metadata", "name") or "", _parent_ref(_d(o, "spec", "parentRef"))],
)

def _flow_schema_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    dm = spec.get("distinguisherMethod")
    missing = "?"
    for c in _d(o, "status", "conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Dangling":
            missing = _str(c.get("status"))
    return [_d(o, "metadata", "name") or "", _str(_d(spec, "priorityLevelConfiguration", "name")),
            spec.get("matchingPrecedence"), _str(dm.get("type")) if isinstance(dm, dict) else "<none>",
            since(_d(o, "metadata", "creationTimestamp"), now), missing]


def _flow_schema_order(objects: list[JsonDict]) -> list[JsonDict]:
    """FlowSchemaSequence: by matchingPrecedence, then name."""
    return sorted(objects, key=lambda o: (_d(o, "spec", "matchingPrecedence") or 0, _d(o, "metadata", "name") or ""))


FLOWSCHEMA_PRINTER = Printer(
    (_name(),
     Column("PriorityLevel", "string", "`priorityLevelConfiguration` should reference a PriorityLevelConfiguration "
                                       "in the cluster. If the reference cannot be resolved, the FlowSchema will be "
                                       "ignored and marked as invalid in its status. Required."),
     Column("MatchingPrecedence", "string", "`matchingPrecedence` is used to choose among the FlowSchemas that match "
                                            "a given request. The chosen FlowSchema is among those with the "
                                            "numerically lowest (which we take to be logically highest) "
                                            "MatchingPrecedence.  Each MatchingPrecedence value must be ranged in "
                                            "[1,10000]. Note that if the precedence is not specified, it will be set "
                                            "to 1000 as default."),
     Column("DistinguisherMethod", "string", "`distinguisherMethod` defines how to compute the flow distinguisher "
                                             "for requests that match this schema. `nil` specifies that the "
                                             "distinguisher is disabled and thus will always be the empty string."),
     _age(),
     Column("MissingPL", "string", "indicates whether the referenced priority level object is missing")),
    _flow_schema_cells,
    order=_flow_schema_order,
)


def _priority_level_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    lim = spec.get("limited")
    shares: Any = "<none>"
    queues: Any = "<none>"
    hand: Any = "<none>"
    length: Any = "<none>"
    if isinstance(lim, dict):
        shares = lim.get("nominalConcurrencyShares")
        q = _d(lim, "limitResponse", "queuing")
        if isinstance(q, dict):
            queues, hand, length = q.get("queues"), q.get("handSize"), q.get("queueLengthLimit")
    return [_d(o, "metadata", "name") or "", _str(spec.get("type")), shares, queues, hand, length,
            since(_d(o, "metadata", "creationTimestamp"), now)]


PRIORITYLEVEL_PRINTER = Printer(
    (_name(),
     Column("Type", "string", "`type` indicates whether this priority level is subject to limitation on request "
                              "execution.  A value of `\"Exempt\"` means that requests of this priority level are not "
                              "subject to a limit (and thus are never queued) and do not detract from the capacity "
                              "made available to other priority levels.  A value of `\"Limited\"` means that (a) "
                              "requests of this priority level _are_ subject to limits and (b) some of the server's "
                              "limited capacity is made available exclusively to this priority level. Required."),
     Column("NominalConcurrencyShares", "string", "nominalConcurrencyShares (NCS) contributes to the computation of "
                                                  "the NominalConcurrencyLimit (NominalCL) of this level."),
     Column("Queues", "string", "`queues` is the number of queues for this priority level."),
     Column("HandSize", "string", "`handSize` is a small positive number that configures the shuffle sharding of "
                                  "requests into queues."),
     Column("QueueLengthLimit", "string", "`queueLengthLimit` is the maximum number of requests allowed to be "
                                          "waiting in a given queue of this priority level at a time."),
     _age()),
    _priority_level_cells,
)

NETWORKPOLICY_PRINTER = Printer(
    (_name(), Column("Pod-Selector", "string", "Backing selector for the networkpolicy"), _age()),
    lambda o, now: [_d(o, "metadata", "name") or "", format_label_selector(_d(o, "spec", "podSelector") or {}),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)

def _storage_class_cells(o: JsonDict, now: datetime) -> list[Any]:
    name = _str(_d(o, "metadata", "name"))
    if is_default_class(o):
        name += " (default)"
    return [name, _str(o.get("provisioner")), _str(o.get("reclaimPolicy")) or "Delete",
            _str(o.get("volumeBindingMode")) or "Immediate", bool(o.get("allowVolumeExpansion")),
            since(_d(o, "metadata", "creationTimestamp"), now)]


STORAGECLASS_PRINTER = Printer(
    (
        _name(),
        Column("Provisioner", "string", "Indicates the type of the provisioner."),
        Column("ReclaimPolicy", "string", "Indicates the type of the reclaim policy."),
        Column("VolumeBindingMode", "string", "Indicates the mode of the volume binding."),
        Column("AllowVolumeExpansion", "string", "Indicates whether the storage class allow volume expand."),
        _age(),
    ),
    _storage_class_cells,
)


def _csi_driver_cells(o: JsonDict, now: datetime) -> list[Any]:
    """`printCSIDriver`: attachRequired defaults to true, the other flags to false; the token
    requests' audiences (`<unset>` without the field); the lifecycle modes or `<none>`."""
    spec = _dict(o.get("spec"))
    requests = spec.get("tokenRequests")
    tokens = ",".join(_str(t.get("audience")) for t in requests if isinstance(t, dict)) \
        if isinstance(requests, list) else "<unset>"
    modes = ",".join(_str(m) for m in spec.get("volumeLifecycleModes") or []) or "<none>"
    attach = spec.get("attachRequired")
    return [_d(o, "metadata", "name") or "", True if attach is None else bool(attach),
            bool(spec.get("podInfoOnMount")), bool(spec.get("storageCapacity")), tokens,
            bool(spec.get("requiresRepublish")), modes, since(_d(o, "metadata", "creationTimestamp"), now)]


CSIDRIVER_PRINTER = Printer(
    (
        _name(),
        Column("AttachRequired", "boolean", "Indicates this CSI volume driver requires an attach operation, "
               "and that Kubernetes should call attach and wait for any attach operation to complete before "
               "proceeding to mount."),
        Column("PodInfoOnMount", "boolean", "Indicates this CSI volume driver requires additional pod "
               "information (like podName, podUID, etc.) during mount operations."),
        Column("StorageCapacity", "boolean", "Indicates that the CSI volume driver wants pod scheduling to "
               "consider the storage capacity that the driver deployment will report by creating "
               "CSIStorageCapacity objects with capacity information."),
        Column("TokenRequests", "string", "Indicates the CSI driver needs pods' service account tokens it is "
               "mounting volume for to do necessary authentication."),
        Column("RequiresRepublish", "boolean", "Indicates the CSI driver wants `NodePublishVolume` being "
               "periodically called to reflect any possible change in the mounted volume."),
        Column("Modes", "string", "Defines the kinds of volumes that this CSI volume driver supports."),
        _age(),
    ),
    _csi_driver_cells,
)

CSINODE_PRINTER = Printer(
    (_name(), Column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the "
                     "node"), _age()),
    lambda o, now: [_d(o, "metadata", "name") or "", len(_d(o, "spec", "drivers") or []),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)


# printCSIStorageCapacity (no Age column upstream)
CSISTORAGECAPACITY_PRINTER = Printer(
    (_name(),
     Column("StorageClassName", "string", "storageClassName represents the name of the StorageClass that the "
            "reported capacity applies to. It must meet the same requirements as the name of a StorageClass "
            "object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object "
            "is obsolete and should be removed by its creator. This field is immutable."),
     Column("Capacity", "string", "capacity is the value reported by the CSI driver in its GetCapacityResponse "
            "for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe "
            "semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage "
            "that can be used to provision volumes. If not set, that information is currently unavailable.")),
    lambda o, now: [_d(o, "metadata", "name") or "", _str(o.get("storageClassName")),
                    canonical_or_text(o["capacity"]) if o.get("capacity") is not None else "<unset>"],
)


def _volume_attachment_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    return [_d(o, "metadata", "name") or "", _str(spec.get("attacher")),
            _str(_d(spec, "source", "persistentVolumeName")), _str(spec.get("nodeName")),
            bool(_d(o, "status", "attached")), since(_d(o, "metadata", "creationTimestamp"), now)]


VOLUMEATTACHMENT_PRINTER = Printer(
    (
        _name(),
        Column("Attacher", "string", "Attacher indicates the name of the volume driver that MUST handle this "
               "request. This is the name returned by GetPluginName().", "name"),
        Column("PV", "string", "Name of the persistent volume to attach."),
        Column("Node", "string", "The node that the volume should be attached to."),
        Column("Attached", "boolean", "Indicates the volume is successfully attached."),
        _age(),
    ),
    _volume_attachment_cells,
)


def csr_condition(o: JsonDict) -> str:
    """`extractCSRStatus`: Denied / Approved / Pending, then ,Failed and ,Issued."""
    types = {c.get("type") for c in _d(o, "status", "conditions") or [] if isinstance(c, dict)}
    out = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        out += ",Failed"
    if _d(o, "status", "certificate"):
        out += ",Issued"
    return out


def _csr_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    exp = spec.get("expirationSeconds")
    duration = human_duration(timedelta(seconds=exp)) if isinstance(exp, int) else "<none>"
    return [_d(o, "metadata", "name") or "", since(_d(o, "metadata", "creationTimestamp"), now),
            _str(spec.get("signerName")) or "<none>", _str(spec.get("username")), duration, csr_condition(o)]


CSR_PRINTER = Printer(
    (
        _name(),
        _age(),
        Column("SignerName", "string", "Only track signer name"),
        Column("Requestor", "string", "Name of requestor"),
        Column("RequestedDuration", "string", "Requested duration of the certificate"),
        Column("Condition", "string", "Condition of the request"),
    ),
    _csr_cells,
)

WEBHOOK_CONFIGURATION_PRINTER = Printer(
    (_name(), Column("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this "
                     "configuration"), _age()),
    lambda o, now: [_d(o, "metadata", "name") or "", len(o.get("webhooks") or []),
                    since(_d(o, "metadata", "creationTimestamp"), now)],
)


def _vap_cells(o: JsonDict, now: datetime) -> list[Any]:
    spec = o.get("spec") or {}
    pk = spec.get("paramKind")
    param_kind = f"{_str(pk.get('apiVersion'))}/{_str(pk.get('kind'))}" if isinstance(pk, dict) else "<unset>"
    return [_d(o, "metadata", "name") or "", len(spec.get("validations") or []), param_kind,
            since(_d(o, "metadata", "creationTimestamp"), now)]


VAP_PRINTER = Printer(
    (
        _name(),
        Column("Validations", "integer", "Validations indicates the number of validation rules defined in "
               "this configuration"),
        Column("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this "
               "policy"),
        _age(),
    ),
    _vap_cells,
)


def _go_label_selector_string(sel: Any) -> str:
    """The generated `(*metav1.LabelSelector).String()` upstream prints a binding's param selector
    with: `&LabelSelector{MatchLabels:map[string]string{k: v,},MatchExpressions:[]LabelSelectorRequirement{...},}`."""
    sel = sel if isinstance(sel, dict) else {}
    labels = sel.get("matchLabels") if isinstance(sel.get("matchLabels"), dict) else {}
    exprs = []
    for e in sel.get("matchExpressions") or []:
        if isinstance(e, dict):
            values = " ".join(_str(v) for v in e.get("values") or [])
            exprs.append(f"LabelSelectorRequirement{{Key:{_str(e.get('key'))},Operator:{_str(e.get('operator'))},"
                         f"Values:[{values}],}},")
    matched = "".join(f"{k}: {_str(labels[k])}," for k in sorted(labels))
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{matched}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{''.join(exprs)}}},}}")


def _vapb_cells(o: JsonDict, now: datetime) -> list[Any]:
    """`printValidatingAdmissionPolicyBinding`: `ns/name`, `*/name` without a namespace (it may be
    cluster-scoped), else the param selector (Go's String() of it), else `<unset>`."""
    spec = o.get("spec") or {}
    ref = spec.get("paramRef")
    shown = "<unset>"
    if isinstance(ref, dict):
        if ref.get("name"):
            shown = f"{_str(ref.get('namespace')) or '*'}/{_str(ref['name'])}"
        elif ref.get("selector") is not None:
            shown = _go_label_selector_string(ref["selector"])
    return [_d(o, "metadata", "name") or "", _str(spec.get("policyName")), shown,
            since(_d(o, "metadata", "creationTimestamp"), now)]


VAPB_PRINTER = Printer(
    (
        _name(),
        Column("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding "
               "binded to"),
        Column("ParamRef", "string", "ParamRef indicates the param resource which sets the configration param"),
        _age(),
    ),
    _vapb_cells,
)


def _apiservice_cells(o: JsonDict, now: datetime) -> list[Any]:
    svc = _d(o, "spec", "service")
    service = f"{_str(svc.get('namespace'))}/{_str(svc.get('name'))}" if isinstance(svc, dict) else "Local"
    available = "Unknown"
    for c in _d(o, "status", "conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Available":
            available = _str(c.get("status"))
            if available != "True" and c.get("reason"):
                available += f" ({_str(c['reason'])})"
    return [_d(o, "metadata", "name") or "", service, available, since(_d(o, "metadata", "creationTimestamp"), now)]


APISERVICE_PRINTER = Printer(
    (
        _name(),
        Column("Service", "string", "The reference to the service that hosts this API endpoint."),
        Column("Available", "string", "Whether this service is available."),
        _age(),
    ),
    _apiservice_cells,
)


# printScale: the autoscaling/v1 Scale a `scale` subresource returns (not a stored resource, so not
# in `builtin_printers`; `to_table(..., printer=SCALE_PRINTER)` renders it)
SCALE_PRINTER = Printer(
    (
        Column("Name", "string", _NAME_DOC),
        Column("Desired", "integer", "replicas is the desired number of instances for the scaled object."),
        Column("Available", "integer", "replicas is the actual number of observed instances of the scaled object."),
        _age(),
    ),
    lambda o, now: [_d(o, "metadata", "name") or "", _int(_d(o, "spec", "replicas")),
                    _int(_d(o, "status", "replicas")), since(_d(o, "metadata", "creationTimestamp"), now)],
)


def builtin_printers() -> dict[tuple[str, str], Printer]:
    """(group, resource) → printer for the built-in kinds (fresh dict: no global mutable state)."""
    return {
        ("", "pods"): POD_PRINTER,
        ("", "nodes"): NODE_PRINTER,
        ("", "namespaces"): NAMESPACE_PRINTER,
        ("", "events"): EVENT_PRINTER,
        ("events.k8s.io", "events"): EVENT_V1_PRINTER,
        ("", "configmaps"): CONFIGMAP_PRINTER,
        ("", "secrets"): SECRET_PRINTER,
        ("", "services"): SERVICE_PRINTER,
        ("", "serviceaccounts"): SERVICEACCOUNT_PRINTER,
        ("", "endpoints"): ENDPOINTS_PRINTER,
        ("discovery.k8s.io", "endpointslices"): ENDPOINTSLICE_PRINTER,
        ("", "replicationcontrollers"): RC_PRINTER,
        ("", "podtemplates"): POD_TEMPLATE_PRINTER,
        ("", "componentstatuses"): COMPONENT_STATUS_PRINTER,
        ("", "resourcequotas"): RESOURCE_QUOTA_PRINTER,
        ("", "persistentvolumeclaims"): PVC_PRINTER,
        ("", "persistentvolumes"): PV_PRINTER,
        ("apps", "deployments"): DEPLOYMENT_PRINTER,
        ("apps", "replicasets"): REPLICASET_PRINTER,
        ("apps", "statefulsets"): STATEFULSET_PRINTER,
        ("autoscaling", "horizontalpodautoscalers"): HPA_PRINTER,
        ("apps", "daemonsets"): DAEMONSET_PRINTER,
        ("apps", "controllerrevisions"): CONTROLLER_REVISION_PRINTER,
        ("batch", "jobs"): JOB_PRINTER,
        ("batch", "cronjobs"): CRONJOB_PRINTER,
        ("scheduling.k8s.io", "priorityclasses"): PRIORITYCLASS_PRINTER,
        ("node.k8s.io", "runtimeclasses"): RUNTIMECLASS_PRINTER,
        ("scheduling.k8s.io", "workloads"): WORKLOAD_PRINTER,
        ("policy", "poddisruptionbudgets"): PDB_PRINTER,
        ("coordination.k8s.io", "leases"): LEASE_PRINTER,
        ("rbac.authorization.k8s.io", "roles"): ROLE_PRINTER,
        ("rbac.authorization.k8s.io", "clusterroles"): CLUSTERROLE_PRINTER,
        ("rbac.authorization.k8s.io", "rolebindings"): ROLEBINDING_PRINTER,
        ("rbac.authorization.k8s.io", "clusterrolebindings"): CLUSTERROLEBINDING_PRINTER,
        ("networking.k8s.io", "ingresses"): INGRESS_PRINTER,
        ("networking.k8s.io", "ingressclasses"): INGRESSCLASS_PRINTER,
        ("networking.k8s.io", "servicecidrs"): SERVICECIDR_PRINTER,
        ("flowcontrol.apiserver.k8s.io", "flowschemas"): FLOWSCHEMA_PRINTER,
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): PRIORITYLEVEL_PRINTER,
        ("networking.k8s.io", "ipaddresses"): IPADDRESS_PRINTER,
        ("networking.k8s.io", "networkpolicies"): NETWORKPOLICY_PRINTER,
        ("storage.k8s.io", "storageclasses"): STORAGECLASS_PRINTER,
        ("storage.k8s.io", "csidrivers"): CSIDRIVER_PRINTER,
        ("storage.k8s.io", "csinodes"): CSINODE_PRINTER,
        ("storage.k8s.io", "csistoragecapacities"): CSISTORAGECAPACITY_PRINTER,
        ("storage.k8s.io", "volumeattachments"): VOLUMEATTACHMENT_PRINTER,
        ("certificates.k8s.io", "certificatesigningrequests"): CSR_PRINTER,
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): WEBHOOK_CONFIGURATION_PRINTER,
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): WEBHOOK_CONFIGURATION_PRINTER,
        ("admissionregistration.k8s.io", "validatingadmissionpolicies"): VAP_PRINTER,
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): VAPB_PRINTER,
        ("apiregistration.k8s.io", "apiservices"): APISERVICE_PRINTER,
    }


_BUILTIN = builtin_printers()

# --------------------------------------------------------------------------------------------
# Custom resources: additionalPrinterColumns with a JSONPath subset
# --------------------------------------------------------------------------------------------

_SEGMENT = re.compile(
    r"""\.(?P<field>[A-Za-z0-9_\-$/]+)                                    # .field
      | \[(?P<index>-?\d+)\]                                            # [0]
      | \[\?\(@\.(?P<fkey>[A-Za-z0-9_\-.]+)\s*==\s*(?P<fval>"[^"]*"|'[^']*'|[^)\s]+)\s*\)\]  # [?(@.k=="v")]
      | \[['"](?P<qfield>[^'"]+)['"]\]                                  # ['a.b']
      | \[\*\]                                                          # [*]
    """,
    re.VERBOSE,
)


def _parse_json_path(path: str) -> list[tuple[str, Any]] | None:
    """Split `.spec.x`, `.items[0]`, `.status.conditions[?(@.type=="Ready")].status` into steps."""
    p = path.strip()
    if p.startswith("{") and p.endswith("}"):
        p = p[1:-1].strip()
    if p.startswith("$"):
        p = p[1:]
    steps: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(p):
        m = _SEGMENT.match(p, pos)
        if m is None:
            return None
        if m.group("field") is not None:
            steps.append(("field", m.group("field")))
        elif m.group("qfield") is not None:
            steps.append(("field", m.group("qfield")))
        elif m.group("index") is not None:
            steps.append(("index", int(m.group("index"))))
        elif m.group("fkey") is not None:
            raw = m.group("fval")
            value: Any = raw[1:-1] if raw[:1] in "\"'" else raw
            steps.append(("filter", (m.group("fkey"), value)))
        else:
            steps.append(("all", None))
        pos = m.end()
    return steps


def _filter_value_matches(item: Any, key: str, want: Any) -> bool:
    cur = item
    for part in key.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False
        cur = cur[part]
    if isinstance(cur, bool):
        return str(want).lower() == ("true" if cur else "false")
    if isinstance(cur, (int, float)) and not isinstance(want, (int, float)):
        try:
            return float(want) == float(cur)
        except (TypeError, ValueError):
            return False
    return _str(cur) == _str(want)


def eval_json_path(obj: Any, path: str) -> list[Any]:
    """Evaluate the JSONPath subset kubectl/CRDs use; missing keys yield no results."""
    steps = _parse_json_path(path)
    if steps is None:
        return []
    current = [obj]
    for kind, arg in steps:
        nxt: list[Any] = []
        for value in current:
            if kind == "field":
                if isinstance(value, dict) and arg in value:
                    nxt.append(value[arg])
            elif kind == "index":
                if isinstance(value, list) and -len(value) <= arg < len(value):
                    nxt.append(value[arg])
            elif kind == "filter":
                if isinstance(value, list):
                    nxt.extend(v for v in value if _filter_value_matches(v, arg[0], arg[1]))
            elif kind == "all":
                if isinstance(value, list):
                    nxt.extend(value)
                elif isinstance(value, dict):
                    nxt.extend(value.values())
        current = nxt
    return current


def _jsonpath_text(value: Any) -> str:
    """How client-go's jsonpath prints one value (strings raw, others as JSON-ish text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _cell_for_json_value(col_type: str, value: Any, now: datetime) -> Any:
    """upstream `cellForJSONValue`: typed cells; wrong types become null; dates become ages."""
    if value is None:
        return None
    if col_type == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return int(value)
        return None
    if col_type == "number":
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return float(value)
        return None
    if col_type == "boolean":
        return value if isinstance(value, bool) else None
    if col_type == "string":
        return value if isinstance(value, str) else None
    if col_type == "date":
        if isinstance(value, str):
            ts = parse_timestamp(value)
            if ts is None:
                return "<invalid>"
            return human_duration(now - ts)
        return None
    return None


_DEFAULT_CR_COLUMNS: tuple[JsonDict, ...] = (
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": _AGE_DOC},
)


def custom_resource_printer(printer_columns: Sequence[JsonDict]) -> Printer:
    """The CRD table convertor: Name + each additionalPrinterColumn (default: Age)."""
    cols_src = tuple(printer_columns) or _DEFAULT_CR_COLUMNS
    columns = [_name()]
    specs: list[tuple[str, str]] = []
    for col in cols_src:
        json_path = _str(col.get("jsonPath"))
        desc = _str(col.get("description")) or f"Custom resource definition column (in JSONPath format): {json_path}"
        columns.append(Column(_str(col.get("name")), _str(col.get("type")) or "string", desc,
                              _str(col.get("format")), _int(col.get("priority"))))
        specs.append((json_path, _str(col.get("type")) or "string"))

    def cells(o: JsonDict, now: datetime) -> list[Any]:
        out: list[Any] = [_d(o, "metadata", "name") or ""]
        for json_path, col_type in specs:
            results = eval_json_path(o, json_path)
            if not results:
                out.append(None)
            elif col_type == "string":
                out.append(_jsonpath_text(results[0]))
            else:
                out.append(_cell_for_json_value(col_type, results[0], now))
        return out

    return Printer(tuple(columns), cells)


# subresource bodies whose kind is not the resource's (a GET of .../scale asks for a Table of the
# Scale, upstream's printScale)
_BODY_PRINTERS = {("autoscaling/v1", "Scale"): SCALE_PRINTER}


def body_printer(obj: JsonDict) -> Printer | None:
    """The printer of a subresource's body (a Scale), None for the resource's own objects."""
    return _BODY_PRINTERS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))


def printer_for(info: ResourceInfo) -> Printer:
    """The printer kube-apiserver would use for this resource."""
    found = _BUILTIN.get((info.group, info.resource))
    if found is not None:
        return found
    if not info.builtin:
        return custom_resource_printer(info.printer_columns)
    return DEFAULT_PRINTER


# --------------------------------------------------------------------------------------------
# Table assembly
# --------------------------------------------------------------------------------------------

INCLUDE_OBJECT_VALUES = ("None", "Metadata", "Object")


def partial_object_metadata(obj: JsonDict) -> JsonDict:
    """`meta.AsPartialObjectMetadata` with kind PartialObjectMetadata, apiVersion meta.k8s.io/v1."""
    return {"kind": "PartialObjectMetadata", "apiVersion": TABLE_API_VERSION,
            "metadata": dict(obj.get("metadata") or {})}


def _row(printer: Printer, info: ResourceInfo, obj: JsonDict, now: datetime, include_object: str) -> JsonDict:
    try:
        cells = printer.cells(obj, now)
    except Exception:  # a malformed stored object must not break `kubectl get` for the whole list
        logger.exception("table printer failed resource=%s name=%s", info.qualified, _d(obj, "metadata", "name"))
        cells = [_d(obj, "metadata", "name") or ""] + [None] * (len(printer.columns) - 1)
    row: JsonDict = {"cells": cells}
    if printer.row_conditions is not None:
        conds = printer.row_conditions(obj)
        if conds:
            row["conditions"] = conds
    if include_object == "Metadata":
        row["object"] = partial_object_metadata(obj)
    elif include_object == "Object":
        full = dict(obj)
        full.setdefault("kind", info.kind)
        full.setdefault("apiVersion", info.api_version)
        row["object"] = full
    else:
        row["object"] = None
    return row


def check_include_object(include_object: str | None) -> str:
    value = include_object or "Metadata"
    if value not in INCLUDE_OBJECT_VALUES:
        raise BadRequestError(f'unrecognized includeObject value: "{include_object}"')
    return value


def to_table(
    info: ResourceInfo,
    objects: list[JsonDict],
    *,
    now: datetime,
    include_object: str = "Metadata",
    list_meta: dict[str, Any] | None = None,
    no_headers: bool = False,
    printer: Printer | None = None,
) -> JsonDict:
    """Render objects as a `meta.k8s.io/v1` Table (one row per object, in the given order).

    `include_object`: "Metadata" (default; PartialObjectMetadata rows, needed for `-A` and
    `--show-labels`), "Object" (the full object) or "None" (`object: null`); anything else →
    BadRequestError, as upstream. `list_meta` (resourceVersion, continue, remainingItemCount) is
    copied into the Table's metadata; without it a single object's own resourceVersion is used
    (upstream's single-object GET).
    `no_headers=True` (watch events after the first) leaves `columnDefinitions` null.
    `printer` overrides the resource's own (a subresource's body, e.g. `SCALE_PRINTER`).
    """
    include = check_include_object(include_object)
    if printer is None:
        printer = printer_for(info)
    if list_meta is None and len(objects) == 1:  # single-object GET: the object's resourceVersion
        list_meta = {"resourceVersion": _d(objects[0], "metadata", "resourceVersion")}
    metadata: JsonDict = {}
    for key in ("resourceVersion", "continue", "remainingItemCount"):
        if list_meta and list_meta.get(key) not in (None, ""):
            metadata[key] = list_meta[key]
    return {
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": metadata,
        "columnDefinitions": None if no_headers else [c.to_json() for c in printer.columns],
        "rows": [_row(printer, info, o, now, include)
                 for o in (printer.order(objects) if printer.order is not None else objects)],
    }


def watch_table_event(
    info: ResourceInfo,
    type_: str,
    obj: JsonDict,
    now: datetime,
    *,
    include_object: str = "Metadata",
    no_headers: bool = False,
) -> JsonDict:
    """A watch event whose object is a one-row Table (kube-apiserver's Table watch encoding).

    Upstream sends column definitions only with the first event of a stream: call with
    `no_headers=False` for the first event and `True` afterwards. ERROR and BOOKMARK events are
    passed through unconverted (upstream never converts a Status; a bookmark has no row to print).
    """
    if type_ in ("ERROR", "BOOKMARK") or obj.get("kind") == "Status":
        return {"type": type_, "object": obj}
    rv = _d(obj, "metadata", "resourceVersion")
    table = to_table(info, [obj], now=now, include_object=include_object,
                     list_meta={"resourceVersion": rv} if rv else None, no_headers=no_headers)
    return {"type": type_, "object": table}
