"""The pod's own subresources: pods/binding (also POST bindings), pods/eviction, pods/log,
and pods/exec|attach|portforward answering that simulated kubelets cannot stream (layer L4,
apiserver/strategies).

Upstream: pkg/registry/core/pod/storage/storage.go (BindingREST, LegacyBindingREST, LogREST)
and eviction.go (EvictionREST, here `apiserver.strategies.eviction`).

Data flow: handler -> `core.subresource(pods, "binding")` -> `BindingREST.create(ops, ...)` ->
`ops.guaranteed_update(pods, ..., subresource="binding")` (the server's own trusted mutation:
spec.nodeName and the PodScheduled condition) -> storage.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from minik3s.api import errors
from minik3s.api.errors import BadRequestError
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

from .eviction import evict
from .rest import RegistryOps, Subresource, UpdateRules, meta_of

SUCCESS_CREATED: JsonDict = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def pods_info(ops: RegistryOps) -> ResourceInfo:
    info = ops.registry.get("", "v1", "pods")
    if info is None:
        raise errors.InternalError("the pods resource is not registered")
    return info


class BindingREST(Subresource):
    """pods/binding and namespaces/{ns}/bindings: set spec.nodeName once (409 when already
    assigned, being deleted, gated, or the UID precondition fails)."""

    name = "binding"
    verbs = frozenset({"POST"})

    def prepare_update(self, rules: UpdateRules, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        # the server's own, trusted mutation of the pod (spec.nodeName, PodScheduled)
        return []

    async def create(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        if not isinstance(body, dict):
            raise BadRequestError("the object provided is not a JSON object")
        bmeta = meta_of(body)
        if bmeta.get("name") and name and bmeta["name"] != name:
            raise BadRequestError("name in URL does not match name in Binding object")
        name = name or bmeta.get("name") or ""
        target = body.get("target") or {}
        node = target.get("name") if isinstance(target, dict) else None
        if not node:
            raise errors.invalid("Binding", name, [errors.cause("target.name", "Required value",
                                                                "FieldValueRequired")])
        if target.get("kind") not in (None, "", "Node"):
            raise errors.invalid("Binding", name, [errors.cause(
                "target.kind", f'Invalid value: "{target.get("kind")}": must be empty or \'Node\'')])
        want_uid = bmeta.get("uid")
        annotations = bmeta.get("annotations") or {}
        if not isinstance(annotations, dict):
            raise BadRequestError("metadata.annotations must be an object")
        now = ops.now()

        def mutate(pod: JsonDict) -> None:
            pmeta = pod["metadata"]
            if want_uid and want_uid != pmeta.get("uid"):
                raise errors.conflict("pods/binding", "", name,
                                      f"Precondition failed: UID in precondition: {want_uid}, UID in object meta: "
                                      f"{pmeta.get('uid')}")
            if pmeta.get("deletionTimestamp"):
                raise errors.conflict("pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned "
                                      "to a host")
            spec = pod.setdefault("spec", {})
            if spec.get("nodeName"):
                raise errors.conflict("pods/binding", "", name,
                                      f'pod {name} is already assigned to node "{spec["nodeName"]}"')
            if spec.get("schedulingGates"):
                raise errors.conflict("pods/binding", "", name, f"pod {name} has non-empty .spec.schedulingGates")
            spec["nodeName"] = node
            if annotations:
                pmeta.setdefault("annotations", {}).update(annotations)
            conds = pod.setdefault("status", {}).setdefault("conditions", [])
            for c in conds:
                if c.get("type") == "PodScheduled":
                    if c.get("status") != "True":
                        c["lastTransitionTime"] = now
                    c["status"] = "True"
                    c.pop("reason", None)
                    c.pop("message", None)
                    break
            else:
                conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                              "lastTransitionTime": now})

        await ops.guaranteed_update(pods_info(ops), namespace, name, mutate, opts, subresource="binding")
        return dict(SUCCESS_CREATED)


class EvictionREST(Subresource):
    """pods/eviction: PodDisruptionBudget-checked graceful deletion (201 Success or 429)."""

    name = "eviction"
    verbs = frozenset({"POST"})

    async def create(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        return await evict(ops, pods_info(ops), namespace or "", name, body)


class LogREST(Subresource):
    """pods/log: the simulated container has one line of output naming its pod and node."""

    name = "log"
    verbs = frozenset({"GET"})

    def get(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict | str:
        pod = ops.get(info, namespace, name)
        node = (pod.get("spec") or {}).get("nodeName") or "<none>"
        return f"minik3s: simulated container of pod {namespace}/{name} on node {node}\n"


class StreamREST(Subresource):
    """pods/exec, pods/attach, pods/portforward: upstream proxies these to the kubelet's
    streaming server. Simulated kubelets run no container runtime, so after the pod lookup (404
    for a missing pod, as upstream) the answer is a 400 Status saying so, on both the WebSocket
    GET and the SPDY POST kubectl tries, instead of a 404 that reads as "pod not found"."""

    verbs = frozenset({"GET", "POST"})
    takes_body = False

    def __init__(self, name: str) -> None:
        self.name = name

    def _refuse(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> errors.ApiError:
        ops.get(info, namespace, name)
        return errors.BadRequestError(
            f"{self.name} is not supported by simulated kubelets: pod {namespace}/{name} has no container runtime")

    def get(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict | str:
        raise self._refuse(ops, info, namespace, name)

    async def create(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        raise self._refuse(ops, info, namespace, name)


BINDING = BindingREST()
POD_SUBRESOURCES: Mapping[str, Subresource] = MappingProxyType(
    {"binding": BINDING, "eviction": EvictionREST(), "log": LogREST(),
     "exec": StreamREST("exec"), "attach": StreamREST("attach"), "portforward": StreamREST("portforward")})
