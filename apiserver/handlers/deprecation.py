"""Deprecated built-in API versions: the warning every request for them carries (layer L4).

Why: kube-apiserver's installer (k8s.io/apiserver/pkg/endpoints/installer.go) asks each
resource's type whether it is deprecated at the server's version (deprecation.IsDeprecated, from
the APILifecycle* methods prerelease-lifecycle-gen writes for the type) and, when it is, wraps every
route of the resource -- get, list, watch, create, update, patch, delete, deletecollection -- in
AddWarningsHandler: the warning is recorded before the verb's handler runs, so a success and a
failure the handler answers (404, 409, 422) both carry it, first among the request's warnings;
what the filters refuse before routing (401, 403) does not. The text is
deprecation.WarningMessage: `<group/version> <Kind> is deprecated in v<M>.<m>+`, then
`, unavailable in v<M>.<m>+` when a removal release is set, then `; use <group/version> <Kind>`
when a replacement is.

Served and deprecated at v1.33: core/v1 Endpoints (since v1.33, KEP-4974; use
discovery.k8s.io/v1 EndpointSlice) and core/v1 ComponentStatus (since v1.19; answered by
component_status.py with the same text). No other version minik3s serves is deprecated at v1.33.

The in-process components (the endpoints controller) call the core directly: no HTTP layer, no
warning, no cost.

Data flow: dispatch -> `deprecation_warning(target.info)` -> the request's warning list
(REQUEST_WARNINGS) -> every answer's Warning header (`add_warning_header`; a watch's in watch.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from aiohttp import web

from apiserver.handlers.common import warning_headers
from apiserver.handlers.discovery import VERSION_INFO
from apiserver.keys import REQUEST_WARNINGS
from minik3s.api.resources import ResourceInfo


@dataclass(frozen=True, slots=True)
class Deprecation:
    """A type's API life cycle (APILifecycleDeprecated / Removed / Replacement)."""

    deprecated: tuple[int, int]
    removed: tuple[int, int] | None = None
    replacement: str = ""  # "<group/version> <Kind>"


SERVER_VERSION = (int(VERSION_INFO["major"]), int(VERSION_INFO["minor"]))

# (group, version, kind) -> its life cycle
DEPRECATED: dict[tuple[str, str, str], Deprecation] = {
    ("", "v1", "Endpoints"): Deprecation((1, 33), replacement="discovery.k8s.io/v1 EndpointSlice"),
    ("", "v1", "ComponentStatus"): Deprecation((1, 19)),
}


def warning_message(group: str, version: str, kind: str, d: Deprecation) -> str:
    """deprecation.WarningMessage."""
    gv = f"{group}/{version}" if group else version
    msg = f"{gv} {kind} is deprecated in v{d.deprecated[0]}.{d.deprecated[1]}+"
    if d.removed is not None:
        msg += f", unavailable in v{d.removed[0]}.{d.removed[1]}+"
    if d.replacement:
        msg += f"; use {d.replacement}"
    return msg


@cache
def _warning(group: str, version: str, kind: str) -> str | None:
    d = DEPRECATED.get((group, version, kind))
    if d is None or d.deprecated > SERVER_VERSION:  # deprecation.IsDeprecated
        return None
    return warning_message(group, version, kind, d)


def deprecation_warning(info: ResourceInfo) -> str | None:
    """The warning every request for this resource carries, or None (built-in kinds only)."""
    if not info.builtin:
        return None
    return _warning(info.group, info.version, info.kind)


def record(request: web.Request, warning: str) -> None:
    """Start the request's warning list with `warning` (AddWarningsHandler runs first)."""
    request[REQUEST_WARNINGS] = [warning]


def add_warning_header(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    """Put the request's warnings (the deprecation first, then what the verb collected) on an
    answer that is not sent yet; a streamed one (a watch) set its own before it started."""
    if not response.prepared:
        response.headers.update(warning_headers(request.get(REQUEST_WARNINGS)))
    return response
