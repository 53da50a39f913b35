"""The probes a simulated kubelet runs: liveness, readiness and startup probes whose outcome the
simulation can know run their handler against the container and act on the result (layer L4).

Why: the docs' probe tutorial (`touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600`
with a `cat /tmp/healthy` liveness probe), every readiness demo that flips a pod with `kubectl
exec ... -- touch /tmp/ready`, and an nginx whose probe asks for a path or port it does not serve
teach what a failing probe does: `Unhealthy` Events, a container that turns unready, a container
the kubelet kills and restarts. Which probes run (kubelet_sim.stages.lifecycle.probe_runs): every
`exec` probe, and httpGet/tcpSocket probes of a container whose image's server is simulated
(minik3s.api.helpers.image_servers: nginx on port 80, on its own entrypoint, its configuration not
mounted over). The others pass once their delay is over (kubelet_sim.stages.probes).

kubelet v1.33's prober (pkg/kubelet/prober/worker.go, prober.go, pkg/probe) does, per container
and probe kind:

* ticks every `periodSeconds` (default 10) from the container's start; a tick before
  `initialDelaySeconds` does nothing. Liveness and readiness wait until the container has
  started (its startup probe succeeded); a startup probe stops once it succeeded.
* runs the handler: an exec command (timeout `timeoutSeconds`, default 1) passes with exit 0
  and fails otherwise, with the command's combined output; an HTTP GET passes with a 2xx/3xx
  answer and fails with "HTTP probe failed with statuscode: 404", or `Get
  "http://10.42.0.9:8080/healthz": dial tcp 10.42.0.9:8080: connect: connection refused` where
  nothing listens; a TCP probe fails with the refused dial. Every failure is a Warning
  `Unhealthy` Event "Liveness probe failed: <output>".
* the result changes after `failureThreshold` (default 3) consecutive failures, or
  `successThreshold` (default 1) successes; it starts as success for liveness, failure for
  readiness (the container is not ready until a probe passed) and unknown for startup.
* readiness: the container's `ready` follows the result (the pod's Ready condition with it).
* liveness or startup failure: `Killing` "Container web failed liveness probe, will be
  restarted"; the worker holds until the container runs again. The container stops after
  `sim.minik3s.io/shutdown-seconds` (default 1 s, as for a deleted pod) or at the end of the grace
  period (the probe's `terminationGracePeriodSeconds`, else the pod's, 30 s), whichever comes
  first, with exit code 137 (a shell or `sleep` as PID 1 ignores SIGTERM and is killed), and the
  restart policy and the crash-loop back-off take it from there (kubelet_sim.stages.restarts).

The command sees the container's files (minik3s.api.helpers.container_files): what exec
sessions wrote into the run, what its played command touched and removed by then, the image's
files and its emptyDir mounts; nginx serves its document root from the same files. What the
simulation cannot know counts as a pass, so a probe never fails a healthy workload: a program the
simulated image does not have (`pg_isready`, `curl`), a failure whose command or URL names a path
under a mount with unknown content (ConfigMap, Secret, projected, PVC and host-path volumes: the
kubelet here does not read their data), a port another container of the pod might listen on (one
whose command is not played), a host-network pod's port, a port name the container does not
declare. grpc probes, and httpGet/tcpSocket probes of other images, always pass.

Worked example (the tutorial: initialDelaySeconds 5, periodSeconds 5, failureThreshold 3):
probes pass at 5 ... 25 s; the file is gone from 30 s on, so the probes at 30, 35 and 40 s
fail (three Unhealthy Events); at 40 s Killing; at 41 s the container ends (137, Error) and,
under restartPolicy Always, runs again at once (RESTARTS 1), the script starting over.

Data flow: StageController.sync of a running pod -> `Prober.sync(pod, now, evaluate)` ->
(Events, started/ready changes, when the next tick is due) -> one status write; a kill's end ->
`process_exits.record(..., 137)` -> the restart stage plays the exit.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from kubelet_sim.events import WARNING, ContainerEvent
from kubelet_sim.stages.lifecycle import EXIT_KILLED, probe_runs
from kubelet_sim.stages.probes import probed_containers
from kubelet_sim.stages.timing import ANNOTATION_SHUTDOWN_SECONDS, parse_seconds
from minik3s.api.errors import go_quote
from minik3s.api.helpers.container_files import container_files, main_command, mounts_by_access
from minik3s.api.helpers.container_view import ContainerViewError, container_view
from minik3s.api.helpers.image_servers import DOCUMENT_ROOTS, IMAGE_FILES, known_server, listener
from minik3s.api.helpers.images import IMAGE_DIRS, image_repository
from minik3s.api.helpers.script import container_script
from minik3s.api.helpers.shell import ExecContext, ExecNotFound, run_exec
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time
from minik3s.utils.duration import format_duration

__all__ = ["Prober", "Kill", "ProbeResult", "evaluate", "has_run_probes"]

Kind = Literal["startup", "liveness", "readiness"]
_FIELDS: dict[Kind, str] = {"startup": "startupProbe", "liveness": "livenessProbe", "readiness": "readinessProbe"}
_TITLES: dict[Kind, str] = {"startup": "Startup", "liveness": "Liveness", "readiness": "Readiness"}
DEFAULT_SHUTDOWN_SECONDS = 1.0
DEFAULT_GRACE_SECONDS = 30
# kubelet's probe output limit (pkg/probe: maxReadLength)
MAX_OUTPUT = 10 * 1024
# what a probe command may take of real time before it counts as timed out, whatever its
# timeoutSeconds (the simulated shell's sleeps are counted, not waited)
_REAL_TIME_CAP = 1.0
# volume sources whose content the kubelet here does not read
_KNOWN_CONTENT = frozenset({"emptyDir"})


@dataclass(frozen=True, slots=True)
class ProbeResult:
    ok: bool
    output: str = ""


Evaluate = Callable[[JsonDict, JsonDict, JsonDict, JsonDict], Awaitable[ProbeResult]]


def _int(probe: JsonDict, key: str, default: int) -> int:
    v = probe.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else default


def _run_probe(c: JsonDict, kind: Kind) -> JsonDict | None:
    """The container's probe of that kind when the prober runs it (lifecycle.probe_runs)."""
    probe = c.get(_FIELDS[kind])
    return probe if isinstance(probe, dict) and probe_runs(c, probe) else None


def has_run_probes(pod: JsonDict) -> bool:
    """Whether some probed container of the pod has a probe the prober runs."""
    return any(_run_probe(c, k) is not None for _, c in probed_containers(pod) for k in _FIELDS)


@dataclass(slots=True)
class _Worker:
    """One container's probe of one kind, for one run of the container."""

    run: int
    next_tick: float
    result: bool | None
    success_run: int = 0
    failure_run: int = 0
    on_hold: bool = False


@dataclass(frozen=True, slots=True)
class Kill:
    """A container run killed by its probe: when its process ends (monotonic) and with what."""

    container: str
    run: int
    at: float
    exit_code: int = EXIT_KILLED


@dataclass(slots=True)
class Outcome:
    """What one sync of a pod's exec probes did."""

    events: list[ContainerEvent] = field(default_factory=list)
    # container -> (started, ready) where either changed
    changes: dict[str, tuple[bool, bool]] = field(default_factory=dict)
    # kills whose process ends now
    ended: list[Kill] = field(default_factory=list)
    # seconds until the next tick or kill end (None: nothing to wait for)
    wait: float | None = None


@dataclass(slots=True)
class Prober:
    """One pod's exec probe workers (the kubelet's memory: a server restart starts them over)."""

    workers: dict[tuple[str, Kind], _Worker] = field(default_factory=dict)
    kills: dict[tuple[str, int], Kill] = field(default_factory=dict)

    async def sync(self, pod: JsonDict, now: float, wall: datetime, evaluate: Evaluate) -> Outcome:
        """Run the ticks due by `now` (monotonic; `wall` the same moment on the wall clock)."""
        out = Outcome()
        status = pod.get("status") or {}
        live: set[tuple[str, Kind]] = set()
        for key, c in probed_containers(pod):
            name = str(c.get("name") or "")
            cs = next((s for s in status.get(key) or () if isinstance(s, dict) and s.get("name") == name), None)
            running = ((cs or {}).get("state") or {}).get("running")
            if cs is None or not isinstance(running, dict):
                continue
            start = parse_time(running.get("startedAt"))
            if start is None:
                continue
            run = int(cs.get("restartCount") or 0)
            started_mono = now - max((wall - start).total_seconds(), 0.0)
            started, ready = bool(cs.get("started")), bool(cs.get("ready"))
            for kind in ("startup", "liveness", "readiness"):
                probe = _run_probe(c, kind)
                if probe is None:
                    continue
                live.add((name, kind))
                w = self.workers.get((name, kind))
                if w is None or w.run != run:
                    every = float(_int(probe, "periodSeconds", 10))
                    first = math.ceil(_int(probe, "initialDelaySeconds", 0) / every) * every
                    w = self.workers[(name, kind)] = _Worker(
                        run=run, next_tick=started_mono + first,
                        result={"startup": None, "liveness": True, "readiness": False}[kind])
                period = float(_int(probe, "periodSeconds", 10))
                if not w.on_hold and w.next_tick <= now:
                    # only the latest tick due runs: missed ones (a late sync) are not run again
                    tick = w.next_tick + math.floor((now - w.next_tick) / period) * period
                    w.next_tick = tick + period
                    if kind == "startup" and started:
                        w.on_hold = True  # done: a startup probe stops once it succeeded
                    elif kind == "startup" or started:  # liveness and readiness wait for the start
                        res = await evaluate(pod, c, cs, probe)
                        self._count(w, probe, res)
                        if not res.ok:
                            out.events.append(ContainerEvent(_field_path(key, name), "Unhealthy",
                                                             f"{_TITLES[kind]} probe failed: {res.output}", WARNING))
                        if kind == "startup" and w.result:
                            started = True
                        elif kind in ("liveness", "startup") and w.result is False:
                            w.on_hold = True
                            message = f"Container {name} failed {kind} probe"
                            if _restarts(pod):
                                message += ", will be restarted"
                            out.events.append(ContainerEvent(_field_path(key, name), "Killing", message))
                            self.kills[(name, run)] = Kill(name, run, tick + _stop_seconds(pod, probe))
                if not w.on_hold:
                    out.wait = _earliest(out.wait, w.next_tick - now)
            # the flags follow the workers' results on every sync (a lost write is made again)
            startup = self.workers.get((name, "startup"))
            started = started or (startup is not None and startup.result is True)
            readiness = self.workers.get((name, "readiness"))
            if readiness is not None:
                ready = started and readiness.result is True
            elif (name, "startup") in self.workers and not isinstance(c.get("readinessProbe"), dict):
                ready = started  # no readiness probe: ready once started
            if (started, ready) != (bool(cs.get("started")), bool(cs.get("ready"))):
                out.changes[name] = (started, ready)
        for k in [k for k in self.workers if k not in live]:
            del self.workers[k]
        for kill_key, kill in list(self.kills.items()):
            if kill.at <= now:
                out.ended.append(kill)
                del self.kills[kill_key]
            else:
                out.wait = _earliest(out.wait, kill.at - now)
        return out

    @staticmethod
    def _count(w: _Worker, probe: JsonDict, res: ProbeResult) -> None:
        if res.ok:
            w.success_run, w.failure_run = w.success_run + 1, 0
            if w.success_run >= _int(probe, "successThreshold", 1):
                w.result = True
        else:
            w.success_run, w.failure_run = 0, w.failure_run + 1
            if w.failure_run >= _int(probe, "failureThreshold", 3):
                w.result = False


def _restarts(pod: JsonDict) -> bool:
    """Whether a killed container runs again (computePodActions: any policy but Never)."""
    return ((pod.get("spec") or {}).get("restartPolicy") or "Always") != "Never"


def _earliest(a: float | None, b: float) -> float:
    b = max(b, 0.0)
    return b if a is None else min(a, b)


def _field_path(key: str, name: str) -> str:
    return f"spec.{'initContainers' if key == 'initContainerStatuses' else 'containers'}{{{name}}}"


def _stop_seconds(pod: JsonDict, probe: JsonDict) -> float:
    """From the kill to the process's end: the shutdown time, cut at the grace period's end
    (the probe's terminationGracePeriodSeconds, else the pod's)."""
    grace = probe.get("terminationGracePeriodSeconds")
    if not isinstance(grace, int) or isinstance(grace, bool):
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    if not isinstance(grace, int) or isinstance(grace, bool) or grace < 0:
        grace = DEFAULT_GRACE_SECONDS
    annotated = parse_seconds(((pod.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_SHUTDOWN_SECONDS))
    return min(DEFAULT_SHUTDOWN_SECONDS if annotated is None else annotated, float(grace))


# -- running the command -------------------------------------------------------------------


class _TimedOut(Exception):
    pass


class _NoLookup:
    """The kubelet here reads no ConfigMap, Secret or Service for a probe: such mounts are left
    out (a probe depending on them passes: see `_uncertain`)."""

    def get(self, resource: str, namespace: str, name: str) -> JsonDict | None:
        return None

    def services(self, namespace: str) -> list[JsonDict]:
        return []


def _uncertain(pod: JsonDict, c: JsonDict, argv: list[str]) -> bool:
    """Whether the command names a path under a mount whose content is not known here."""
    volumes = {str(v.get("name")): v for v in (pod.get("spec") or {}).get("volumes") or () if isinstance(v, dict)}
    text = " ".join(argv)
    for m in c.get("volumeMounts") or ():
        if not isinstance(m, dict) or not m.get("mountPath"):
            continue
        source = volumes.get(str(m.get("name"))) or {}
        if any(k in source for k in _KNOWN_CONTENT):
            continue
        if "/" + str(m["mountPath"]).strip("/") in text:
            return True
    return False


async def evaluate(pod: JsonDict, c: JsonDict, cs: JsonDict, probe: JsonDict, *, now: datetime,
                   cluster_dns: str) -> ProbeResult:
    """Run a probe's handler against the container (see the module docstring)."""
    if isinstance(probe.get("exec"), dict):
        return await _evaluate_exec(pod, c, cs, probe, now=now, cluster_dns=cluster_dns)
    return await _evaluate_network(pod, c, cs, probe, now=now)


def _port(c: JsonDict, value: object) -> int | None:
    """A probe's port: a number, or the name of one of the container's ports (None: not found)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    for p in c.get("ports") or ():
        if isinstance(p, dict) and value and p.get("name") == value and isinstance(p.get("containerPort"), int):
            return int(p["containerPort"])
    return None


def _another_may_listen(pod: JsonDict, c: JsonDict, port: int) -> bool:
    """Whether something else in the pod's network namespace might listen on `port`: a host
    network pod (the node's ports), or another container whose behaviour is not known (a played
    command listens nowhere; a simulated server where its image does)."""
    spec = pod.get("spec") or {}
    if spec.get("hostNetwork"):
        return True
    for _, other in probed_containers(pod):
        if other.get("name") == c.get("name"):
            continue
        repository = image_repository(str(other.get("image") or ""))
        if known_server(other, repository):
            if listener(repository, port) is not None:
                return True
        elif container_script(other) is None:
            return True
    return False


async def _evaluate_network(pod: JsonDict, c: JsonDict, cs: JsonDict, probe: JsonDict, *,
                            now: datetime) -> ProbeResult:
    """An httpGet or tcpSocket probe of a container whose image's server is simulated: the
    connection refused where nothing listens, else the server's answer (2xx/3xx pass)."""
    http = probe.get("httpGet")
    handler = http if isinstance(http, dict) else probe.get("tcpSocket") or {}
    port = _port(c, handler.get("port"))
    if handler.get("host") or port is None:
        return ProbeResult(True)  # another host, or a port name the kubelet would not resolve: unknown
    repository = image_repository(str(c.get("image") or ""))
    target = f"{(pod.get('status') or {}).get('podIP') or ''}:{port}"
    path = str(handler.get("path") or "") if isinstance(http, dict) else ""
    scheme = str(handler.get("scheme") or "HTTP").lower()
    server = listener(repository, port)
    if server is None:
        if _another_may_listen(pod, c, port):
            return ProbeResult(True)
        refused = f"dial tcp {target}: connect: connection refused"
        return ProbeResult(False, f'Get "{scheme}://{target}{path}": {refused}' if isinstance(http, dict) else refused)
    if not isinstance(http, dict):
        return ProbeResult(True)  # tcpSocket: the connection opens
    if scheme == "https":  # the simulated servers speak plain HTTP
        return ProbeResult(False, f'Get "https://{target}{path}": http: server gave HTTP response to HTTPS client')
    headers = {"Host": target, "User-Agent": "kube-probe/1.33", "Accept": "*/*"}
    for h in handler.get("httpHeaders") or ():
        if isinstance(h, dict) and h.get("name"):
            headers[str(h["name"])] = str(h.get("value") or "")
    request = f"GET {path or '/'} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sent = [(request + "Connection: close\r\n\r\n").encode("latin-1", "replace"), b""]
    answer: list[bytes] = []

    async def read() -> bytes:
        return sent.pop(0) if sent else b""

    async def write(data: bytes) -> None:
        answer.append(data)

    files = container_files(pod, c, cs, IMAGE_FILES.get(repository, {}), now)
    await server(read, write, files, now.timestamp)
    status_line = b"".join(answer).split(b"\r\n", 1)[0].split(b" ")
    code = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 0
    if 200 <= code < 400:
        return ProbeResult(True)
    root = DOCUMENT_ROOTS.get(repository, "")
    if _uncertain(pod, c, [root + (path or "/")]):
        return ProbeResult(True)  # the document may come from a mount not read here
    return ProbeResult(False, f"HTTP probe failed with statuscode: {code}")


async def _evaluate_exec(pod: JsonDict, c: JsonDict, cs: JsonDict, probe: JsonDict, *, now: datetime,
                         cluster_dns: str) -> ProbeResult:
    """Run an exec probe's command in the container (see the module docstring)."""
    argv = [str(a) for a in (probe.get("exec") or {}).get("command") or ()]
    if not argv:
        return ProbeResult(True)  # rejected by validation; nothing to run
    repository = image_repository(str(c.get("image") or ""))
    try:
        view = container_view(pod, str(c.get("name") or ""), _NoLookup(), token=None, ca_crt=None,
                              cluster_dns=cluster_dns)
        env, below, dirs, hostname, workdir, uid = (dict(view.env), {**IMAGE_FILES.get(repository, {}), **view.files},
                                                    set(view.dirs), view.hostname, view.workdir, view.uid)
    except ContainerViewError:
        env, below, dirs = {}, dict(IMAGE_FILES.get(repository, {})), set()
        hostname, workdir, uid = str((pod.get("metadata") or {}).get("name") or ""), "/", 0
    running = ((cs.get("state") or {}).get("running") or {})
    start = parse_time(running.get("startedAt")) or now
    files = container_files(pod, c, cs, below, now)
    timeout = float(_int(probe, "timeoutSeconds", 1))
    spent = 0.0

    async def sleep(seconds: float) -> None:
        nonlocal spent
        spent += max(float(seconds), 0.0)
        if spent >= timeout:
            raise _TimedOut
        await asyncio.sleep(0)

    readonly, writable = mounts_by_access(pod, c)
    ctx = ExecContext(env=env, files=files, hostname=hostname, now=lambda: now.timestamp() + spent,
                      started=start.timestamp(), sleep=sleep, workdir=workdir, uid=uid,
                      dirs=dirs | set(IMAGE_DIRS.get(repository, ())), command=main_command(c, repository),
                      readonly=readonly, writable=writable)
    chunks: list[bytes] = []

    async def write(data: bytes) -> None:
        if sum(map(len, chunks)) < MAX_OUTPUT:
            chunks.append(data)

    try:
        code = await asyncio.wait_for(run_exec(argv, ctx, None, write, write), _REAL_TIME_CAP)
    except ExecNotFound:
        return ProbeResult(True)  # a program the simulated image lacks: not known to fail
    except (_TimedOut, TimeoutError):
        # the CRI client's ErrCommandTimedOut, wrapped
        return ProbeResult(False, f"command timed out: {go_quote(' '.join(argv))} timed out after "
                                  f"{format_duration(timeout)}")
    output = b"".join(chunks)[:MAX_OUTPUT].decode("utf-8", "replace")
    if code == 0:
        return ProbeResult(True, output)
    if _uncertain(pod, c, argv):
        return ProbeResult(True)
    return ProbeResult(False, output)
