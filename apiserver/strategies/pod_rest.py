"""The pod's own subresources: pods/binding (also POST bindings), pods/eviction, pods/log,
and pods/exec|attach|portforward answering that simulated kubelets cannot stream (layer L4,
apiserver/strategies).

Upstream: pkg/registry/core/pod/storage/storage.go (BindingREST, LegacyBindingREST, LogREST),
pkg/registry/core/pod/strategy.go (LogLocation's container choice), the kubelet's
validateContainerLogStatus (previous/waiting errors), ValidatePodLogOptions, and
eviction.go (EvictionREST, here `apiserver.strategies.eviction`).

Data flow: handler -> `core.subresource(pods, "binding")` -> `BindingREST.create(ops, ...)` ->
`ops.guaranteed_update(pods, ..., subresource="binding")` (the server's own trusted mutation:
spec.nodeName and the PodScheduled condition) -> storage. pods/log: handler ->
`LogREST.plan(ops, ..., query)` (PodLogOptions validated, the container chosen, its lines so far
derived from containerStatuses) -> the handler writes them and, with `follow`, feeds the pod's
watch events to `follow_lines` until the followed run ends.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import MappingProxyType

from minik3s.api import errors
from minik3s.api.errors import BadRequestError
from minik3s.api.helpers.script import Script, container_script
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

from .eviction import evict
from .podspec import default_container, validate_ephemeral_containers
from .rest import RegistryOps, Subresource, UpdateRules, UpdateSubresource, meta_of

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

        await ops.guaranteed_update(pods_info(ops), namespace, name, mutate, opts, subresource="binding",
                                    private_copy=_binding_copy)
        return dict(SUCCESS_CREATED)


def _binding_copy(pod: JsonDict) -> JsonDict:
    """The parts of the stored pod a binding changes, copied: metadata (the write stamps
    resourceVersion; annotations the Binding carries), spec (nodeName) and status with its
    conditions (PodScheduled). Containers, volumes and the rest stay shared with the stored
    object (never changed in place), so the write copies a few small dicts instead of the pod,
    and the bound pod's spec shares its lists with the pending one."""
    out = dict(pod)
    meta = dict(pod.get("metadata") or {})
    if isinstance(meta.get("annotations"), dict):
        meta["annotations"] = dict(meta["annotations"])
    out["metadata"] = meta
    out["spec"] = dict(pod.get("spec") or {})
    status = dict(pod.get("status") or {})
    conds = status.get("conditions")
    if isinstance(conds, list):
        status["conditions"] = [dict(c) if isinstance(c, dict) else c for c in conds]
    out["status"] = status
    return out


class EvictionREST(Subresource):
    """pods/eviction: PodDisruptionBudget-checked graceful deletion (201 Success or 429)."""

    name = "eviction"
    verbs = frozenset({"POST"})

    async def create(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        # upstream's propagateDryRun: the request's ?dryRun applies to the deletion it makes
        return await evict(ops, pods_info(ops), namespace or "", name, body, dry_run=opts.dry_run)


POD_LOG_KIND = "PodLogOptions"
# the kubelet's timestamp prefix (CRI log format): always nine fractional digits
_TS_FORMAT = "%Y-%m-%dT%H:%M:%S.{nanos:09d}Z"


@dataclass(frozen=True, slots=True)
class LogOptions:
    """The query of `GET pods/{name}/log` (upstream's core/v1 PodLogOptions)."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    since_seconds: int | None = None
    since_time: datetime | None = None
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class LogLine:
    at: datetime
    text: str


@dataclass(slots=True)
class LogPlan:
    """What one log request streams: the container's lines so far (filtered by the options),
    and, with `follow` on a running container, the containerID to follow until it exits."""

    pod: str
    container: str
    options: LogOptions
    lines: list[LogLine]
    resource_version: str
    follow_id: str | None
    since: datetime | None
    bytes_left: int | None = None
    # how many lines of the followed run were already sent when following began
    follow_skip: int = 1
    # a followed run whose played command prints over time: its script, when it started and
    # up to when its lines were sent (lines are then chosen by time, not by count)
    follow_script: Script | None = None
    follow_started: datetime | None = None
    follow_sent: datetime | None = None

    def next_due(self) -> datetime | None:
        """When the followed run prints its next line, or None."""
        if self.follow_script is None or self.follow_started is None or self.follow_sent is None:
            return None
        elapsed = (self.follow_sent - self.follow_started).total_seconds()
        nxt = self.follow_script.next_line_after(elapsed)
        return None if nxt is None else self.follow_started + timedelta(seconds=nxt)

    def due_lines(self, now: datetime) -> list[LogLine]:
        """The followed run's lines printed after those sent, up to `now`."""
        script, started, sent = self.follow_script, self.follow_started, self.follow_sent
        if script is None or started is None or sent is None or now <= sent:
            return []
        self.follow_sent = now
        return _script_lines(script, started, now, after=sent)

    def render(self, lines: list[LogLine]) -> bytes:
        """Encode `lines` (after sinceSeconds/sinceTime), cutting at limitBytes overall."""
        out = b"".join(_encode(ln, timestamps=self.options.timestamps) for ln in lines
                       if self.since is None or ln.at >= self.since)
        if self.bytes_left is not None:
            out = out[:self.bytes_left]
            self.bytes_left -= len(out)
        return out

    @property
    def exhausted(self) -> bool:
        return self.bytes_left is not None and self.bytes_left <= 0


def _encode(line: LogLine, *, timestamps: bool) -> bytes:
    text = line.text + "\n"
    if timestamps:
        text = line.at.strftime(_TS_FORMAT.format(nanos=line.at.microsecond * 1000)) + " " + text
    return text.encode()


def _parse_time(v: str) -> datetime:
    dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _bool(q: Mapping[str, str], key: str) -> bool:
    v = q.get(key)
    if v is None or v == "":
        return False
    if v.lower() in ("true", "1", "t"):
        return True
    if v.lower() in ("false", "0", "f"):
        return False
    raise BadRequestError(f'strconv.ParseBool: parsing "{v}": invalid syntax')


def _int(q: Mapping[str, str], key: str) -> int | None:
    v = q.get(key)
    if v is None or v == "":
        return None
    if not _DECIMAL.fullmatch(v):  # Go's ParseInt: ASCII digits only (no "1_000", no "١")
        raise BadRequestError(f'strconv.ParseInt: parsing "{v}": invalid syntax')
    n = int(v)
    if not -(1 << 63) <= n < (1 << 63):
        raise BadRequestError(f'strconv.ParseInt: parsing "{v}": value out of range')
    return n


_DECIMAL = re.compile(r"[+-]?[0-9]+")


def parse_log_options(q: Mapping[str, str], name: str) -> LogOptions:
    """Decode and validate the query as upstream's ValidatePodLogOptions: a value that is
    not a bool/int/time is a 400; out-of-range values are a 422 on PodLogOptions."""
    since_time: datetime | None = None
    if q.get("sinceTime"):
        try:
            since_time = _parse_time(q["sinceTime"])
        except ValueError:
            raise BadRequestError(f'parsing time "{q["sinceTime"]}" as "2006-01-02T15:04:05Z07:00": '
                                  "cannot parse") from None
    opts = LogOptions(container=q.get("container") or "", follow=_bool(q, "follow"),
                      previous=_bool(q, "previous"), since_seconds=_int(q, "sinceSeconds"),
                      since_time=since_time, timestamps=_bool(q, "timestamps"),
                      tail_lines=_int(q, "tailLines"), limit_bytes=_int(q, "limitBytes"))
    causes: list[JsonDict] = []
    if opts.tail_lines is not None and opts.tail_lines < 0:
        causes.append(errors.cause("tailLines", f"Invalid value: {opts.tail_lines}: must be greater than or "
                                                "equal to 0"))
    if opts.limit_bytes is not None and opts.limit_bytes < 1:
        causes.append(errors.cause("limitBytes", f"Invalid value: {opts.limit_bytes}: must be greater than 0"))
    if opts.since_seconds is not None and opts.since_time is not None:
        causes.append(errors.cause("", "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
                                   "FieldValueForbidden"))
    if opts.since_seconds is not None and opts.since_seconds < 1:
        causes.append(errors.cause("sinceSeconds", f"Invalid value: {opts.since_seconds}: must be greater than 0"))
    if causes:
        raise errors.invalid(POD_LOG_KIND, name, causes)
    return opts


def pick_container(pod: JsonDict, wanted: str) -> str:
    """Upstream's LogLocation container choice: the only container, else a 400 naming them."""
    spec = pod.get("spec") or {}
    name = meta_of(pod).get("name") or ""
    containers = [str(c.get("name")) for c in spec.get("containers") or [] if isinstance(c, dict)]
    # every container, in upstream's visiting order: init containers, containers, ephemeral ones
    every = [str(c.get("name")) for key in ("initContainers", "containers", "ephemeralContainers")
             for c in spec.get(key) or [] if isinstance(c, dict)]
    if not wanted:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise BadRequestError(f"a container name must be specified for pod {name}")
        raise BadRequestError(f"a container name must be specified for pod {name}, choose one of: "
                              f"[{' '.join(every)}]")
    if wanted not in every:
        raise BadRequestError(f"container {wanted} is not valid for pod {name}")
    return wanted


def stream_container(pod: JsonDict, wanted: str) -> str:
    """Upstream's streamLocation container choice (exec, attach): the only container, else a
    400 naming the containers and the init containers; a named one must exist (containers, init
    or ephemeral)."""
    spec = pod.get("spec") or {}
    name = meta_of(pod).get("name") or ""

    def names(key: str) -> list[str]:
        return [str(c.get("name")) for c in spec.get(key) or [] if isinstance(c, dict)]

    containers = names("containers")
    if not wanted:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise BadRequestError(f"a container name must be specified for pod {name}")
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
        if names("initContainers"):
            message += f" or one of the init containers: [{' '.join(names('initContainers'))}]"
        raise BadRequestError(message)
    if wanted not in (*names("initContainers"), *containers, *names("ephemeralContainers")):
        raise BadRequestError(f"container {wanted} is not valid for pod {name}")
    return wanted


def container_status(pod: JsonDict, container: str) -> JsonDict | None:
    """The status of the named container (regular, init or ephemeral), or None."""
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(key) or []:
            if isinstance(cs, dict) and cs.get("name") == container:
                return cs
    return None


def container_spec(pod: JsonDict, container: str) -> JsonDict:
    """The spec of the named container (regular, init or ephemeral), or {}."""
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or ():
            if isinstance(c, dict) and c.get("name") == container:
                return c
    return {}


def _script_lines(script: Script, started: datetime, until: datetime | None, *,
                  after: datetime | None = None) -> list[LogLine]:
    """A played command's lines printed after `after` and by `until` (None: no end time: every
    line of a finite script, none of an endless loop's), stamped from the run's start."""
    limit = (until - started).total_seconds() if until is not None else math.inf
    lower = (after - started).total_seconds() if after is not None else -math.inf
    return [LogLine(started + timedelta(seconds=offset), text) for offset, text in script.lines_until(limit, lower)]


def _instance_lines(pod: JsonDict, container: str, state: JsonDict, restart: int,
                    now: datetime | None = None) -> list[LogLine]:
    """The simulated output of one run of a container: what its played command printed so far
    (minik3s.api.helpers.script; up to `now` while it runs), else a line when it starts and one
    when it exits."""
    meta, spec = meta_of(pod), pod.get("spec") or {}
    script = container_script(container_spec(pod, container))
    if script is not None:
        run = state.get("running") or state.get("terminated") or {}
        started = _parse_time(run["startedAt"]) if run.get("startedAt") else datetime.fromtimestamp(0, UTC)
        done = state.get("terminated")
        until = now
        if isinstance(done, dict):
            until = _parse_time(done["finishedAt"]) if done.get("finishedAt") else None
        return _script_lines(script, started, until)
    text = f"minik3s: simulated container of pod {meta.get('namespace')}/{meta.get('name')} on node " \
           f"{spec.get('nodeName') or '<none>'}"
    if len(spec.get("containers") or []) > 1 or spec.get("initContainers"):
        text += f" (container {container})"
    if restart:
        text += f" (restart {restart})"
    run = state.get("running") or state.get("terminated") or {}
    started = _parse_time(run["startedAt"]) if run.get("startedAt") else datetime.fromtimestamp(0, UTC)
    lines = [LogLine(started, text)]
    done = state.get("terminated")
    if isinstance(done, dict):
        finished = _parse_time(done["finishedAt"]) if done.get("finishedAt") else started
        end = f"minik3s: container {container} exited with code {done.get('exitCode', 0)}"
        if done.get("reason"):
            end += f" ({done['reason']})"
        lines.append(LogLine(finished, end))
    return lines


def follow_lines(pod: JsonDict, plan: LogPlan) -> tuple[list[LogLine], bool]:
    """Lines that a newer state of the pod adds to a followed container, and whether the
    followed run has ended (it terminated, was replaced by a restart, or vanished)."""
    cs = container_status(pod, plan.container)
    if cs is None:
        return [], True
    state = cs.get("state") or {}
    last = (cs.get("lastState") or {}).get("terminated")
    restarts = int(cs.get("restartCount") or 0)
    if cs.get("containerID") == plan.follow_id:
        if "terminated" in state:
            lines = _instance_lines(pod, plan.container, state, restarts)
            if plan.follow_sent is not None:  # a played script: what it printed after the lines sent
                return [ln for ln in lines if ln.at > plan.follow_sent], True
            return lines[plan.follow_skip:], True
        return [], False
    if isinstance(last, dict) and last.get("containerID") == plan.follow_id:
        return _instance_lines(pod, plan.container, {"terminated": last},
                               max(restarts - 1, 0))[plan.follow_skip:], True
    return [], True


class LogREST(Subresource):
    """pods/log: the simulated container's output, derived from its containerStatuses (a line
    when each run starts, one when it exits: docs/kubelet-sim.md), with upstream's
    PodLogOptions. The HTTP handler streams `plan`'s lines and, with `follow`, watches the pod
    through `follow_lines` until the followed run ends."""

    name = "log"
    verbs = frozenset({"GET"})

    def get(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict | str:
        plan = self.plan(ops, info, namespace, name, {})
        return plan.render(plan.lines).decode()

    def plan(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str,
             query: Mapping[str, str]) -> LogPlan:
        opts = parse_log_options(query, name)
        pod = ops.get(info, namespace, name)
        container = pick_container(pod, opts.container)
        since = opts.since_time
        if opts.since_seconds is not None:
            # beyond ~300 years back: every line (Go's time arithmetic saturates; datetime overflows)
            since = _parse_time(ops.now()) - timedelta(seconds=min(opts.since_seconds, 10**10))
        rv = str(meta_of(pod).get("resourceVersion") or "")
        plan = LogPlan(pod=name, container=container, options=opts, lines=[], resource_version=rv,
                       follow_id=None, since=since, bytes_left=opts.limit_bytes)
        if not (pod.get("spec") or {}).get("nodeName"):
            return plan  # upstream: a pod not yet on a node has an empty log
        cs = container_status(pod, container)
        if cs is None:
            raise BadRequestError(f'container "{container}" in pod "{name}" is not available')
        state = cs.get("state") or {}
        last = (cs.get("lastState") or {}).get("terminated")
        restarts = int(cs.get("restartCount") or 0)
        if opts.previous:
            if not isinstance(last, dict) or not last.get("containerID"):
                raise BadRequestError(f'previous terminated container "{container}" in pod "{name}" not found')
            lines = _instance_lines(pod, container, {"terminated": last}, max(restarts - 1, 0))
        elif "running" in state or "terminated" in state:
            now = _parse_time(ops.now())
            lines = _instance_lines(pod, container, state, restarts, now)
            if opts.follow and "running" in state:
                plan.follow_id = str(cs.get("containerID") or "")
                plan.follow_skip = len(lines)
                script = container_script(container_spec(pod, container))
                started_at = (state.get("running") or {}).get("startedAt")
                if script is not None and started_at:
                    plan.follow_script, plan.follow_started = script, _parse_time(started_at)
                    plan.follow_sent = now
        elif isinstance(last, dict):
            lines = _instance_lines(pod, container, {"terminated": last}, max(restarts - 1, 0))
        else:
            reason = (state.get("waiting") or {}).get("reason")
            # the kubelet's validateContainerLogStatus words the two pull failures its own way
            reason = {"ErrImagePull": "image can't be pulled",
                      "ImagePullBackOff": "trying and failing to pull image"}.get(str(reason), reason)
            if reason:
                raise BadRequestError(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
            raise BadRequestError(f'container "{container}" in pod "{name}" is waiting to start - no logs yet')
        if opts.tail_lines is not None:  # the kubelet tails first, then drops lines before `since`
            lines = lines[-opts.tail_lines:] if opts.tail_lines else []
        plan.lines = lines
        return plan


class StreamREST(Subresource):
    """pods/exec, pods/attach, pods/portforward: upstream proxies these to the kubelet's
    streaming server. They are served over WebSocket by apiserver.handlers.exec_stream (the
    simulated container); this entry gives them their verbs and discovery. Called in process
    (no connection to stream over), they answer a 400 saying so."""

    verbs = frozenset({"GET", "POST"})
    takes_body = False

    def __init__(self, name: str) -> None:
        self.name = name

    def _no_stream(self) -> errors.ApiError:
        return errors.BadRequestError(f"{self.name} needs a streaming connection (a WebSocket upgrade over HTTP)")

    def get(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict | str:
        ops.get(info, namespace, name)  # 404 for a missing pod first
        raise self._no_stream()

    async def create(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        ops.get(info, namespace, name)
        raise self._no_stream()


class EphemeralContainersREST(UpdateSubresource):
    """pods/ephemeralcontainers (`kubectl debug`): GET the pod; PUT/PATCH change only
    spec.ephemeralContainers (upstream's podEphemeralContainersStrategy: the rest of the body is
    replaced by the stored pod), which may only gain containers."""

    def __init__(self) -> None:
        super().__init__("ephemeralcontainers")

    def prepare_update(self, rules: UpdateRules, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        ephemeral = (new.get("spec") or {}).get("ephemeralContainers") if isinstance(new.get("spec"), dict) else None
        out = copy.deepcopy(old)
        spec = out.setdefault("spec", {})
        if ephemeral:
            # SetDefaults_EphemeralContainer, as the request body's decode applies it upstream
            for c in ephemeral if isinstance(ephemeral, list) else ():
                default_container(c)
            spec["ephemeralContainers"] = ephemeral
        else:
            spec.pop("ephemeralContainers", None)
        meta = new.get("metadata")
        if isinstance(meta, dict) and "resourceVersion" in meta:
            out.setdefault("metadata", {})["resourceVersion"] = meta["resourceVersion"]
        new.clear()
        new.update(out)
        return validate_ephemeral_containers(spec, old.get("spec") or {})


BINDING = BindingREST()
POD_SUBRESOURCES: Mapping[str, Subresource] = MappingProxyType(
    {"binding": BINDING, "eviction": EvictionREST(), "log": LogREST(), "ephemeralcontainers": EphemeralContainersREST(),
     "exec": StreamREST("exec"), "attach": StreamREST("attach"), "portforward": StreamREST("portforward")})
