"""The container Events a kubelet reports while it runs a pod (layer L4, kubelet_sim).

Why: `kubectl describe pod` and `kubectl events` show, after the scheduler's `Scheduled`, what
the kubelet did with each container; people learning Kubernetes read exactly these lines. The
simulated kubelet reports the same reasons and messages as kubelet v1.33 (pkg/kubelet/images
image_manager.go, pkg/kubelet/kuberuntime kuberuntime_container.go), each about the pod with the
container's `fieldPath` (`spec.containers{web}`, `spec.initContainers{setup}`):

* while the sandbox is created (status ContainerCreating), per container whose image is pulled:
  `Pulling` "Pulling image \"nginx:1.25\"";
* when a container starts (a new containerID in the status the kubelet writes):
  - its image: `Pulled` "Container image \"nginx:1.25\" already present on machine" when the node
    has it and imagePullPolicy is not Always (Never: always this line: the simulated node has
    every image), else `Pulled` "Successfully pulled image \"nginx:1.25\" in 1.5s (1.5s including
    waiting). Image size: 1048576 bytes.", timed from the Pulling line;
  - `Created` "Created container: web", then `Started` "Started container web";
* when a container that ended is left waiting in CrashLoopBackOff (kubelet_sim.stages.restarts):
  `BackOff` (Warning) "Back-off restarting failed container web in pod web_default(<uid>)";
* when the pod is deleted, per running container: `Killing` "Stopping container web".

And about its Node (involvedObject kind Node, name and uid the node's name, as the kubelet's
nodeRef), from the node agent (kubelet_sim.node_agent):

* when the kubelet starts: `Starting` "Starting kubelet.", then per condition the node did not
  already report healthy `NodeHasSufficientMemory`, `NodeHasNoDiskPressure`,
  `NodeHasSufficientPID` ("Node node-1 status is now: NodeHasSufficientMemory"),
  `NodeAllocatableEnforced` "Updated Node Allocatable limit across pods", and `NodeReady`;
* when its `spec.unschedulable` changes (kubelet's recordNodeSchedulableEvent):
  `NodeNotSchedulable` / `NodeSchedulable`.

Pure functions of the pod and the statuses (the controller supplies what the node knows about
images); the controller hands the result to its EventRecorder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kubelet_sim.stages.restarts import REASON_CRASH_LOOP, backoff_event_message
from minik3s.api.helpers.images import normalize_image
from minik3s.api.helpers.pods import default_pull_policy
from minik3s.api.types import JsonDict
from minik3s.utils.duration import format_duration

__all__ = ["ContainerEvent", "backoff_events", "node_ref", "node_schedulable_event", "node_startup_events", "container_statuses", "containers_created", "killing_events",
           "pulling_events", "started_events"]

NORMAL = "Normal"
WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class ContainerEvent:
    field_path: str
    reason: str
    message: str
    event_type: str = NORMAL


def _containers(pod: JsonDict) -> Iterator[tuple[str, JsonDict]]:
    """(fieldPath, container) for the init containers, the containers, then the ephemeral ones
    (kubectl debug), in spec order."""
    spec = pod.get("spec") or {}
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or ():
            yield f"spec.{key}{{{c.get('name', '')}}}", c


def pulls_image(c: JsonDict, present: Callable[[str], bool]) -> bool:
    """Whether the kubelet pulls `c`'s image: policy Always, or IfNotPresent and not on the node."""
    policy = str(c.get("imagePullPolicy") or default_pull_policy(c.get("image")))
    if policy == "Never":
        return False
    return policy == "Always" or not present(normalize_image(str(c.get("image") or "")))


def pulling_events(pod: JsonDict, present: Callable[[str], bool],
                   unusable: Callable[[JsonDict], bool] = lambda _c: False) -> tuple[list[ContainerEvent], set[str]]:
    """The `Pulling` lines while the pod's sandbox is created, and the fieldPaths of the
    containers whose images are pulled (two containers with one image pull it once); the
    containers whose image is `unusable` have their own lines (kubelet_sim.image_pull)."""
    out: list[ContainerEvent] = []
    pulled: set[str] = set()
    fetched: set[str] = set()
    for path, c in _containers(pod):
        ref = normalize_image(str(c.get("image") or ""))
        if unusable(c) or not pulls_image(c, lambda r: r in fetched or present(r)):
            continue
        fetched.add(ref)
        pulled.add(path)
        out.append(ContainerEvent(path, "Pulling", f'Pulling image "{c.get("image", "")}"'))
    return out, pulled


_STATUS_LISTS = (("initContainerStatuses", "initContainers"), ("containerStatuses", "containers"),
                 ("ephemeralContainerStatuses", "ephemeralContainers"))


def container_statuses(status: JsonDict) -> Iterator[tuple[str, JsonDict]]:
    """(fieldPath, container status) for the init containers' statuses, then the containers'."""
    for key, prefix in _STATUS_LISTS:
        for cs in status.get(key) or ():
            yield f"spec.{prefix}{{{cs.get('name', '')}}}", cs


def containers_created(status: JsonDict) -> bool:
    """Whether the status shows any (init) container created (with a containerID): false while
    the sandbox is being created."""
    return any(cs.get("containerID") for _, cs in container_statuses(status))


def _status_ids(status: JsonDict) -> dict[str, str]:
    return {path: str(cs["containerID"]) for path, cs in container_statuses(status) if cs.get("containerID")}


def started_events(pod: JsonDict, old_status: JsonDict, new_status: JsonDict, *, pulled: set[str],
                   pull_seconds: float, image_size: Callable[[str], int]) -> list[ContainerEvent]:
    """The lines for every container `new_status` shows started (a containerID the old status did
    not have for it): its image (`pulled`: fieldPaths whose image was pulled for this start),
    `Created`, `Started`."""
    before = _status_ids(old_status)
    after = _status_ids(new_status)
    out: list[ContainerEvent] = []
    for path, c in _containers(pod):
        cid = after.get(path)
        if not cid or before.get(path) == cid:
            continue
        name = c.get("name", "")
        image = c.get("image", "")
        if path in pulled:
            took = format_duration(max(pull_seconds, 0.0))
            size = image_size(normalize_image(str(image)))
            out.append(ContainerEvent(path, "Pulled", f'Successfully pulled image "{image}" in {took} '
                                                      f"({took} including waiting). Image size: {size} bytes."))
        else:
            out.append(ContainerEvent(path, "Pulled", f'Container image "{image}" already present on machine'))
        out.append(ContainerEvent(path, "Created", f"Created container: {name}"))
        out.append(ContainerEvent(path, "Started", f"Started container {name}"))
    return out


def _crash_looping(status: JsonDict) -> set[str]:
    return {path for path, cs in container_statuses(status)
            if ((cs.get("state") or {}).get("waiting") or {}).get("reason") == REASON_CRASH_LOOP}


def backoff_events(pod: JsonDict, old_status: JsonDict, new_status: JsonDict) -> list[ContainerEvent]:
    """`BackOff` for every container `new_status` leaves waiting in CrashLoopBackOff that
    `old_status` did not."""
    new = _crash_looping(new_status) - _crash_looping(old_status)
    return [ContainerEvent(path, "BackOff", backoff_event_message(pod, c.get("name", "")), WARNING)
            for path, c in _containers(pod) if path in new]


def killing_events(pod: JsonDict) -> list[ContainerEvent]:
    """`Killing` for each container the status shows running, when the pod's deletion is seen."""
    running = {path for path, cs in container_statuses(pod.get("status") or {})
               if "running" in (cs.get("state") or {})}
    return [ContainerEvent(path, "Killing", f"Stopping container {c.get('name', '')}")
            for path, c in _containers(pod) if path in running]


# (condition type, healthy status, the event recordNodeStatusEvent reports on reaching it)
_NODE_CONDITION_EVENTS: tuple[tuple[str, str, str], ...] = (
    ("MemoryPressure", "False", "NodeHasSufficientMemory"),
    ("DiskPressure", "False", "NodeHasNoDiskPressure"),
    ("PIDPressure", "False", "NodeHasSufficientPID"),
)


def node_ref(name: str) -> JsonDict:
    """The kubelet's nodeRef (kind Node, uid = the node's name), as an object for the recorder."""
    return {"kind": "Node", "metadata": {"name": name, "uid": name}}


def _status_event(name: str, event: str) -> tuple[str, str]:
    """recordNodeStatusEvent: "Node <name> status is now: <event>"."""
    return event, f"Node {name} status is now: {event}"


def node_startup_events(name: str, reported: dict[str, str]) -> list[tuple[str, str]]:
    """(reason, message) of a starting kubelet's Node Events, in its order; `reported`: the
    conditions (type -> status) the Node already had (a restart over a healthy Node reports no
    transition, as the condition setters only report a change)."""
    out = [("Starting", "Starting kubelet.")]
    out += [_status_event(name, event) for ctype, healthy, event in _NODE_CONDITION_EVENTS
            if reported.get(ctype) != healthy]
    out.append(("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods"))
    if reported.get("Ready") != "True":
        out.append(_status_event(name, "NodeReady"))
    return out


def node_schedulable_event(name: str, unschedulable: bool) -> tuple[str, str]:
    """recordNodeSchedulableEvent: the Event when the Node's spec.unschedulable changes."""
    return _status_event(name, "NodeNotSchedulable" if unschedulable else "NodeSchedulable")
