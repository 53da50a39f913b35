"""The simulated container runtime's record of container processes that ended outside the
kubelet's plan (layer L2): a shell attached to with `kubectl run -it ... -- sh` that the user
left with `exit`.

Why: on a real node the runtime reports such an exit to the kubelet (PLEG), which then restarts
the container or completes the pod. The attached shell runs in the API server's streaming
handler (apiserver.handlers.exec_stream), the container's lifecycle in the simulated kubelet
(kubelet_sim.stages.restarts.container_lifetimes): this record is what both see, as both see one
runtime on a node. One record per process: every server in the process shares it, and entries
are keyed by pod uid, so servers cannot see each other's.

Data flow: exec_stream's attached shell ends -> `record(...)` -> subscribers (each simulated
kubelet's stage controller) requeue the pod -> `container_lifetimes` reads `exit_code(...)` for
the container's current run -> the kubelet plays the exit (terminated, then restart or
completion by the restart policy).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

_LIMIT = 4096
# (pod uid, container, restartCount of the run) -> exit code
_EXITS: OrderedDict[tuple[str, str, int], int] = OrderedDict()
# called with (namespace, pod name) after each record
_SUBSCRIBERS: list[Callable[[str, str], None]] = []


def record(uid: str, namespace: str, name: str, container: str, run: int, code: int) -> None:
    """The process of `container`'s run `run` (its restartCount) of pod `uid` ended with `code`."""
    _EXITS[(uid, container, run)] = code
    _EXITS.move_to_end((uid, container, run))
    while len(_EXITS) > _LIMIT:
        _EXITS.popitem(last=False)
    for fn in list(_SUBSCRIBERS):
        fn(namespace, name)


def exit_code(uid: str, container: str, run: int) -> int | None:
    """The recorded exit of that run, or None while it runs as the kubelet planned."""
    return _EXITS.get((uid, container, run))


def subscribe(fn: Callable[[str, str], None]) -> Callable[[], None]:
    """Call `fn(namespace, name)` after every record; returns the unsubscribe function."""
    _SUBSCRIBERS.append(fn)

    def unsubscribe() -> None:
        if fn in _SUBSCRIBERS:
            _SUBSCRIBERS.remove(fn)

    return unsubscribe


def clear() -> None:
    """Forget every record (a test process whose clusters draw the same uids from a seeded
    generator starts each cluster with this)."""
    _EXITS.clear()
