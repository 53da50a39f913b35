"""Containers whose image cannot be used, and the image pull back-off (layer L4, kubelet_sim).

Why: on a real node `kubectl run web --image=nginxx` ends in `ErrImagePull`, then
`ImagePullBackOff`, and `--image=Nginx` in `InvalidImageName`; operators' tests and people
learning Kubernetes meet exactly these states. kubelet v1.33 decides them when it is about to
start a container (image_manager.go EnsureImageExists); so does this module, on the simulated
node, from minik3s.api.helpers.image_reference (what cannot be parsed, what the registries do
not hold).

Per container about to start (the first init container not done, else every regular container
not started yet; and the ephemeral containers `kubectl debug` adds), in this order:

| case | waiting reason | waiting message | Events (about the pod, the container's fieldPath) |
|---|---|---|---|
| unparsable reference | `InvalidImageName` | `Failed to apply default image tag "X": couldn't parse image name "X": ...` | Warning `InspectFailed` (that message), Warning `Failed` `Error: InvalidImageName` |
| a pull that fails | `ErrImagePull` | containerd's error | Normal `Pulling`, Warning `Failed` `Failed to pull image "X": <error>`, Warning `Failed` `Error: ErrImagePull` |
| inside the pull back-off | `ImagePullBackOff` | `Back-off pulling image "X": ErrImagePull: <error>` | Normal `BackOff` `Back-off pulling image "X"`, Warning `Failed` `Error: ImagePullBackOff` |

`imagePullPolicy: Never` never fails here: the simulated node has every image a pod names with
it (users cannot load images into a simulated node; see docs/kubelet-sim.md). A pull is
attempted under `Always`, or `IfNotPresent` when the node lacks the image.

Timing (kubelet.go imageBackOffPeriod / MaxImageBackOff, client-go flowcontrol.Backoff without
jitter): a failed pull opens a back-off window of 10 s for that image string in that pod,
doubling on each failed pull up to 300 s, forgotten after 600 s without one. The kubelet
re-syncs a pod whose sync failed after 10-15 s (pod workers' jittered backOffPeriod), so a pull
is retried on the first sync after its window: pulls at about 0, 10-15, 30-50, ... s, then every
300-315 s; the syncs between report the back-off. A change of the pod's images is tried at once.
Other containers of the pod start as usual: one container in `ImagePullBackOff` beside a running
one leaves the pod Running and not ready (`1/2`).

Data flow: StageController.sync -> `PullMemory.attempt(pod, present, now, rng)` (at most once
per re-sync period) -> `blocked` (container name -> waiting state), the Events, and when to
sync again -> lifecycle's steps leave the blocked containers waiting (`StepContext.blocked`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kubelet_sim.events import WARNING, ContainerEvent
from minik3s.api.errors import go_quote
from minik3s.api.helpers.image_reference import reference_error, registry_error
from minik3s.api.helpers.images import normalize_image
from minik3s.api.helpers.pods import default_pull_policy, is_sidecar
from minik3s.api.types import JsonDict

INITIAL_BACKOFF_SECONDS = 10.0
MAX_BACKOFF_SECONDS = 300.0
# pod workers re-queue a pod whose sync failed after backOffPeriod (10 s) jittered by 0.5
RESYNC_SECONDS = (10.0, 15.0)

INVALID = "InvalidImageName"
PULL_FAILED = "ErrImagePull"
PULL_BACKOFF = "ImagePullBackOff"
REASONS = frozenset({INVALID, PULL_FAILED, PULL_BACKOFF})


def image_problem(c: JsonDict, present: Callable[[str], bool]) -> tuple[str, str] | None:
    """(reason, message) when `c`'s image cannot be used on this node: InvalidImageName with
    the kubelet's message, or ErrImagePull with containerd's error; None when it starts."""
    image = str(c.get("image") or "")
    parse = reference_error(image)
    if parse is not None:
        return INVALID, f"Failed to apply default image tag {go_quote(image)}: {parse}"
    policy = str(c.get("imagePullPolicy") or default_pull_policy(image))
    if policy == "Never" or (policy == "IfNotPresent" and present(normalize_image(image))):
        return None
    err = registry_error(image)
    return (PULL_FAILED, err) if err is not None else None


def _to_start(pod: JsonDict) -> Iterator[tuple[str, JsonDict]]:
    """(fieldPath, container) for the containers the kubelet would start now: the first init
    container not done (a sidecar is done once running), else the regular containers that
    have not started yet."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    init_states = {cs.get("name"): cs.get("state") or {} for cs in status.get("initContainerStatuses") or ()}
    for c in spec.get("initContainers") or ():
        if not isinstance(c, dict):
            continue
        state = init_states.get(c.get("name"), {})
        if "running" in state and is_sidecar(c):
            continue
        if "terminated" in state and (state["terminated"].get("exitCode") == 0 or is_sidecar(c)):
            continue
        if "waiting" in state or not state:
            yield f"spec.initContainers{{{c.get('name', '')}}}", c
        return  # init containers run one at a time
    for key, status_key in (("containers", "containerStatuses"), ("ephemeralContainers", "ephemeralContainerStatuses")):
        states = {cs.get("name"): cs for cs in status.get(status_key) or ()}
        for c in spec.get(key) or ():
            if not isinstance(c, dict):
                continue
            cs = states.get(c.get("name"))
            if cs is None and key == "ephemeralContainers" and status.get("phase") == "Running":
                yield f"spec.{key}{{{c.get('name', '')}}}", c  # kubectl debug: about to start
            elif cs is not None and "waiting" in (cs.get("state") or {}) and not cs.get("containerID") \
                    and not cs.get("lastState"):
                yield f"spec.{key}{{{c.get('name', '')}}}", c


@dataclass(slots=True)
class _Backoff:
    period: float
    last: float
    error: str


@dataclass(slots=True)
class PullMemory:
    """One pod's image pull state on its node: the back-off per image string (the kubelet's
    `<podUID>_<image>` keys; a recreated pod has a new record), the containers last found
    blocked, and when the pod is synced again."""

    backoff: dict[str, _Backoff] = field(default_factory=dict)
    blocked: dict[str, JsonDict] = field(default_factory=dict)
    next_sync: float = 0.0
    images: tuple[tuple[str, str], ...] = ()

    def due(self, pod: JsonDict, now: float) -> bool:
        """Whether the pod is synced now: its re-sync time has come, or its images changed."""
        return now >= self.next_sync or _images(pod) != self.images

    def attempt(self, pod: JsonDict, present: Callable[[str], bool], now: float,
                rng: random.Random) -> tuple[dict[str, JsonDict], list[ContainerEvent], float | None]:
        """One sync's try at the containers about to start: the blocked ones (container name ->
        `waiting` state), the Events, and the seconds until the next sync (None: nothing blocked)."""
        blocked: dict[str, JsonDict] = {}
        events: list[ContainerEvent] = []
        for path, c in _to_start(pod):
            problem = image_problem(c, present)
            if problem is None:
                continue
            reason, message = problem
            image = str(c.get("image") or "")
            name = str(c.get("name") or "")
            if reason == INVALID:
                events.append(ContainerEvent(path, "InspectFailed", message, WARNING))
            else:
                entry = self.backoff.get(image)
                if entry is not None and now - entry.last < entry.period:
                    reason = PULL_BACKOFF
                    events.append(ContainerEvent(path, "BackOff", f"Back-off pulling image {go_quote(image)}"))
                    message = f"Back-off pulling image {go_quote(image)}: {PULL_FAILED}: {entry.error}"
                else:
                    events.append(ContainerEvent(path, "Pulling", f"Pulling image {go_quote(image)}"))
                    events.append(ContainerEvent(path, "Failed", f"Failed to pull image {go_quote(image)}: {message}",
                                                 WARNING))
                    if entry is None or now - entry.last > 2 * MAX_BACKOFF_SECONDS:
                        period = INITIAL_BACKOFF_SECONDS
                    else:
                        period = min(entry.period * 2, MAX_BACKOFF_SECONDS)
                    self.backoff[image] = _Backoff(period, now, message)
            events.append(ContainerEvent(path, "Failed", f"Error: {reason}", WARNING))
            blocked[name] = {"reason": reason, "message": message}
        self.blocked = blocked
        self.images = _images(pod)
        if not blocked:
            self.next_sync = now
            return blocked, events, None
        wait = rng.uniform(*RESYNC_SECONDS)
        self.next_sync = now + wait
        return blocked, events, wait


def _images(pod: JsonDict) -> tuple[tuple[str, str], ...]:
    spec = pod.get("spec") or {}
    return tuple((str(c.get("name") or ""), str(c.get("image") or ""))
                 for key in ("initContainers", "containers", "ephemeralContainers") for c in spec.get(key) or ()
                 if isinstance(c, dict))


def with_blocked(status: JsonDict, blocked: dict[str, JsonDict]) -> None:
    """Set the blocked containers' `waiting` states in `status` (in place; ready false); a
    container that runs (or ran) is left as it is."""
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(key) or ():
            waiting = blocked.get(cs.get("name", ""))
            if waiting is not None and not cs.get("containerID"):
                cs["state"] = {"waiting": dict(waiting)}
                cs["ready"] = False
                if key != "ephemeralContainerStatuses":
                    cs["started"] = False
