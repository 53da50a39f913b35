"""core/v1 Endpoints and discovery.k8s.io/v1 EndpointSlice strategies: their warnings (layer L4).

Why: v1.33's registries warn about addresses a client wrote in a non-standard form (KEP-4858,
`net_warnings`): pkg/registry/core/endpoint's endpointsWarnings (every subset's addresses and
notReadyAddresses, on create and update) and pkg/registry/discovery/endpointslice's warnOnBadIPs
(every endpoint's addresses, on create and update) plus warnOnDeprecatedAddressType (an FQDN
slice, on create only). An EndpointSlice also tracks metadata.generation as upstream's does.

Objects the cluster's own controllers write are skipped, as upstream skips them: an Endpoints
labelled `endpoints.kubernetes.io/managed-by: endpoint-controller`, an EndpointSlice labelled
`endpointslice.kubernetes.io/managed-by` with the EndpointSlice or mirroring controller's name
(those controllers write canonical addresses; the checks would only cost them time).

The deprecation of the v1 Endpoints API itself ("v1 Endpoints is deprecated in v1.33+") is a
per-resource warning on every request, added by the HTTP layer (apiserver/handlers/deprecation.py).
"""

from __future__ import annotations

from minik3s.api.types import JsonDict

from .base import Strategy, as_dict, as_list
from .net_warnings import ip_problem

# pkg/controller/endpoint: LabelManagedBy, ControllerName
ENDPOINTS_MANAGED_BY = "endpoints.kubernetes.io/managed-by"
ENDPOINTS_CONTROLLER = "endpoint-controller"
# discoveryv1.LabelManagedBy; the EndpointSlice and EndpointSlice mirroring controllers' names
SLICE_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
SLICE_CONTROLLERS = frozenset({"endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io"})


def _labels(obj: JsonDict) -> JsonDict:
    return as_dict(as_dict(obj.get("metadata")).get("labels"))


def _address_warnings(addresses: object, path: str) -> list[str]:
    warnings: list[str] = []
    for j, a in enumerate(addresses if isinstance(addresses, list) else ()):
        ip = a.get("ip") if isinstance(a, dict) else None
        if isinstance(ip, str) and (problem := ip_problem(ip)) is not None:  # the path only when needed
            warnings.append(f"{path}[{j}].ip: {problem}")
    return warnings


def endpoints_warnings(obj: JsonDict) -> list[str]:
    """endpointsWarnings."""
    if _labels(obj).get(ENDPOINTS_MANAGED_BY) == ENDPOINTS_CONTROLLER:
        return []
    warnings: list[str] = []
    for i, subset in enumerate(as_list(obj.get("subsets"))):
        subset = as_dict(subset)
        warnings.extend(_address_warnings(subset.get("addresses"), f"subsets[{i}].addresses"))
        warnings.extend(_address_warnings(subset.get("notReadyAddresses"), f"subsets[{i}].notReadyAddresses"))
    return warnings


def warn_on_bad_ips(obj: JsonDict) -> list[str]:
    """warnOnBadIPs."""
    if _labels(obj).get(SLICE_MANAGED_BY) in SLICE_CONTROLLERS:
        return []
    warnings: list[str] = []
    for i, ep in enumerate(as_list(obj.get("endpoints"))):
        for j, addr in enumerate(as_list(as_dict(ep).get("addresses"))):
            if isinstance(addr, str) and (problem := ip_problem(addr)) is not None:
                warnings.append(f"endpoints[{i}].addresses[{j}]: {problem}")
    return warnings


def warn_on_deprecated_address_type(obj: JsonDict) -> list[str]:
    """warnOnDeprecatedAddressType (the path is upstream's, `spec.` included)."""
    return ["spec.addressType: FQDN endpoints are deprecated"] if obj.get("addressType") == "FQDN" else []


class EndpointsStrategy(Strategy):
    """core/v1 Endpoints: AllowCreateOnUpdate, and the address warnings."""

    kind = "Endpoints"
    allow_create_on_update = True

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return endpoints_warnings(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return endpoints_warnings(new)


class EndpointSliceStrategy(Strategy):
    """discovery.k8s.io/v1 EndpointSlice: metadata.generation 1 on create, bumped by an update
    that changes anything but metadata, or the labels (PrepareForCreate / PrepareForUpdate); the
    address-type and address warnings."""

    kind = "EndpointSlice"
    group = "discovery.k8s.io"
    tracks_generation = True

    def _spec_changed(self, new: JsonDict, old: JsonDict) -> bool:
        return super()._spec_changed(new, old) or _labels(new) != _labels(old)

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return warn_on_deprecated_address_type(obj) + warn_on_bad_ips(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return warn_on_bad_ips(new)
