"""Per-node address allocation for simulated nodes and pods (layer L4, kubelet_sim).

Node i of the fleet (1-based) gets InternalIP 172.18.0.0 + 1 + i and pod CIDR 10.244.i.0/24
(continuing 10.245.0.0/24, ... past 255 nodes and wrapping inside 10.0.0.0/8): node-1 →
172.18.0.2 and 10.244.1.0/24; node-300 → 172.18.1.45 and 10.245.44.0/24. Pod IPs come from the
node's CIDR starting at .2 (.1 is the bridge), lowest free first, so freed IPs are reused.
"""

from __future__ import annotations

import heapq
import ipaddress
from dataclasses import dataclass, field
from typing import Any

_NODE_BASE = int(ipaddress.IPv4Address("172.18.0.1"))
_TEN = int(ipaddress.IPv4Address("10.0.0.0"))
_POD_BASE_OFFSET = 244 * 65536  # 10.244.0.0 relative to 10.0.0.0


def node_internal_ip(index: int) -> str:
    return str(ipaddress.IPv4Address(_NODE_BASE + index))


def node_host_ips(addresses: list[Any]) -> list[str]:
    """nodeutil.GetNodeHostIPs over a Node's status.addresses: the first InternalIP (else the
    first ExternalIP), then the first address of the other IP family, if any (a dual-stack node).
    Unparsable addresses are skipped; [] when there is none."""
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for kind in ("InternalIP", "ExternalIP"):
        for a in addresses:
            if isinstance(a, dict) and a.get("type") == kind:
                try:
                    ips.append(ipaddress.ip_address(str(a.get("address") or "").strip()))
                except ValueError:
                    continue
    if not ips:
        return []
    out = [ips[0]]
    other = next((ip for ip in ips if ip.version != ips[0].version), None)
    if other is not None:
        out.append(other)
    return [str(ip) for ip in out]


def node_pod_cidr(index: int) -> str:
    off = (_POD_BASE_OFFSET + index * 256) % (1 << 24)
    return f"{ipaddress.IPv4Address(_TEN + off)}/24"


class IpExhaustedError(RuntimeError):
    pass


@dataclass(slots=True)
class IpPool:
    """Lowest-free allocator over the hosts of one CIDR (offsets 2 .. size-2)."""

    cidr: str
    _net: ipaddress.IPv4Network | ipaddress.IPv6Network = field(init=False)
    _next: int = field(init=False, default=2)
    _free: list[int] = field(init=False, default_factory=list)
    _used: set[int] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self._net = ipaddress.ip_network(self.cidr, strict=False)

    @property
    def _limit(self) -> int:
        return self._net.num_addresses - 1  # exclusive: the broadcast address is never handed out

    def allocate(self) -> str:
        while self._free:
            off = heapq.heappop(self._free)
            if off not in self._used:
                self._used.add(off)
                return str(self._net.network_address + off)
        if self._next >= self._limit:
            raise IpExhaustedError(f"no free pod IP in {self.cidr}")
        off = self._next
        self._next += 1
        self._used.add(off)
        return str(self._net.network_address + off)

    def _offset(self, ip: str) -> int | None:
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return None
        if addr not in self._net:
            return None
        return int(addr) - int(self._net.network_address)

    def reserve(self, ip: str) -> bool:
        """Mark an IP found in an existing pod as taken. False if it is not in this CIDR."""
        off = self._offset(ip)
        if off is None:
            return False
        if off >= self._next:
            for o in range(self._next, off):
                heapq.heappush(self._free, o)
            self._next = off + 1
        self._used.add(off)
        return True

    def release(self, ip: str) -> None:
        off = self._offset(ip)
        if off is not None and off in self._used:
            self._used.discard(off)
            heapq.heappush(self._free, off)

    def __len__(self) -> int:
        return len(self._used)
