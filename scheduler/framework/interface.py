"""Extension-point contracts of the scheduling framework (upstream: pkg/scheduler/framework/interface.go).

A plugin declares the points it implements in its class line, e.g.
`class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin)`, has a `NAME`, and is
constructed as `Plugin(args, handle)` where `args` is its pydantic args model (or None) and
`handle` the framework `Handle`. Plugins never call the API in Filter/Score.

Every method returns a `Status` (or a tuple with one); returning None is a bug the runtime
reports as an Error naming the plugin.
"""

from __future__ import annotations

import enum
import functools
import random
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock

if TYPE_CHECKING:
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.node_arrays import BoolArray, IntArray, NodeArrays
    from scheduler.framework.types import NodeInfo, PodInfo


MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class Code(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


@dataclass(slots=True, frozen=True)
class Status:
    """Outcome of a plugin call. `reasons` are the user-facing messages (counted per node in
    FailedScheduling), `plugin` the plugin that produced it (the runtime attaches it with
    `with_plugin` when empty).

    Immutable, so one instance may be shared: hot Filter/Score paths return a module-level
    success Status instead of allocating one per node, `unschedulable`/`unresolvable` hand out
    one shared instance per (reasons, plugin) (a rejection of 5,000 nodes builds it once), and
    the runtime never changes a Status a plugin handed it (it makes a named copy instead).
    `reasons` is a list for upstream-shaped comparisons; treat it as read-only like the rest.
    """

    code: Code = Code.SUCCESS
    reasons: list[str] = field(default_factory=list)
    plugin: str = ""
    error: BaseException | None = None

    @classmethod
    def success(cls) -> Status:
        return _SUCCESS

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "") -> Status:
        return _unschedulable(reasons, plugin)

    @classmethod
    def unresolvable(cls, *reasons: str, plugin: str = "") -> Status:
        return _unresolvable(reasons, plugin)

    @classmethod
    def skip(cls) -> Status:
        return _SKIP

    @classmethod
    def wait(cls, plugin: str = "") -> Status:
        return cls(Code.WAIT, [], plugin)

    @classmethod
    def as_error(cls, err: BaseException | str, plugin: str = "") -> Status:
        if isinstance(err, str):
            return cls(Code.ERROR, [err], plugin)
        return cls(Code.ERROR, [str(err)], plugin, err)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        """This Status attributed to `plugin`: itself when it already names it, else a copy."""
        if self.plugin == plugin:
            return self
        return Status(self.code, self.reasons, plugin, self.error)


# Success and Skip without a plugin or reasons: one shared instance each (Status is immutable)
_SUCCESS = Status(Code.SUCCESS)
_SKIP = Status(Code.SKIP)


# The shared immutable rejections, one per (reasons, plugin); bounded, so reasons that carry
# counts or names just fall out. One cache per code: hashing an enum member is a Python call.
@functools.lru_cache(maxsize=4096)
def _unschedulable(reasons: tuple[str, ...], plugin: str) -> Status:
    return Status(Code.UNSCHEDULABLE, list(reasons), plugin)


@functools.lru_cache(maxsize=4096)
def _unresolvable(reasons: tuple[str, ...], plugin: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, list(reasons), plugin)


def is_success(status: Status | None) -> bool:
    """None counts as Success (as upstream's nil *Status)."""
    return status is None or status.code == Code.SUCCESS


@dataclass(slots=True)
class PreFilterResult:
    """Narrows the nodes Filter is run on. `node_names=None` means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return PreFilterResult(self.node_names)
        if self.node_names is None:
            return PreFilterResult(set(other.node_names))
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(slots=True)
class PostFilterResult:
    nominated_node_name: str = ""


class ActionType(enum.IntFlag):
    """Cluster event actions (upstream framework.ActionType)."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATIONS = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    # a pod update none of the specific flags describe (upstream updatePodOther): only plugins
    # registering the general UPDATE see it
    UPDATE_POD_OTHER = 4096
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
              | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATIONS
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM | UPDATE_POD_OTHER)
    ALL = ADD | DELETE | UPDATE


class EventResource(enum.StrEnum):
    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnschedulablePod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    VOLUME_ATTACHMENT = "VolumeAttachment"
    POD_GROUP = "PodGroup"
    WILDCARD = "*"


@dataclass(slots=True, frozen=True)
class ClusterEvent:
    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, incoming: ClusterEvent) -> bool:
        """Upstream ClusterEvent.Match: the wildcard event (`*`, All) matches everything; else
        the resource must match (`*` any, Pod also the assigned / unscheduled pod events) and
        the actions must share a bit."""
        if self.resource == EventResource.WILDCARD and self.action == ActionType.ALL:
            return True
        same = self.resource in (incoming.resource, EventResource.WILDCARD) or (
            self.resource == EventResource.POD
            and incoming.resource in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD)
        )
        return same and bool(self.action & incoming.action)


class QueueingHint(enum.IntEnum):
    SKIP = 0
    QUEUE = 1


@dataclass(slots=True)
class ClusterEventWithHint:
    """An event a plugin registers interest in. `hint_fn(pod, old_obj, new_obj) -> QueueingHint`
    decides whether that event may make the rejected pod schedulable; None means always Queue.
    The queue passes the pending pod's PodInfo (parsed once) as `pod`; plugins read it through
    `helpers.as_pod_info`, which also accepts a pod dict (tests)."""

    event: ClusterEvent
    hint_fn: Any = None


@dataclass(slots=True)
class GangDemand:
    """What a gang plugin tells preemption about a preemptor's gang: its name (for messages),
    how many members must still be placed, the preemptor included (minMember minus the members
    already assumed or bound), and the gang's other pending members, in the order to try them."""

    group: str
    need: int
    siblings: list[PodInfo]


class Handle(Protocol):
    """What the framework offers plugins (upstream framework.Handle, with its PodNominator and
    EventRecorder, plus the PreFilter/Filter runners preemption simulates with). The runtime's
    `Framework` implements it; mypy checks every plugin's use of it against this seam."""

    def snapshot(self) -> Any:
        """The current cycle's Snapshot: `.node_infos()` list, `.get(name)`, `.have_pods_with_affinity()`,
        `.have_pods_with_required_anti_affinity()`."""

    def iterate_waiting_pods(self) -> list[Any]:
        """WaitingPod objects: `.pod`, `.allow(plugin)`, `.reject(plugin, msg)`, `.pending_plugins()`."""

    def get_waiting_pod(self, uid: str) -> Any | None: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    def activate(self, pods: list[JsonDict], *, gated_by: str | None = None) -> None:
        """Move these pending pods to activeQ now (upstream Handle.Activate); with `gated_by`,
        only those held at PreEnqueue by that plugin."""

    @property
    def client(self) -> Any:
        """minik3s.client Client (only for PreBind/Bind/PostBind/PostFilter, never Filter/Score)."""

    @property
    def informers(self) -> Any:
        """Shared informer factory (namespaces for namespaceSelector, PodGroups, ...)."""

    @property
    def clock(self) -> Clock:
        """The scheduler's clock (fake in tests): timestamps plugins write, timeouts they keep."""

    @property
    def rng(self) -> random.Random | None:
        """The scheduler's random source (None: the plugin seeds its own, deterministically)."""

    @property
    def scheduler_name(self) -> str:
        """The profile's schedulerName (upstream names it in preemption's DisruptionTarget message)."""

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        """Run `coro` as a task named `name`, owned by the scheduler and cancelled with it
        (upstream: a goroutine the plugin starts, e.g. preemption's prepareCandidateAsync)."""

    def record_event(self, obj: JsonDict, type_: str, reason: str, action: str, message: str, *,
                     related: JsonDict | None = None) -> None:
        """Emit an Event about `obj` (upstream EventRecorder.Eventf); a no-op without a recorder."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to `node_name` (upstream PodNominator.NominatedPodsForNode)."""

    def nominated_node_name(self, uid: str) -> str:
        """The node the scheduler has nominated pod `uid` to in memory, before the API shows it
        ("" when none)."""

    def nodes_with_nominated_pods(self) -> list[str]:
        """The nodes at least one pod is nominated to in memory (preemption's dry run asks
        `nominated_pods_for_node` only of these)."""

    def add_nominated_pod(self, pod: PodInfo, node_name: str) -> None:
        """Nominate `pod` to `node_name` in memory (upstream PodNominator.AddNominatedPod)."""

    @property
    def pre_filter_plugins(self) -> Sequence[PreFilterPlugin]:
        """The profile's PreFilter plugins, in order (preemption's shortcuts check which
        PreFilter extensions a simulated removal would call)."""

    def active_filter_plugins(self, state: CycleState) -> Sequence[FilterPlugin]:
        """The profile's Filter plugins this cycle runs, in order (those PreFilter skipped left out)."""

    def run_pre_filter(self, state: CycleState, pi: PodInfo,
                       nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status, set[str]]:
        """Every PreFilter plugin of the profile: (merged result, status, plugins that narrowed)."""

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pi: PodInfo, node: NodeInfo) -> Status:
        """Every Filter plugin on `node`, counting pods nominated there (preemption's dry runs)."""

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: PodInfo,
                                         pod_to_add: PodInfo, node: NodeInfo) -> Status:
        """PreFilterExtensions.AddPod of every PreFilter plugin (a simulated placement)."""

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: PodInfo,
                                            pod_to_remove: PodInfo, node: NodeInfo) -> Status:
        """PreFilterExtensions.RemovePod of every PreFilter plugin (a simulated eviction)."""

    def gang_demand(self, pod: PodInfo) -> GangDemand | None:
        """The gang `pod` belongs to as the profile's gang plugin (a `GangDemandPlugin` at
        PostFilter) sees it, for gang-aware preemption; None outside a gang or without one."""


class Plugin:
    NAME: ClassVar[str] = ""

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.args = args
        self.handle = handle

    def name(self) -> str:
        return self.NAME


class PreEnqueuePlugin(Plugin):
    def pre_enqueue(self, pod: JsonDict) -> Status:
        raise NotImplementedError


class QueueSortPlugin(Plugin):
    def less(self, a: Any, b: Any) -> bool:
        """a, b are QueuedPodInfo; True if a should be popped before b."""
        raise NotImplementedError

    def sort_key(self, item: Any) -> tuple[Any, ...] | None:
        """Optional (a framework addition, not upstream's): a key the queue's heap compares in C
        instead of calling `less`, computed when the item enters or is updated in the heap. The
        contract: for any two items whose keys are both not None, `key(a) < key(b)` exactly when
        `less(a, b)`, and the key depends only on the item itself (its pod and timestamp), so it
        stays valid while the item is queued. None (the default) for an item whose order may
        change while it waits: comparisons involving it call `less`."""
        return None


class EnqueueExtensions(Plugin):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        raise NotImplementedError


class PreFilterPlugin(Plugin):
    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        raise NotImplementedError

    # PreFilterExtensions (used by preemption to simulate removing/adding pods). Optional.
    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status:
        return Status.success()

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status:
        return Status.success()

    def has_pre_filter_extensions(self) -> bool:
        return False


class FilterPlugin(Plugin):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        raise NotImplementedError

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """Batch form of `filter` (a minik3s addition for speed): for each of `nodes`, in order,
        None when `filter` would return Success, else the Status `filter` would return. Plugins
        override it to hoist per-pod work out of the node loop; the result must equal calling
        `filter` node by node. The scheduler only uses it outside preemption's dry runs."""
        out: list[Status | None] = []
        append = out.append
        for n in nodes:
            st = self.filter(state, pod, n)
            append(st if st.code else None)
        return out

    def filter_accept_mask(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> BoolArray | None:
        """Optional vector fast accept (a minik3s addition for speed): for snapshot rows `rows`
        (see NodeArrays), True where `filter` surely returns Success for that row's node. False
        only means "not known": the runtime asks `filter_nodes` about those nodes, so statuses
        and messages always come from the scalar code. None: no vector form for this pod."""
        return None

    def filter_reject_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays,
                           rows: IntArray) -> tuple[IntArray, list[Status]] | None:
        """Optional vector reject (a minik3s addition for speed), asked about the rows
        `filter_accept_mask` did not accept: the subset of `rows` (in their order) whose node
        `filter` rejects, with exactly the Status `filter` returns for each (shared instances
        are fine: Status is immutable); every other row of `rows` passes. None: no vector form
        for this pod (the runtime then asks `filter_nodes`)."""
        return None


class PostFilterPlugin(Plugin):
    async def post_filter(self, state: CycleState, pod: PodInfo, filtered_node_status: dict[str, Status]) -> tuple[PostFilterResult | None, Status]:
        raise NotImplementedError


class GangDemandPlugin(Plugin):
    """A PostFilter plugin that knows gangs answers DefaultPreemption through
    `Handle.gang_demand`: how many of the preemptor's gang must still be placed and which
    pending siblings may take the places (minik3s: preemption frees room for the whole gang)."""

    def gang_demand(self, pod: PodInfo) -> GangDemand | None:
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        raise NotImplementedError


class ScorePlugin(Plugin):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        raise NotImplementedError

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[int], Status] | None:
        """Optional batch form of `score` (a minik3s addition for speed): raw scores for `nodes`
        in order, equal to `[score(state, pod, n)[0] for n in nodes]`, so per-pod work (state
        reads, request sums) is hoisted out of the node loop. Return None to let the runtime call
        `score` per node; a non-success Status fails the cycle like a failing `score`."""
        return None

    def score_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays, rows: IntArray,
                   nodes: Sequence[NodeInfo]) -> IntArray | None:
        """Optional vector form of `score_nodes` (a minik3s addition for speed): raw scores for
        snapshot rows `rows` (`nodes[i]` is row `rows[i]`'s NodeInfo), equal element by element
        to `score_nodes`. None: let the runtime use `score_nodes` / `score`."""
        return None

    def normalize_score_array(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray | None:
        """Optional vector form of `normalize_raw_scores`; None falls back to it."""
        return None

    def normalize_raw_scores(self, state: CycleState, pod: PodInfo, scores: list[int]) -> list[int] | None:
        """Optional batch form of `normalize_score` (a minik3s addition for speed): the normalized
        values for raw `scores` (one per node, in order), equal to what `normalize_score` writes
        into the NodeScores, without building NodeScore objects. Return None to let the runtime
        call `normalize_score`."""
        return None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        """Optional ScoreExtensions: rewrite scores in place into [0, 100]."""
        return Status.success()

    def has_normalize_score(self) -> bool:
        return type(self).normalize_score is not ScorePlugin.normalize_score


class ReservePlugin(Plugin):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        raise NotImplementedError

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        raise NotImplementedError


class PermitPlugin(Plugin):
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        """Returns (status, timeout_seconds). Status WAIT parks the pod until allowed/rejected/timeout."""
        raise NotImplementedError


class PreBindPlugin(Plugin):
    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        raise NotImplementedError


class BindPlugin(Plugin):
    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Return SKIP to let the next Bind plugin handle it."""
        raise NotImplementedError


class PostBindPlugin(Plugin):
    async def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        raise NotImplementedError
