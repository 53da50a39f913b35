"""The `kubernetes` Service's Endpoints and EndpointSlice in `default`, after kube-apiserver's
endpoint reconciler (`pkg/controlplane/reconcilers`: EndpointsAdapter.Sync with the
lease/none reconcilers' single-IP view).

The Service has no selector, so the endpoints / EndpointSlice controllers leave both objects
alone; the Endpoints carry `endpointslice.kubernetes.io/skip-mirror: "true"` so EndpointSlice
mirroring skips them too. Written once the server listens (its advertised address and secure
port are known then), and rewritten only when they differ from what is wanted.
"""

from __future__ import annotations

import copy
import ipaddress
import logging

from minik3s.api.errors import AlreadyExistsError, NotFoundError
from minik3s.api.resources import ENDPOINTS, ENDPOINTSLICES, SERVICES
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client

logger = logging.getLogger(__name__)

SERVICE_NAME = "kubernetes"
SERVICE_NAMESPACE = "default"
PORT_NAME = "https"
LABEL_SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
LABEL_SERVICE_NAME = "kubernetes.io/service-name"


def advertised_ip(bind: str) -> str:
    """The address the endpoints advertise: the bind address, or loopback when it is a
    wildcard or not an IP (the kubeconfig's host likewise)."""
    try:
        ip = ipaddress.ip_address(bind.strip("[]"))
    except ValueError:
        return "127.0.0.1"
    return "127.0.0.1" if ip.is_unspecified else str(ip)


def address_type(ip: str) -> str:
    return "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"


def endpoint_ports(port: int) -> list[JsonDict]:
    """createEndpointPortSpec: the single `https` port."""
    return [{"name": PORT_NAME, "port": port, "protocol": "TCP"}]


def desired_endpoints(ip: str, port: int) -> JsonDict:
    """EndpointsAdapter.updateEndpoints: one subset, the skip-mirror label only."""
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": SERVICE_NAME, "namespace": SERVICE_NAMESPACE,
                         "labels": {LABEL_SKIP_MIRROR: "true"}},
            "subsets": [{"addresses": [{"ip": ip}], "ports": endpoint_ports(port)}]}


def desired_slice(ip: str, port: int) -> JsonDict:
    """EndpointsAdapter.updateEndpointSlice: named after the Service, labelled with it only."""
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": SERVICE_NAME, "namespace": SERVICE_NAMESPACE,
                         "labels": {LABEL_SERVICE_NAME: SERVICE_NAME}},
            "addressType": address_type(ip),
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
            "ports": endpoint_ports(port)}


async def reconcile_apiserver_endpoints(client: Client, ip: str, port: int) -> None:
    """ReconcileEndpoints (reconcilePorts): the Endpoints, then the EndpointSlice, then the
    Service's targetPort (the bootstrap controller's port reconciliation)."""
    await _sync_endpoints(client, desired_endpoints(ip, port))
    await _sync_slice(client, desired_slice(ip, port))
    await _sync_service_target_port(client, port)


async def _sync_endpoints(client: Client, want: JsonDict) -> None:
    try:
        cur = await client.get(ENDPOINTS, SERVICE_NAME, SERVICE_NAMESPACE)
    except NotFoundError:
        try:
            await client.create(ENDPOINTS, want, SERVICE_NAMESPACE)
        except AlreadyExistsError:
            pass
        return
    if cur.get("subsets") == want["subsets"] and cur["metadata"].get("labels") == want["metadata"]["labels"]:
        return
    logger.warning("resetting endpoints for master service %r", SERVICE_NAME)
    body = copy.deepcopy(cur)
    body["metadata"]["labels"] = want["metadata"]["labels"]
    body["subsets"] = want["subsets"]
    await client.update(ENDPOINTS, body)


async def _sync_slice(client: Client, want: JsonDict) -> None:
    listed = await client.list(ENDPOINTSLICES, SERVICE_NAMESPACE,
                               label_selector=f"{LABEL_SERVICE_NAME}={SERVICE_NAME}")
    cur: JsonDict | None = None
    for sl in listed["items"]:
        if sl["metadata"]["name"] == SERVICE_NAME and sl.get("addressType") == want["addressType"]:
            cur = sl
            continue
        try:  # a slice of the other family or an unexpected name: stale as far as we know
            await client.delete(ENDPOINTSLICES, sl["metadata"]["name"], SERVICE_NAMESPACE)
        except NotFoundError:
            pass
    if cur is None:
        try:
            await client.create(ENDPOINTSLICES, want, SERVICE_NAMESPACE)
        except AlreadyExistsError:
            pass
        return
    if all(cur.get(k) == want[k] for k in ("endpoints", "ports")) \
            and cur["metadata"].get("labels") == want["metadata"]["labels"]:
        return
    body = copy.deepcopy(cur)
    body["metadata"]["labels"] = want["metadata"]["labels"]
    for k in ("addressType", "endpoints", "ports"):
        body[k] = want[k]
    await client.update(ENDPOINTSLICES, body)


async def _sync_service_target_port(client: Client, port: int) -> None:
    try:
        svc = await client.get(SERVICES, SERVICE_NAME, SERVICE_NAMESPACE)
    except NotFoundError:
        return
    ports = (svc.get("spec") or {}).get("ports") or []
    if len(ports) != 1 or ports[0].get("targetPort") == port:
        return
    ports[0]["targetPort"] = port
    await client.update(SERVICES, svc)
