"""The IPAddress objects the cluster IP allocator keeps (layer L2, KEP-1880): one per cluster IP,
named after it, labelled with its family and `managed-by: ipallocator.k8s.io`, pointing at its
Service. Shared by the allocator (apiserver.strategies.service) and the repair at start
(minik3s.controllers.servicecidrs), so both write the same object.

Example: `ip_address_object("10.43.0.1", "default", "kubernetes")` -> IPAddress `10.43.0.1`,
parentRef {resource: services, namespace: default, name: kubernetes}.
"""

from __future__ import annotations

from minik3s.api.types import JsonDict

IP_FAMILY_LABEL = "ipaddress.kubernetes.io/ip-family"
MANAGED_BY_LABEL = "ipaddress.kubernetes.io/managed-by"
ALLOCATOR = "ipallocator.k8s.io"


def cluster_ips(svc: JsonDict | None) -> list[str]:
    """The cluster IPs a Service holds (none for ExternalName or headless)."""
    spec = (svc or {}).get("spec") or {}
    if spec.get("type") == "ExternalName":
        return []
    return [str(ip) for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip and ip != "None"]


def service_ref(namespace: str, name: str) -> JsonDict:
    return {"resource": "services", "namespace": namespace, "name": name}


def ip_address_object(ip: str, namespace: str, name: str) -> JsonDict:
    """The IPAddress the allocator creates for a Service's cluster IP (createIPAddress)."""
    family = "IPv6" if ":" in ip else "IPv4"
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
            "metadata": {"name": ip, "labels": {IP_FAMILY_LABEL: family, MANAGED_BY_LABEL: ALLOCATOR}},
            "spec": {"parentRef": service_ref(namespace, name)}}
