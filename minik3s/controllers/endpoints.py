"""Endpoints and EndpointSlice controllers (layer L4), after kube-controller-manager's
`pkg/controller/endpoint` and `pkg/controller/endpointslice` (+ `k8s.io/endpointslice`).

For every Service with a selector (not `type: ExternalName`) this keeps
- a core/v1 `Endpoints` of the Service's name: one subset per distinct port list, ready pod
  IPs in `addresses`, not-ready ones in `notReadyAddresses` (terminating pods are left out
  unless `publishNotReadyAddresses`), labels copied from the Service (+ the
  `service.kubernetes.io/headless` label for headless Services and
  `endpoints.kubernetes.io/managed-by: endpoint-controller`), the
  `endpoints.kubernetes.io/last-change-trigger-time` annotation, truncation to 1000 addresses
  with `endpoints.kubernetes.io/over-capacity: truncated`; deleted with the Service;
- discovery.k8s.io/v1 `EndpointSlice`s (generateName `<svc>-`, owned by the Service, labels
  `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by`), one group per
  distinct port list and address family, at most 100 endpoints each, endpoints carrying
  `conditions` {ready, serving, terminating}, `nodeName`, `zone` (the node's
  `topology.kubernetes.io/zone`) and `targetRef`; a placeholder slice with no endpoints when
  nothing matches. Slices of a deleted Service go through the garbage collector.
Objects are written only when their content changes.

Data flow: Service, Pod, Node, Endpoints and EndpointSlice informers -> handlers enqueue the
Service key `ns/name` -> workers run `sync(key)` -> Endpoints / EndpointSlice create, update
and delete through the Client. Trackers of our own writes keep a sync from acting on an
informer cache that has not yet seen them (upstream's staleEndpointsTracker and
EndpointSliceTracker): such a sync raises and is retried with backoff.
"""

from __future__ import annotations

import asyncio
import copy
import ipaddress
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from minik3s.api.errors import AlreadyExistsError, ApiError, ForbiddenError, NotFoundError
from minik3s.api.helpers.pods import is_pod_ready, pod_condition
from minik3s.api.resources import ENDPOINTS, ENDPOINTSLICES, NODES, PODS, SERVICES
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory, object_key
from minik3s.client.interface import Client
from minik3s.client.record import EventRecorder
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import (
    is_deleting,
    is_pod_terminal,
    make_controller_ref,
    meta,
    run_workers,
)
from minik3s.utils.clock import Clock, parse_time

logger = logging.getLogger(__name__)

LABEL_SERVICE_NAME = "kubernetes.io/service-name"
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
LABEL_HEADLESS = "service.kubernetes.io/headless"
# the Endpoints controller's own label (LabelManagedBy / ControllerName, v1.33+)
LABEL_ENDPOINTS_MANAGED_BY = "endpoints.kubernetes.io/managed-by"
ENDPOINTS_CONTROLLER_NAME = "endpoint-controller"
LABEL_ZONE = "topology.kubernetes.io/zone"
ANNOTATION_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
ANNOTATION_OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
ANNOTATION_LEADER = "control-plane.alpha.kubernetes.io/leader"
MAX_ENDPOINTS_CAPACITY = 1000  # Endpoints addresses before truncation
MAX_ENDPOINTS_PER_SLICE = 100  # --max-endpoints-per-slice default
NAMESPACE_INDEX = "namespace"
SERVICE_INDEX = "service"



def _pod_endpoints_changed(old: JsonDict, cur: JsonDict) -> tuple[bool, bool]:
    """upstream podEndpointsChanged: (the endpoint changed: deletion, readiness or IPs; the
    membership may have changed: labels, hostname or subdomain). Name, namespace and uid are
    immutable, and nodeName is set before the pod has an IP."""
    om, cm = meta(old), meta(cur)
    ospec, cspec = old.get("spec") or {}, cur.get("spec") or {}
    membership = (om.get("labels") != cm.get("labels") or ospec.get("hostname") != cspec.get("hostname")
                  or ospec.get("subdomain") != cspec.get("subdomain"))
    changed = (om.get("deletionTimestamp") != cm.get("deletionTimestamp")
               or is_pod_ready(old) != is_pod_ready(cur) or _pod_ips(old) != _pod_ips(cur))
    return changed, membership

class StaleCacheError(ApiError):
    """Our informer has not seen our own last write yet (or a pod's node is unknown): the
    sync is retried with backoff, as upstream returns an error for the work queue."""


# --------------------------------------------------------------------------- pure helpers


def service_selector(svc: JsonDict) -> dict[str, str] | None:
    """spec.selector, or None when the Service has none (an empty map counts as none: it does
    not survive upstream's storage round trip)."""
    sel = (svc.get("spec") or {}).get("selector")
    return dict(sel) if isinstance(sel, dict) and sel else None


def selector_matches(selector: dict[str, str], labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    return all(labels.get(k) == v for k, v in selector.items())


def should_pod_be_in_endpoints(pod: JsonDict, *, include_terminating: bool) -> bool:
    """endpointsliceutil.ShouldPodBeInEndpoints: not Succeeded/Failed, has an IP, and (unless
    terminating pods are included) not being deleted."""
    if is_pod_terminal(pod):
        return False
    st = pod.get("status") or {}
    if not st.get("podIP") and not st.get("podIPs"):
        return False
    return include_terminating or not is_deleting(pod)


def _pod_ips(pod: JsonDict) -> list[str]:
    st = pod.get("status") or {}
    ips = [str(p.get("ip")) for p in st.get("podIPs") or [] if isinstance(p, dict) and p.get("ip")]
    if not ips and st.get("podIP"):
        ips = [str(st["podIP"])]
    return ips


def _is_ipv6(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).version == 6
    except ValueError:
        return False


def service_address_types(svc: JsonDict) -> list[str]:
    """The EndpointSlice address types of a Service: from spec.ipFamilies, else from the
    clusterIP, else IPv4. Example: ipFamilies [IPv4, IPv6] -> ["IPv4", "IPv6"]."""
    spec = svc.get("spec") or {}
    fams = [f for f in spec.get("ipFamilies") or [] if f in ("IPv4", "IPv6")]
    if fams:
        return fams
    cip = spec.get("clusterIP") or ""
    if cip and cip != "None" and _is_ipv6(cip):
        return ["IPv6"]
    return ["IPv4"]


def pod_ip_for_family(pod: JsonDict, family: str) -> str | None:
    want_v6 = family == "IPv6"
    for ip in _pod_ips(pod):
        if _is_ipv6(ip) == want_v6:
            return ip
    return None


def find_port(pod: JsonDict, svc_port: JsonDict) -> int | None:
    """podutil.FindPort: an int targetPort as is; a named one is the container port of that
    name and the Service port's protocol (regular containers, then restartable init
    containers). Example: targetPort "http", container port {name: http, containerPort: 8080}
    -> 8080. None when the pod has no such port."""
    target = svc_port.get("targetPort")
    if target is None or target == "":
        target = svc_port.get("port")
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    proto = svc_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    containers = list(spec.get("containers") or [])
    containers += [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    for c in containers:
        for p in c.get("ports") or []:
            if p.get("name") == target and (p.get("protocol") or "TCP") == proto:
                cp = p.get("containerPort")
                return int(cp) if isinstance(cp, int) else None
    return None


def should_set_hostname(pod: JsonDict, svc: JsonDict) -> bool:
    spec = pod.get("spec") or {}
    return bool(spec.get("hostname")) and spec.get("subdomain") == meta(svc).get("name") \
        and meta(svc).get("namespace") == meta(pod).get("namespace")


def _target_ref(pod: JsonDict) -> JsonDict:
    m = meta(pod)
    return {"kind": "Pod", "namespace": m.get("namespace"), "name": m.get("name"), "uid": m.get("uid")}


def _is_headless(svc: JsonDict) -> bool:
    return ((svc.get("spec") or {}).get("clusterIP") or "") in ("", "None")


def _port_key(port: JsonDict) -> tuple[str, int, str, str]:
    return (str(port.get("name") or ""), int(port.get("port") or 0), str(port.get("protocol") or ""),
            str(port.get("appProtocol") or ""))


def _addr_sort_key(addr: JsonDict) -> tuple[str, str]:
    return (str(addr.get("ip") or ""), str((addr.get("targetRef") or {}).get("uid") or ""))


def repack_subsets(entries: Iterable[tuple[JsonDict, JsonDict | None, bool]]) -> list[JsonDict]:
    """endpoints.RepackSubsets: group (address, port, ready) entries into the smallest set of
    subsets where every address in a subset serves every port of it. An address ready in any
    entry counts as ready. Addresses are sorted by IP then UID, ports by (name, port,
    protocol) and subsets by their first address (upstream sorts ports and subsets by hash;
    any stable order is equivalent).

    Example: pods A, B both serving 80 and 443 -> one subset {addresses [A, B], ports [80, 443]}."""
    addrs: dict[tuple[str, str], JsonDict] = {}
    by_port: dict[tuple[str, int, str, str], dict[tuple[str, str], bool]] = {}
    port_objs: dict[tuple[str, int, str, str], JsonDict] = {}
    for addr, port, ready in entries:
        akey = _addr_sort_key(addr)
        addrs.setdefault(akey, addr)
        pkey = _port_key(port) if port is not None else ("", -1, "", "")
        if port is not None:
            port_objs[pkey] = port
        ready_map = by_port.setdefault(pkey, {})
        ready_map[akey] = ready_map.get(akey, False) or ready
    groups: dict[tuple[tuple[tuple[str, str], bool], ...], list[tuple[str, int, str, str]]] = {}
    for pkey, ready_map in by_port.items():
        gkey = tuple(sorted(ready_map.items()))
        groups.setdefault(gkey, []).append(pkey)
    out: list[JsonDict] = []
    for gkey, pkeys in groups.items():
        subset: JsonDict = {}
        ready_addrs = [addrs[a] for a, r in gkey if r]
        not_ready_addrs = [addrs[a] for a, r in gkey if not r]
        if ready_addrs:
            subset["addresses"] = sorted(ready_addrs, key=_addr_sort_key)
        if not_ready_addrs:
            subset["notReadyAddresses"] = sorted(not_ready_addrs, key=_addr_sort_key)
        ports = [port_objs[p] for p in sorted(pkeys) if p[1] >= 0]
        if ports:
            subset["ports"] = ports
        out.append(subset)

    def order(s: JsonDict) -> tuple[tuple[str, str], tuple[str, str], list[tuple[str, int, str, str]]]:
        first = (s.get("addresses") or [{}])[0]
        first_nr = (s.get("notReadyAddresses") or [{}])[0]
        return (_addr_sort_key(first), _addr_sort_key(first_nr), [_port_key(p) for p in s.get("ports") or []])

    return sorted(out, key=order)


def truncate_subsets(subsets: list[JsonDict], capacity: int = MAX_ENDPOINTS_CAPACITY) -> tuple[list[JsonDict], bool]:
    """truncateEndpoints: keep at most `capacity` addresses, ready ones first, each subset
    keeping its proportional share rounded up.

    Example: capacity 1000, one subset with 900 ready and 200 not ready -> 900 ready and 100
    not ready (the ready ones fit; not-ready ones fill what is left)."""
    total_ready = sum(len(s.get("addresses") or []) for s in subsets)
    total_nr = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
    if total_ready + total_nr <= capacity:
        return subsets, False
    truncate_ready = total_ready > capacity
    budget = capacity if truncate_ready else capacity - total_ready
    total = total_ready if truncate_ready else total_nr
    left = budget
    out: list[JsonDict] = []
    for s in subsets:
        s = dict(s)
        field_name = "addresses" if truncate_ready else "notReadyAddresses"
        items = list(s.get(field_name) or [])
        share = -((-len(items) * budget) // total) if total else 0  # ceil(len/total * budget)
        share = min(share, left)
        s[field_name] = items[:share]
        if truncate_ready:
            s.pop("notReadyAddresses", None)
        left -= len(s[field_name])
        out.append({k: v for k, v in s.items() if v})
    return out, True


def _ref_without_rv(ref: Any) -> Any:
    if isinstance(ref, dict):
        return {k: v for k, v in ref.items() if k != "resourceVersion"}
    return ref


def _normalise_subsets(subsets: list[JsonDict] | None) -> list[JsonDict]:
    out = []
    for s in subsets or []:
        n: JsonDict = {}
        for key in ("addresses", "notReadyAddresses"):
            addrs = [{**a, "targetRef": _ref_without_rv(a.get("targetRef"))} if a.get("targetRef") else dict(a)
                     for a in s.get(key) or []]
            if addrs:
                n[key] = addrs
        if s.get("ports"):
            n["ports"] = [{k: v for k, v in p.items() if v not in (None, "")} for p in s["ports"]]
        out.append(n)
    return out


def subsets_equal(a: list[JsonDict] | None, b: list[JsonDict] | None) -> bool:
    """endpointSubsetsEqualIgnoreResourceVersion."""
    return _normalise_subsets(a) == _normalise_subsets(b)


def labels_correct_for_endpoints(ep_labels: dict[str, str], svc_labels: dict[str, str]) -> bool:
    """labelsCorrectForEndpoints: the Endpoints carry the controller's managed-by label and,
    that and the headless label aside, exactly the Service's labels."""
    if ep_labels.get(LABEL_ENDPOINTS_MANAGED_BY) != ENDPOINTS_CONTROLLER_NAME:
        return False
    skipped = 0
    for k, v in ep_labels.items():
        if k in (LABEL_HEADLESS, LABEL_ENDPOINTS_MANAGED_BY):
            skipped += 1
        elif svc_labels.get(k) != v:
            return False
    return len(ep_labels) == len(svc_labels) + skipped


def endpoint_slice_prefix(service_name: str) -> str:
    """getEndpointSlicePrefix: `<svc>-`, cut so the generated name stays a valid DNS label."""
    prefix = f"{service_name}-"
    return prefix if len(prefix) <= 58 else prefix[:58]


def slice_labels(svc: JsonDict) -> JsonDict:
    """setEndpointSliceLabels: the Service's labels minus reserved keys, the headless label
    for headless Services, then service-name and managed-by."""
    labels = {k: v for k, v in (meta(svc).get("labels") or {}).items()
              if k not in (LABEL_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_HEADLESS)}
    if _is_headless(svc):
        labels[LABEL_HEADLESS] = ""
    labels[LABEL_SERVICE_NAME] = meta(svc).get("name")
    labels[LABEL_MANAGED_BY] = CONTROLLER_NAME
    return labels


def endpoint_ports(svc: JsonDict, pod: JsonDict) -> list[JsonDict]:
    """getEndpointPorts: every Service port the pod resolves; `name` is always present."""
    out: list[JsonDict] = []
    for sp in (svc.get("spec") or {}).get("ports") or []:
        num = find_port(pod, sp)
        if num is None:
            continue
        p: JsonDict = {"name": sp.get("name") or "", "port": num, "protocol": sp.get("protocol") or "TCP"}
        if sp.get("appProtocol"):
            p["appProtocol"] = sp["appProtocol"]
        out.append(p)
    return out


def pod_to_endpoint(pod: JsonDict, node: JsonDict | None, svc: JsonDict, address_type: str) -> JsonDict | None:
    """podToEndpoint: conditions ready/serving/terminating, nodeName, zone, hostname, targetRef.

    ready = publishNotReadyAddresses or (serving and not terminating); a terminating but
    still Ready pod is {ready: false, serving: true, terminating: true}."""
    ip = pod_ip_for_family(pod, address_type)
    if ip is None:
        return None
    serving = is_pod_ready(pod)
    terminating = is_deleting(pod)
    publish = bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
    ep: JsonDict = {"addresses": [ip],
                    "conditions": {"ready": publish or (serving and not terminating), "serving": serving,
                                   "terminating": terminating}}
    if should_set_hostname(pod, svc):
        ep["hostname"] = (pod.get("spec") or {}).get("hostname")
    ep["targetRef"] = _target_ref(pod)
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        ep["nodeName"] = node_name
    zone = (meta(node).get("labels") or {}).get(LABEL_ZONE) if node is not None else None
    if zone:
        ep["zone"] = zone
    return ep


def endpoint_identity(ep: JsonDict) -> tuple[tuple[str, ...], str, str, str]:
    """hashEndpoint: sorted addresses, hostname and the target's namespace/name."""
    ref = ep.get("targetRef") or {}
    return (tuple(sorted(ep.get("addresses") or [])), str(ep.get("hostname") or ""),
            str(ref.get("namespace") or ""), str(ref.get("name") or ""))


def _endpoint_cmp(ep: JsonDict) -> JsonDict:
    return {**ep, "targetRef": _ref_without_rv(ep.get("targetRef"))} if ep.get("targetRef") else ep


def _ports_key(ports: list[JsonDict] | None) -> tuple[tuple[str, int, str, str], ...]:
    return tuple(sorted(_port_key(p) for p in ports or []))


def _owned_by(obj: JsonDict, svc: JsonDict) -> bool:
    uid = meta(svc).get("uid")
    return any(r.get("uid") == uid and r.get("kind") == "Service" for r in meta(obj).get("ownerReferences") or [])


def _rv(obj: JsonDict) -> int:
    try:
        return int(meta(obj).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _rfc3339nano(t: datetime) -> str:
    s = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        s += f".{t.microsecond:06d}".rstrip("0")
    return s + "Z"


# --------------------------------------------------------------------------- trackers


@dataclass(slots=True)
class _TriggerState:
    pod_times: dict[str, datetime] = field(default_factory=dict)
    service_time: datetime | None = None


class TriggerTimeTracker:
    """endpointsliceutil.TriggerTimeTracker: the time of the earliest change (a pod's Ready
    transition, or the Service's creation) not yet reflected in the written object.

    Example: known Service, pod p1 became Ready at 12:00:05 and p2 at 12:00:03 since the last
    sync -> 12:00:03. A Service seen for the first time -> its creationTimestamp."""

    def __init__(self) -> None:
        self._states: dict[str, _TriggerState] = {}

    def compute(self, key: str, svc: JsonDict, pods: list[JsonDict]) -> datetime | None:
        state = self._states.get(key)
        known = state is not None
        prev = state or _TriggerState()
        new = _TriggerState()
        changed: datetime | None = None
        for pod in pods:
            cond = pod_condition(pod, "Ready")
            t = parse_time(cond.get("lastTransitionTime")) if cond else None
            if t is None:
                continue
            name = str(meta(pod).get("name"))
            new.pod_times[name] = t
            old = prev.pod_times.get(name)
            if old is None or t > old:
                changed = t if changed is None else min(changed, t)
        created = parse_time(meta(svc).get("creationTimestamp"))
        new.service_time = created
        if created is not None and (prev.service_time is None or created > prev.service_time):
            changed = created if changed is None else min(changed, created)
        self._states[key] = new
        if not known:
            return created
        return changed

    def delete(self, key: str) -> None:
        self._states.pop(key, None)


_DELETED = -1


# --------------------------------------------------------------------------- controller


class EndpointsController:
    """kube-controller-manager's endpoint-controller and endpointslice-controller, sharing one
    queue of Service keys; each sync reconciles both outputs."""

    NAME = "endpoint-controller"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None,
                 max_endpoints_per_slice: int = MAX_ENDPOINTS_PER_SLICE) -> None:
        self._client = client
        self._clock = clock or Clock()
        self._max_per_slice = max_endpoints_per_slice
        self._svc_inf = informers.informer(SERVICES)
        self._pod_inf = informers.informer(PODS)
        self._node_inf = informers.informer(NODES)
        self._ep_inf = informers.informer(ENDPOINTS)
        self._slice_inf = informers.informer(ENDPOINTSLICES)
        self._svc_inf.add_index(NAMESPACE_INDEX, _namespace_index)
        self._pod_inf.add_index(NAMESPACE_INDEX, _namespace_index)
        self._slice_inf.add_index(SERVICE_INDEX, _slice_service_index)
        self.queue = WorkQueue()
        self.recorder = EventRecorder(client, self.NAME, clock=self._clock)
        self._ep_triggers = TriggerTimeTracker()
        self._slice_triggers = TriggerTimeTracker()
        # our last write per Endpoints key (resourceVersion) and per slice "ns/name"
        # (resourceVersion, or _DELETED); a cache older than that is stale
        self._ep_written: dict[str, int] = {}
        self._slices_written: dict[str, dict[str, int]] = {}
        self._svc_inf.add_handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n),
                                  on_delete=self._enqueue)
        self._pod_inf.add_handler(on_add=self._pod_changed, on_update=self._pod_updated,
                                  on_delete=self._pod_changed)
        self._ep_inf.add_handler(on_delete=self._enqueue)
        self._slice_inf.add_handler(on_add=self._slice_changed, on_update=lambda _o, n: self._slice_changed(n),
                                    on_delete=self._slice_deleted)

    # ---- handlers (fast: enqueue only)

    def _enqueue(self, obj: JsonDict) -> None:
        self.queue.add(object_key(obj))

    def _services_for(self, pod: JsonDict) -> set[str]:
        """GetPodServiceMemberships: Services of the pod's namespace whose selector matches."""
        ns = meta(pod).get("namespace") or ""
        labels = meta(pod).get("labels") or {}
        out: set[str] = set()
        for svc in self._svc_inf.by_index(NAMESPACE_INDEX, ns):
            sel = service_selector(svc)
            if sel is not None and selector_matches(sel, labels):
                out.add(object_key(svc))
        return out

    def _pod_changed(self, pod: JsonDict) -> None:
        for key in self._services_for(pod):
            self.queue.add(key)

    def _pod_updated(self, old: JsonDict, cur: JsonDict) -> None:
        """GetServicesToUpdateOnPodChange: only an update that moves the pod's endpoint
        (podEndpointsChanged) or its membership (labels, hostname, subdomain) wakes its Services;
        a bind or a status write that changes neither wakes none."""
        if meta(old).get("resourceVersion") == meta(cur).get("resourceVersion"):
            return
        changed, membership_changed = _pod_endpoints_changed(old, cur)
        if not changed and not membership_changed:
            return
        keys = self._services_for(cur)
        if membership_changed:
            keys |= self._services_for(old)
        for key in keys:
            self.queue.add(key)

    def _slice_changed(self, sl: JsonDict) -> None:
        labels = meta(sl).get("labels") or {}
        if labels.get(LABEL_MANAGED_BY) != CONTROLLER_NAME or not labels.get(LABEL_SERVICE_NAME):
            return
        self.queue.add(f"{meta(sl).get('namespace')}/{labels[LABEL_SERVICE_NAME]}")

    def _slice_deleted(self, sl: JsonDict) -> None:
        for key in _slice_service_index(sl):
            written = self._slices_written.get(key)
            if written is not None:
                written.pop(str(meta(sl).get("name")), None)
        self._slice_changed(sl)

    # ---- run

    async def run(self, workers: int = 5) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.recorder.run(), name=f"{self.NAME}-events")
            for inf in (self._svc_inf, self._pod_inf, self._node_inf, self._ep_inf, self._slice_inf):
                await inf.wait_for_sync()
            logger.info("%s: caches synced", self.NAME)
            self._check_leftover_endpoints()
            tg.create_task(run_workers(self.queue, self.sync, workers=workers, name=self.NAME),
                           name=f"{self.NAME}-workers")

    def _check_leftover_endpoints(self) -> None:
        """checkLeftoverEndpoints: queue every Endpoints' Service once at start, so Endpoints
        whose Service vanished while we were down get deleted (leader-election records excepted)."""
        for ep in self._ep_inf.store.list():
            if ANNOTATION_LEADER in (meta(ep).get("annotations") or {}):
                continue
            self.queue.add(object_key(ep))
        for svc in self._svc_inf.store.list():
            self.queue.add(object_key(svc))

    # ---- sync

    async def sync(self, key: str) -> None:
        errors: list[BaseException] = []
        for part in (self.sync_endpoints, self.sync_slices):
            try:
                await part(key)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the other half still runs; the first error requeues the key
                errors.append(e)
        if errors:
            raise errors[0]

    def _selected_pods(self, svc: JsonDict, selector: dict[str, str]) -> list[JsonDict]:
        ns = meta(svc).get("namespace") or ""
        return sorted((p for p in self._pod_inf.by_index(NAMESPACE_INDEX, ns)
                       if selector_matches(selector, meta(p).get("labels"))),
                      key=lambda p: str(meta(p).get("name")))

    # ---- Endpoints

    async def sync_endpoints(self, key: str) -> None:
        ns, _, name = key.partition("/")
        svc = self._svc_inf.store.get(key)
        if svc is None:
            try:
                await self._client.delete(ENDPOINTS, name, ns)
                logger.info("%s: deleted endpoints=%s (service gone)", self.NAME, key)
            except NotFoundError:
                pass
            self._ep_triggers.delete(key)
            self._ep_written.pop(key, None)
            return
        spec = svc.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return
        selector = service_selector(svc)
        if selector is None:
            return
        pods = self._selected_pods(svc, selector)
        trigger = self._ep_triggers.compute(key, svc, pods)
        publish = bool(spec.get("publishNotReadyAddresses"))
        family = service_address_types(svc)[0]
        svc_ports = spec.get("ports") or []
        entries: list[tuple[JsonDict, JsonDict | None, bool]] = []
        for pod in pods:
            if not should_pod_be_in_endpoints(pod, include_terminating=publish):
                continue
            ip = pod_ip_for_family(pod, family)
            if ip is None:
                continue
            addr: JsonDict = {"ip": ip}
            if should_set_hostname(pod, svc):
                addr["hostname"] = (pod.get("spec") or {}).get("hostname")
            addr["nodeName"] = (pod.get("spec") or {}).get("nodeName") or ""
            addr["targetRef"] = _target_ref(pod)
            ready = publish or is_pod_ready(pod)
            if not svc_ports:
                if spec.get("clusterIP") == "None":
                    entries.append((addr, None, ready))
                continue
            for sp in svc_ports:
                num = find_port(pod, sp)
                if num is None:
                    logger.debug("%s: no port for service=%s pod=%s", self.NAME, key, meta(pod).get("name"))
                    continue
                port: JsonDict = {"name": sp.get("name") or None, "port": num, "protocol": sp.get("protocol") or "TCP"}
                if sp.get("appProtocol"):
                    port["appProtocol"] = sp["appProtocol"]
                entries.append((addr, {k: v for k, v in port.items() if v is not None}, ready))
        subsets = repack_subsets(entries)

        current = self._ep_inf.store.get(key)
        if current is not None:
            seen = self._ep_written.get(key)
            if seen is not None:
                if _rv(current) < seen:
                    raise StaleCacheError(f"endpoints informer cache is out of date for endpoints {key}")
                del self._ep_written[key]
        svc_labels = dict(meta(svc).get("labels") or {})
        if current is not None:
            if (subsets_equal(current.get("subsets"), subsets)
                    and labels_correct_for_endpoints(meta(current).get("labels") or {}, svc_labels)
                    and _capacity_annotation_ok(current)):
                return
            body = copy.deepcopy(current)
        else:
            body = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": ns}}
        m = body["metadata"]
        annotations = dict(m.get("annotations") or {})
        if trigger is not None:
            annotations[ANNOTATION_TRIGGER_TIME] = _rfc3339nano(trigger)
        else:
            annotations.pop(ANNOTATION_TRIGGER_TIME, None)
        subsets, truncated = truncate_subsets(subsets)
        if truncated:
            annotations[ANNOTATION_OVER_CAPACITY] = "truncated"
        else:
            annotations.pop(ANNOTATION_OVER_CAPACITY, None)
        labels = dict(svc_labels)
        labels[LABEL_ENDPOINTS_MANAGED_BY] = ENDPOINTS_CONTROLLER_NAME
        if _is_headless(svc):
            labels[LABEL_HEADLESS] = ""
        m["labels"] = labels or None
        m["annotations"] = annotations or None
        body["subsets"] = subsets
        body["metadata"] = {k: v for k, v in m.items() if v is not None}
        try:
            if current is None:
                out = await self._client.create(ENDPOINTS, body, ns)
            else:
                out = await self._client.update(ENDPOINTS, body)
        except AlreadyExistsError:
            raise StaleCacheError(f"endpoints {key} exist but are not in the informer cache yet") from None
        except ForbiddenError:
            if current is None:
                logger.debug("%s: forbidden creating endpoints=%s (namespace terminating?)", self.NAME, key)
                return
            raise
        except ApiError as e:
            if not isinstance(e, NotFoundError):
                reason = "FailedToCreateEndpoint" if current is None else "FailedToUpdateEndpoint"
                verb = "create endpoint for service" if current is None else "update endpoint"
                self.recorder.event(body, "Warning", reason, f"Failed to {verb} {key}: {e}")
            raise
        self._ep_written[key] = _rv(out)
        logger.debug("%s: wrote endpoints=%s subsets=%d", self.NAME, key, len(subsets))

    # ---- EndpointSlices

    async def sync_slices(self, key: str) -> None:
        ns, _, name = key.partition("/")
        svc = self._svc_inf.store.get(key)
        if svc is None:
            self._slice_triggers.delete(key)
            self._slices_written.pop(key, None)
            return  # the garbage collector removes owned slices
        spec = svc.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return
        selector = service_selector(svc)
        if selector is None:
            return
        existing = [s for s in self._slice_inf.by_index(SERVICE_INDEX, key)
                    if (meta(s).get("labels") or {}).get(LABEL_MANAGED_BY) == CONTROLLER_NAME]
        self._check_slices_fresh(key, existing)
        pods = self._selected_pods(svc, selector)
        trigger = self._slice_triggers.compute(key, svc, pods)
        plan = _SlicePlan()
        errs: list[str] = []
        address_types = service_address_types(svc)
        publish = bool(spec.get("publishNotReadyAddresses"))
        for addr_type in address_types:
            desired: dict[tuple[tuple[str, int, str, str], ...], tuple[list[JsonDict], list[JsonDict]]] = {}
            for pod in pods:
                if not should_pod_be_in_endpoints(pod, include_terminating=True):
                    continue
                node_name = (pod.get("spec") or {}).get("nodeName") or ""
                node = self._node_inf.store.get(node_name) if node_name else None
                if node is None and not publish:
                    errs.append(f"skipping Pod {meta(pod).get('name')} for Service {key}: Node {node_name} Not Found")
                    continue
                ep = pod_to_endpoint(pod, node, svc, addr_type)
                if ep is None:
                    continue
                ports = endpoint_ports(svc, pod)
                desired.setdefault(_ports_key(ports), (ports, []))[1].append(ep)
            mine = [s for s in existing if s.get("addressType") == addr_type]
            self._reconcile_family(svc, addr_type, desired, mine, plan)
        # slices of address types the Service no longer has
        plan.delete.extend(s for s in existing if s.get("addressType") not in address_types)
        # never leave a selector Service without any slice: keep or create a placeholder
        if len(existing) == len(plan.delete) and not plan.create:
            placeholder = self._new_slice(svc, address_types[0], [], [])
            if len(plan.delete) == 1 and _is_placeholder_of(plan.delete[0], placeholder):
                plan.delete.clear()
            else:
                plan.create.append(placeholder)
        await self._apply(svc, key, plan, trigger)
        if errs:
            raise StaleCacheError("; ".join(errs))

    def _check_slices_fresh(self, key: str, existing: list[JsonDict]) -> None:
        written = self._slices_written.get(key)
        if not written:
            return
        cached = {str(meta(s).get("name")): s for s in existing}
        for slice_name, rv in list(written.items()):
            obj = cached.get(slice_name)
            if rv == _DELETED:
                if obj is not None:
                    raise StaleCacheError(f"EndpointSlice informer cache is out of date for service {key}")
                del written[slice_name]
            elif obj is None or _rv(obj) < rv:
                # written by us and not seen yet (a delete by someone else drops the
                # expectation in `_slice_deleted`)
                raise StaleCacheError(f"EndpointSlice informer cache is out of date for service {key}")
            else:
                del written[slice_name]

    def _new_slice(self, svc: JsonDict, addr_type: str, ports: list[JsonDict], endpoints: list[JsonDict]) -> JsonDict:
        m = meta(svc)
        body: JsonDict = {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"generateName": endpoint_slice_prefix(str(m.get("name"))), "namespace": m.get("namespace"),
                         "labels": slice_labels(svc),
                         "ownerReferences": [make_controller_ref(svc, api_version="v1", kind="Service")]},
            "addressType": addr_type,
            "endpoints": endpoints,
        }
        if ports:
            body["ports"] = ports
        return body

    def _reconcile_family(self, svc: JsonDict, addr_type: str,
                          desired: dict[tuple[tuple[str, int, str, str], ...], tuple[list[JsonDict], list[JsonDict]]],
                          existing: list[JsonDict], plan: _SlicePlan) -> None:
        """reconcileByPortMapping, simplified: keep each existing slice's still-desired endpoints
        (refreshed), drop the rest, fill slices being updated anyway, then pack what remains
        into new slices of at most max-endpoints-per-slice."""
        want_labels = slice_labels(svc)
        by_ports: dict[tuple[tuple[str, int, str, str], ...], list[JsonDict]] = {}
        for s in existing:
            if not _owned_by(s, svc):
                plan.delete.append(s)
                continue
            by_ports.setdefault(_ports_key(s.get("ports")), []).append(s)
        for pkey, slices in by_ports.items():
            if pkey not in desired:
                plan.delete.extend(slices)
        for pkey, (ports, eps) in desired.items():
            todo = {endpoint_identity(e): e for e in sorted(eps, key=endpoint_identity)}
            updating: list[JsonDict] = []
            untouched: list[JsonDict] = []
            for s in sorted(by_ports.get(pkey, []), key=lambda s: str(meta(s).get("name"))):
                new_eps: list[JsonDict] = []
                changed = False
                for e in s.get("endpoints") or []:
                    ident = endpoint_identity(e)
                    want = todo.pop(ident, None)
                    if want is None:
                        changed = True
                        continue
                    if _endpoint_cmp(want) != _endpoint_cmp(e):
                        changed = True
                    new_eps.append(want)
                labels_changed = (meta(s).get("labels") or {}) != want_labels
                if changed or labels_changed:
                    if not new_eps:
                        plan.delete.append(s)
                        continue
                    body = copy.deepcopy(s)
                    body["endpoints"] = new_eps
                    body["metadata"]["labels"] = dict(want_labels)
                    updating.append(body)
                else:
                    untouched.append(s)
            remaining = list(todo.values())
            for body in updating:  # fill slices that are being written anyway
                room = self._max_per_slice - len(body["endpoints"])
                if room > 0 and remaining:
                    body["endpoints"].extend(remaining[:room])
                    remaining = remaining[room:]
            while remaining:
                chunk, remaining = remaining[:self._max_per_slice], remaining[self._max_per_slice:]
                if len(chunk) < self._max_per_slice:
                    # a partial last chunk goes into the fullest untouched slice that fits it
                    fits = [s for s in untouched if len(s.get("endpoints") or []) + len(chunk) <= self._max_per_slice]
                    if fits:
                        best = max(fits, key=lambda s: len(s.get("endpoints") or []))
                        untouched.remove(best)
                        body = copy.deepcopy(best)
                        body["endpoints"] = list(body.get("endpoints") or []) + chunk
                        updating.append(body)
                        break
                plan.create.append(self._new_slice(svc, addr_type, ports, chunk))
            plan.update.extend(updating)

    async def _apply(self, svc: JsonDict, key: str, plan: _SlicePlan, trigger: datetime | None) -> None:
        ns = meta(svc).get("namespace")
        written = self._slices_written.setdefault(key, {})

        def stamp(body: JsonDict) -> None:
            ann = dict(body["metadata"].get("annotations") or {})
            if trigger is not None:
                ann[ANNOTATION_TRIGGER_TIME] = _rfc3339nano(trigger)
            else:
                ann.pop(ANNOTATION_TRIGGER_TIME, None)
            if ann:
                body["metadata"]["annotations"] = ann
            else:
                body["metadata"].pop("annotations", None)

        # a Service being deleted gets no new slices (they would race the garbage collector)
        if not is_deleting(svc):
            for body in plan.create:
                stamp(body)
                out = await self._client.create(ENDPOINTSLICES, body, ns)
                written[str(meta(out).get("name"))] = _rv(out)
                logger.debug("%s: created endpointslice=%s/%s", self.NAME, ns, meta(out).get("name"))
        for body in plan.update:
            stamp(body)
            try:
                out = await self._client.update(ENDPOINTSLICES, body)
            except NotFoundError:
                continue
            written[str(meta(out).get("name"))] = _rv(out)
        for s in plan.delete:
            name = str(meta(s).get("name"))
            try:
                await self._client.delete(ENDPOINTSLICES, name, ns)
            except NotFoundError:
                continue
            written[name] = _DELETED


@dataclass(slots=True)
class _SlicePlan:
    create: list[JsonDict] = field(default_factory=list)
    update: list[JsonDict] = field(default_factory=list)
    delete: list[JsonDict] = field(default_factory=list)


def _is_placeholder_of(existing: JsonDict, placeholder: JsonDict) -> bool:
    """placeholderSliceCompare: same address type, no endpoints, no ports, same labels and owner."""
    return (existing.get("addressType") == placeholder.get("addressType") and not existing.get("endpoints")
            and not existing.get("ports") and meta(existing).get("labels") == meta(placeholder).get("labels")
            and [r.get("uid") for r in meta(existing).get("ownerReferences") or []]
            == [r.get("uid") for r in meta(placeholder).get("ownerReferences") or []])


def _capacity_annotation_ok(ep: JsonDict) -> bool:
    """capacityAnnotationSetCorrectly."""
    n = sum(len(s.get("addresses") or []) + len(s.get("notReadyAddresses") or []) for s in ep.get("subsets") or [])
    if n > MAX_ENDPOINTS_CAPACITY:
        return False
    return ANNOTATION_OVER_CAPACITY not in (meta(ep).get("annotations") or {})


def _namespace_index(obj: JsonDict) -> list[str]:
    return [meta(obj).get("namespace") or ""]


def _slice_service_index(obj: JsonDict) -> list[str]:
    name = (meta(obj).get("labels") or {}).get(LABEL_SERVICE_NAME)
    return [f"{meta(obj).get('namespace') or ''}/{name}"] if name else []


__all__ = ["EndpointsController", "TriggerTimeTracker", "find_port", "pod_to_endpoint", "repack_subsets",
           "should_pod_be_in_endpoints", "truncate_subsets"]
