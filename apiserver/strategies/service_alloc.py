"""ClusterIP and NodePort allocation for Services (layer L4, apiserver).

Why: kube-apiserver's service REST layer (pkg/registry/core/service/ipallocator and
portallocator) gives every non-headless ClusterIP/NodePort/LoadBalancer Service a cluster IP from
the service CIDR and every NodePort/LoadBalancer port a node port; `kubectl get svc` shows them
(`CLUSTER-IP 10.43.12.7`, `PORT(S) 80:31234/TCP`). minik3s keeps no allocator bitmap: the set of
addresses in use is recomputed from the stored Services (plus in-flight reservations held by the
caller), which is exact in a single process and survives restarts for free.

Ranges are K3s' defaults: service CIDR 10.43.0.0/16 (10.43.0.1 is the `kubernetes` Service), node
ports 30000-32767. As upstream since 1.27 (ServiceIPStaticSubrange / ServiceNodePortStaticSubrange),
each range is split into a lower "static" band, left for users who pick their own value, and an
upper band that dynamic allocation uses first:
  IP band    = min(max(16, size/16), 256)  -> /16 (65534 usable): min(max(16, 4095), 256) = 256,
               so dynamic IPs come from 10.43.1.0 and up;
  port band  = min(max(16, size/32), 128)  -> 2768 ports: min(max(16, 86), 128) = 86,
               so dynamic node ports come from 30086 and up.
Within the preferred band the pick is random (injected `random.Random`), falling back to the
static band only when the upper band is full, as upstream.

Data flow: core.create(Service) -> `used_from_services(stored)` -> `allocate(spec, used, rng)`
mutates the spec in place or returns field errors (422 causes).
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from minik3s.api import errors
from minik3s.api.types import JsonDict
from minik3s.api.validation import invalid

SERVICE_CIDR = ipaddress.ip_network("10.43.0.0/16")
NODE_PORT_RANGE = (30000, 32767)
NEEDS_NODE_PORTS = ("NodePort", "LoadBalancer")


@dataclass(slots=True)
class Used:
    ips: set[str] = field(default_factory=set)
    node_ports: set[int] = field(default_factory=set)


def used_from_services(services: Iterable[JsonDict]) -> Used:
    used = Used()
    for svc in services:
        spec = svc.get("spec") or {}
        for ip in spec.get("clusterIPs") or [spec.get("clusterIP")]:
            if ip and ip != "None":
                used.ips.add(str(ip))
        for p in spec.get("ports") or []:
            if isinstance(p, dict) and isinstance(p.get("nodePort"), int):
                used.node_ports.add(p["nodePort"])
    return used


def _band(size: int, *, lo: int, hi: int, step: int) -> int:
    """Size of the static (lower) band. Example: 2768 node ports, step 32 -> 86."""
    return min(max(lo, size // step), hi)


def _pick(candidates_hi: range, candidates_lo: range, taken: set[int], rng: random.Random) -> int | None:
    for band in (candidates_hi, candidates_lo):
        free = len(band)
        if free == 0:
            continue
        # random start, then linear probe: uniform enough, O(n) worst case only when nearly full
        start = rng.randrange(free)
        for i in range(free):
            v = band[(start + i) % free]
            if v not in taken:
                return v
    return None


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def ready_cidrs(service_cidrs: Iterable[JsonDict]) -> list[Network]:
    """The ranges the IPv4 allocator may use (MetaAllocator.syncAllocators): every CIDR of a
    ServiceCIDR that is not being deleted and whose Ready condition is not False (no condition:
    ready, as before its controller ran); one per distinct range, in the given order."""
    out: list[Network] = []
    for sc in service_cidrs:
        if (sc.get("metadata") or {}).get("deletionTimestamp"):
            continue
        conds = (sc.get("status") or {}).get("conditions") or []
        if any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "False" for c in conds):
            continue
        for c in (sc.get("spec") or {}).get("cidrs") or []:
            try:
                net = ipaddress.ip_network(str(c), strict=False)
            except ValueError:
                continue
            if net.version == 4 and net not in out:
                out.append(net)
    return out


def _usable(net: Network) -> tuple[int, int]:
    """First and last assignable address (the network and, for IPv4, the broadcast excluded)."""
    return int(net.network_address) + 1, int(net.broadcast_address) - (1 if net.version == 4 else 0)


def allocate_cluster_ip(used: set[str], rng: random.Random, nets: list[Network] | None = None) -> str | None:
    """A free address from one of `nets` (tried in random order, as Go's map iteration in
    AllocateNextService; each range's upper band first, KEP-3070); None when all are full."""
    nets = list(nets) if nets is not None else [SERVICE_CIDR]
    rng.shuffle(nets)
    taken_all = {int(ipaddress.ip_address(ip)) for ip in used if _parses(ip)}
    for net in nets:
        first, last = _usable(net)
        if last < first:
            continue
        # calculateRangeOffset: from the whole prefix's size; none for a range of 16 or fewer
        band = 0 if net.num_addresses <= 16 else _band(net.num_addresses, lo=16, hi=256, step=16)
        taken = set(taken_all)
        if net == SERVICE_CIDR:
            taken.add(first)  # the `kubernetes` Service's address
        v = _pick(range(first + band, last + 1), range(first, first + band), taken, rng)
        if v is not None:
            return str(ipaddress.ip_address(v))
    return None


def _parses(ip: str) -> bool:
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        return False
    return True


def allocate_node_port(used: set[int], rng: random.Random) -> int | None:
    lo, hi = NODE_PORT_RANGE
    band = _band(hi - lo + 1, lo=16, hi=128, step=32)
    return _pick(range(lo + band, hi + 1), range(lo, lo + band), used, rng)


def _in_cidr(ip: str, nets: list[Network] | None = None) -> bool:
    """Whether a ready range holds `ip` as an assignable address (getAllocator / PrefixContainsIP)."""
    try:
        addr = int(ipaddress.ip_address(ip))
    except ValueError:
        return False
    for net in nets if nets is not None else [SERVICE_CIDR]:
        first, last = _usable(net)
        if first <= addr <= last and ipaddress.ip_address(ip).version == net.version:
            return True
    return False


def allocate(spec: JsonDict, used: Used, rng: random.Random, nets: list[Network] | None = None) -> list[JsonDict]:
    """Fill `clusterIP`/`clusterIPs` and missing `nodePort`s of a Service spec being created,
    from the ready ranges `nets` (None: K3s' default range alone).

    Returns 422 causes (upstream wording) for a requested IP or port that is taken or out of
    range; raises InternalError when no range has a free address (upstream: "failed to allocate
    a serviceIP: range is full"); `used` gains what was allocated (so a caller can hold it as a
    reservation)."""
    stype = spec.get("type") or "ClusterIP"
    if stype == "ExternalName":
        return []
    errs: list[JsonDict] = []
    requested = spec.get("clusterIP") or next(iter(spec.get("clusterIPs") or []), None)
    if requested == "None":
        spec["clusterIP"] = "None"
        spec["clusterIPs"] = ["None"]
    elif requested:
        if not _in_cidr(str(requested), nets):
            errs.append(invalid("spec.clusterIPs", [str(requested)],
                                f"failed to allocate IP {requested}: the provided network does not match the current "
                                "range"))
        elif str(requested) in used.ips:
            errs.append(invalid("spec.clusterIPs", [str(requested)],
                                f"failed to allocate IP {requested}: provided IP is already allocated"))
        else:
            spec["clusterIP"] = str(requested)
            spec["clusterIPs"] = [str(requested)]
            used.ips.add(str(requested))
    else:
        ip = allocate_cluster_ip(used.ips, rng, nets)
        if ip is None:
            raise errors.InternalError("Internal error occurred: failed to allocate a serviceIP: range is full")
        else:
            spec["clusterIP"] = ip
            spec["clusterIPs"] = [ip]
            used.ips.add(ip)
    if stype in NEEDS_NODE_PORTS:
        if stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        if stype == "NodePort" or spec.get("allocateLoadBalancerNodePorts"):
            errs.extend(_node_ports(spec, used, rng))
    return errs


def _node_ports(spec: JsonDict, used: Used, rng: random.Random) -> list[JsonDict]:
    errs: list[JsonDict] = []
    lo, hi = NODE_PORT_RANGE
    for i, p in enumerate(spec.get("ports") or []):
        if not isinstance(p, dict):
            continue
        np = p.get("nodePort")
        if isinstance(np, int) and np:
            if not lo <= np <= hi:
                errs.append(invalid(f"spec.ports[{i}].nodePort", np,
                                    f"provided port is not in the valid range. The range of valid ports is "
                                    f"{lo}-{hi}"))
            elif np in used.node_ports:
                errs.append(invalid(f"spec.ports[{i}].nodePort", np, "provided port is already allocated"))
            else:
                used.node_ports.add(np)
            continue
        port = allocate_node_port(used.node_ports, rng)
        if port is None:
            errs.append(invalid(f"spec.ports[{i}].nodePort", 0, "range is full"))
            continue
        p["nodePort"] = port
        used.node_ports.add(port)
    return errs



def allocate_update(new: JsonDict, old: JsonDict, used: Used, rng: random.Random,
                    nets: list[Network] | None = None) -> list[JsonDict]:
    """The update half (upstream `patchAllocatedValues` + `allocateUpdate`): node ports the old
    object held are carried over to the same (port, protocol) when the client left them out, then
    anything still missing is allocated as on create. `used` must not contain `old`'s own values."""
    stype = new.get("type") or "ClusterIP"
    if stype in NEEDS_NODE_PORTS and (old.get("type") or "ClusterIP") in NEEDS_NODE_PORTS:
        held = {(p.get("port"), p.get("protocol") or "TCP"): p.get("nodePort")
                for p in old.get("ports") or [] if isinstance(p, dict) and p.get("nodePort")}
        for p in new.get("ports") or []:
            if isinstance(p, dict) and not p.get("nodePort"):
                np = held.get((p.get("port"), p.get("protocol") or "TCP"))
                if np:
                    p["nodePort"] = np
    own_ip = new.get("clusterIP")
    if own_ip and own_ip == old.get("clusterIP"):
        # an IP the service already holds is not re-checked
        used.ips.discard(str(own_ip))
        causes: list[JsonDict] = []
        if stype in NEEDS_NODE_PORTS:
            if stype == "LoadBalancer" and new.get("allocateLoadBalancerNodePorts") is None:
                new["allocateLoadBalancerNodePorts"] = True
            if stype == "NodePort" or new.get("allocateLoadBalancerNodePorts"):
                causes.extend(_node_ports(new, used, rng))
        return causes
    return allocate(new, used, rng, nets)
