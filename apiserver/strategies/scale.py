"""The scale subresource (autoscaling/v1 Scale) of every kind that lists `scale` in the
resources table: Deployments, ReplicaSets, StatefulSets, ReplicationControllers and custom
resources with `subresources.scale` (layer L4, apiserver/strategies).

Upstream: pkg/registry/apps/deployment/storage/storage.go ScaleREST (and the CRD scale
storage): GET renders spec.replicas / status.replicas / status.selector as a Scale; PUT and
PATCH change only spec.replicas, with the Scale's resourceVersion as a precondition.

Data flow: handler -> `core.subresource(info, "scale")` -> `ScaleREST` -> `ops.get` /
`ops.guaranteed_update` of the parent -> the parent's Scale view back.
"""

from __future__ import annotations

from apiserver.patch import PatchError
from apiserver.patch.json_patch import apply_json_patch
from apiserver.patch.merge_patch import apply_merge_patch
from minik3s.api import errors
from minik3s.api.errors import BadRequestError
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.selectors import label_selector_string
from minik3s.api.types import JsonDict

from .rest import RegistryOps, Subresource, meta_of, rv_int
from .schema import scale_type_error


def to_scale(obj: JsonDict) -> JsonDict:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    sel = spec.get("selector") or {}
    if isinstance(sel, dict) and ("matchLabels" in sel or "matchExpressions" in sel):
        selector = label_selector_string(sel) or ""
    elif isinstance(sel, dict):
        selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
    else:
        selector = ""
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid"),
                     "resourceVersion": meta.get("resourceVersion"),
                     "creationTimestamp": meta.get("creationTimestamp")},
        "spec": {"replicas": int(spec.get("replicas") or 0)},
        "status": {"replicas": int(status.get("replicas") or 0), "selector": selector},
    }


class ScaleREST(Subresource):
    name = "scale"
    verbs = frozenset({"GET", "PUT", "PATCH"})

    def get(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict | str:
        return to_scale(ops.get(info, namespace, name))

    async def update(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        if not isinstance(body, dict):
            raise BadRequestError("the object provided is not a JSON object")
        bad = scale_type_error(body)
        if bad:
            raise BadRequestError(f'Scale in version "v1" cannot be handled as a Scale: {bad}')
        replicas = (body.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise errors.invalid("Scale", name, [errors.cause(
                "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0")], "autoscaling")
        rv = meta_of(body).get("resourceVersion")
        pre = rv_int(rv) if rv else None

        def mutate(obj: JsonDict) -> None:
            obj.setdefault("spec", {})["replicas"] = replicas

        updated = await ops.guaranteed_update(info, namespace, name, mutate, opts, precondition_rv=pre)
        return to_scale(updated)

    async def patch(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str,
                    patch_type: str, body: object, opts: WriteOptions) -> JsonDict:
        cur = to_scale(ops.get(info, namespace, name))
        try:
            new = apply_json_patch(cur, body) if patch_type == "json" else apply_merge_patch(cur, body)
        except PatchError as e:
            raise e.to_api_error() from None
        return await self.update(ops, info, namespace, name, new, opts)


SCALE = ScaleREST()
