"""core/v1 componentstatuses (layer L4, apiserver): `kubectl get componentstatuses` / `cs`.

Upstream's REST (pkg/registry/core/componentstatus) stores nothing: each GET or LIST probes the
components kube-apiserver knows of, kube-scheduler's and kube-controller-manager's /healthz and
the storage backend (etcd), and answers one ComponentStatus per component with a `Healthy`
condition: status True and message "ok" when the probe passed, else the probe's error (a
component that does not run: `Get "https://127.0.0.1:10259/healthz": dial tcp
127.0.0.1:10259: connect: connection refused`, status Unknown). The resource is deprecated
(v1.19+): every answer carries the Warning kubectl prints. Only get and list are served.

Here the components are embedded: the composition root hands the app a `ComponentHealth`
callable (name -> None when healthy, else the error), in upstream's order of the LIST.

Data flow: dispatch -> `serve(request, target)` -> `request.app[COMPONENT_HEALTH]()` -> JSON or Table.
"""

from __future__ import annotations

from aiohttp import web

from apiserver.handlers import codec
from apiserver.handlers.common import Target, method_not_allowed, table, wants_table, warning_headers
from apiserver.handlers.deprecation import deprecation_warning
from apiserver.keys import COMPONENT_HEALTH
from minik3s.api import errors
from minik3s.api.types import JsonDict


def _status(name: str, problem: str | None) -> JsonDict:
    condition: JsonDict = {"type": "Healthy", "status": "True", "message": "ok"}
    if problem is not None:
        condition = {"type": "Healthy", "status": "Unknown", "error": problem}
    # built in memory, as upstream's: no resourceVersion, a null creationTimestamp
    return {"metadata": {"name": name, "creationTimestamp": None}, "conditions": [condition]}


async def serve(request: web.Request, t: Target) -> web.StreamResponse:
    if request.method != "GET":
        raise method_not_allowed()
    provider = request.app[COMPONENT_HEALTH]
    health = provider() if provider is not None else {}
    deprecation = deprecation_warning(t.info)  # "v1 ComponentStatus is deprecated in v1.19+"
    headers = warning_headers([deprecation] if deprecation else None)
    if t.name is None:
        if request.query.get("watch") in ("1", "true", "True"):
            raise method_not_allowed()
        items = [_status(name, problem) for name, problem in health.items()]
        if wants_table(request):
            return codec.json_response(table(request, t.info, items, {}), headers=headers)
        return codec.json_response({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
                                    "items": items}, headers=headers)
    if t.name not in health:  # upstream answers a plain error here, i.e. a 500
        raise errors.InternalError(f"Internal error occurred: Component not found: {t.name}")
    obj = {"kind": "ComponentStatus", "apiVersion": "v1", **_status(t.name, health[t.name])}
    if wants_table(request):
        return codec.json_response(table(request, t.info, [obj], None), headers=headers)
    return codec.json_response(obj, headers=headers)
