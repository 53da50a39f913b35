"""A simulated container's filesystem at a moment of its run (layer L2), as the API server's
streaming handlers (`kubectl exec`, `cp`, port-forward's servers) and the simulated kubelet's
exec probes both see it.

Why: on a real node one container runtime holds each container's writable layer; `kubectl exec
pod -- rm /tmp/healthy` and the kubelet's `cat /tmp/healthy` liveness probe meet in the same
files. Here the exec sessions run in the API server and the probes in the simulated kubelet, so
the layers live in this process-wide record (like `process_exits`), keyed by pod uid, container
and run (restartCount): a restarted container starts with an empty layer, as a new container does.

What a run sees, top to bottom:

    writable layer      what commands wrote into the run (exec sessions), removals as whiteouts
    played command      the files its script touched and removed by now (script.Script.files_at)
    mounts + image      what the kubelet mounted (ContainerView.files) over what the image ships

Example: `touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600` at 10 s -> /tmp/healthy
exists (empty); at 31 s it does not; after `kubectl exec ... -- touch /tmp/healthy` at 40 s it
exists again for that run.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping, MutableMapping
from datetime import datetime

from minik3s.api.helpers.script import container_script
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time

__all__ = ["Layered", "clear", "container_files", "main_command", "mounts_by_access", "writable_layer"]

_LIMIT = 4096
# (pod uid, container, restartCount of the run) -> path -> content
_LAYERS: OrderedDict[tuple[str, str, int], dict[str, bytes]] = OrderedDict()
# mounted read-only whatever the mount says
_READ_ONLY_SOURCES = ("configMap", "secret", "downwardAPI", "projected")


def writable_layer(uid: str, container: str, run: int) -> dict[str, bytes]:
    """The run's writable layer (created empty; the oldest of more than 4,096 are forgotten)."""
    key = (uid, container, run)
    layer = _LAYERS.get(key)
    if layer is None:
        layer = _LAYERS[key] = {}
        while len(_LAYERS) > _LIMIT:
            _LAYERS.popitem(last=False)
    else:
        _LAYERS.move_to_end(key)
    return layer


def clear() -> None:
    """Forget every layer (a test process whose clusters draw the same uids from a seeded
    generator starts each cluster with this)."""
    _LAYERS.clear()


class Layered(MutableMapping[str, bytes]):
    """The container's files: its writable layer over what lies below. A removed file is
    masked (a whiteout), a written one shadows the lower one."""

    _GONE = b"\x00minik3s-whiteout\x00"

    def __init__(self, upper: MutableMapping[str, bytes], lower: Mapping[str, bytes]) -> None:
        self.upper, self.lower = upper, lower

    def __getitem__(self, key: str) -> bytes:
        value = self.upper[key] if key in self.upper else self.lower[key]
        if value is self._GONE or value == self._GONE:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: bytes) -> None:
        self.upper[key] = value

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self.upper[key] = self._GONE

    def __iter__(self) -> Iterator[str]:
        seen = set()
        for k, v in self.upper.items():
            seen.add(k)
            if v != self._GONE:
                yield k
        for k in self.lower:
            if k not in seen:
                yield k

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        if key in self.upper:
            return self.upper[key] != self._GONE  # type: ignore[index]
        return key in self.lower


def container_files(pod: JsonDict, container: JsonDict, status: JsonDict, below: Mapping[str, bytes],
                    now: datetime) -> Layered:
    """The files of `container`'s current run (its `status`: restartCount, the running state's
    startedAt) of `pod` at `now`: the run's writable layer over the played command's files by
    then over `below` (mounts over image). A run whose start is not known sees no played files."""
    lower: Mapping[str, bytes] = below
    script = container_script(container)
    started = parse_time(((status.get("state") or {}).get("running") or {}).get("startedAt"))
    if script is not None and script.files and started is not None:
        merged = dict(below)
        for path, exists in script.files_at((now - started).total_seconds()).items():
            if exists:
                merged.setdefault(path, b"")
            else:
                merged.pop(path, None)
        lower = merged
    uid = str((pod.get("metadata") or {}).get("uid") or "")
    return Layered(writable_layer(uid, str(container.get("name") or ""), int(status.get("restartCount") or 0)), lower)


def main_command(spec: JsonDict, repository: str) -> tuple[str, ...]:
    """The container's own process as `ps` shows it: command + args, else the image's name
    (its entrypoint is not known to the simulation)."""
    if not spec:
        return ()
    argv = [str(a) for a in (spec.get("command") or []) + (spec.get("args") or [])]
    return tuple(argv) if argv else (repository.rsplit("/", 1)[-1] or "sh",)


def mounts_by_access(pod: JsonDict, container: JsonDict) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The container's (read-only, writable) mount points: the kubelet mounts ConfigMap,
    Secret, downward API and projected volumes read-only whatever the mount says, and any
    `readOnly` mount; `securityContext.readOnlyRootFilesystem` makes `/` read-only."""
    spec = pod.get("spec") or {}
    sources = {str(v.get("name")): v for v in spec.get("volumes") or [] if isinstance(v, dict)}
    out: list[str] = []
    writable: list[str] = []
    for m in container.get("volumeMounts") or []:
        if not isinstance(m, dict) or not m.get("mountPath"):
            continue
        volume = sources.get(str(m.get("name"))) or {}
        path = "/" + str(m["mountPath"]).strip("/")
        if m.get("readOnly") or any(k in volume for k in _READ_ONLY_SOURCES):
            out.append(path)
        else:
            writable.append(path)
    if (container.get("securityContext") or {}).get("readOnlyRootFilesystem"):
        out.append("/")
    return tuple(out), tuple(writable)
