"""/healthz, /livez and /readyz (layer L4, apiserver), as kube-apiserver's healthz package
answers them: named checks, `ok` when all pass, `?verbose` lists them (`[+]etcd ok` ...
`readyz check passed`), `?exclude=<name>` skips one (`[+]etcd excluded: ok`), `/readyz/<name>`
runs one, and any failure is a 500 that lists every check (`[-]<name> failed: reason withheld`,
the reason only in the server's log, since these paths are public).

The checks are the upstream ones that mean something here: `ping`, `log`, `etcd` (the SQLite
store accepts writes), the post-start hooks of the bootstrap the server runs (RBAC roles, system
priority classes, the CRD informers, the `kubernetes` Service), and for /readyz only
`etcd-readiness`, `informer-sync` and `shutdown`. Until the bootstrap has finished, its hooks
fail readiness, as kube-apiserver's do.

Data flow: dispatch -> `health(request, kind, rest)` -> checks read the app's READY event and
the core's store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from aiohttp import web

from apiserver.core import ApiCore
from apiserver.keys import CORE, READY

logger = logging.getLogger(__name__)

Check = Callable[[web.Request], str | None]  # None: passed; else why it failed (logged only)


def _ok(_request: web.Request) -> str | None:
    return None


def _etcd(request: web.Request) -> str | None:
    core: ApiCore = request.app[CORE]
    return None if core.store.running else "the store is not running"


def _bootstrapped(request: web.Request) -> str | None:
    return None if request.app[READY].is_set() else "not finished"


_HOOKS: tuple[tuple[str, Check], ...] = (
    ("poststarthook/start-apiserver-admission-initializer", _ok),
    ("poststarthook/generic-apiserver-start-informers", _ok),
    ("poststarthook/start-apiextensions-informers", _ok),
    ("poststarthook/start-apiextensions-controllers", _ok),
    ("poststarthook/crd-informer-synced", _bootstrapped),
    ("poststarthook/start-system-namespaces-controller", _bootstrapped),
    ("poststarthook/bootstrap-controller", _bootstrapped),
    ("poststarthook/rbac/bootstrap-roles", _bootstrapped),
    ("poststarthook/scheduling/bootstrap-system-priority-classes", _bootstrapped),
)

CHECKS: dict[str, tuple[tuple[str, Check], ...]] = {
    "healthz": (("ping", _ok), ("log", _ok), ("etcd", _etcd), *_HOOKS),
    "livez": (("ping", _ok), ("log", _ok), ("etcd", _etcd), *_HOOKS),
    "readyz": (("ping", _ok), ("log", _ok), ("etcd", _etcd), ("etcd-readiness", _etcd),
               ("informer-sync", _bootstrapped), *_HOOKS, ("shutdown", _ok)),
}


def _text(body: str, status: int = 200) -> web.Response:
    return web.Response(text=body, status=status, content_type="text/plain", charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})


def health(request: web.Request, kind: str, rest: list[str]) -> web.Response:
    """`kind` is healthz, livez or readyz; `rest` the path parts after it."""
    checks = CHECKS[kind]
    if rest:  # one check: /readyz/etcd
        name = "/".join(rest)
        for check_name, check in checks:
            if check_name == name:
                reason = check(request)
                if reason is not None:
                    return _text(f"internal server error: {reason}\n", 500)
                return _text("ok")
        return _text("404 page not found\n", 404)
    excluded = {name for v in request.query.getall("exclude", []) for name in v.split(",") if name}
    lines: list[str] = []
    failed: list[str] = []
    for name, check in checks:
        if name in excluded:
            excluded.discard(name)
            lines.append(f"[+]{name} excluded: ok\n")
            continue
        reason = check(request)
        if reason is None:
            lines.append(f"[+]{name} ok\n")
        else:  # the reason is withheld: these paths are public
            lines.append(f"[-]{name} failed: reason withheld\n")
            failed.append(f"[-]{name} failed: {reason}")
    if excluded:
        quoted = ",".join(f'"{n}"' for n in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
    if failed:
        logger.info("%s check failed: %s", kind, "; ".join(failed))
        return _text(f"{''.join(lines)}{kind} check failed\n", 500)
    if "verbose" not in request.query:
        return _text("ok")
    return _text(f"{''.join(lines)}{kind} check passed\n")
