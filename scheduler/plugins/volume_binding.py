"""VolumeBinding (PreFilter, Filter, Reserve, PreBind): a pod's PersistentVolumeClaims must be
bound, or bindable on the node, before the pod goes there (upstream plugins/volumebinding:
volume_binding.go, binder.go, assume_cache.go, as of v1.33).

Data flow per pod:
- PreFilter: pods without claim-backed volumes (`persistentVolumeClaim`, or generic `ephemeral`
  volumes whose claim is `<pod>-<volume>`) Skip (one memoised look at spec.volumes). Otherwise
  every claim must exist, not be lost or being deleted, and (ephemeral) be owned by the pod:
  else UnschedulableAndUnresolvable with upstream's message. The claims are then sorted into
  bound (spec.volumeName and `pv.kubernetes.io/bind-completed`), unbound WaitForFirstConsumer
  and unbound Immediate (or pre-bound) ones; any of the last kind is UnschedulableAndUnresolvable
  "pod has unbound immediate PersistentVolumeClaims". The volumes of the WFFC claims' classes
  are listed once here. No PreFilterResult: v1.32 dropped the narrowing by bound volumes'
  hostname affinity (kubernetes#125398: a hostname label need not be the node's name).
- Filter (per node, upstream FindPodVolumes): a bound claim's volume must exist ("node(s)
  unavailable due to one or more pvc(s) bound to non-existent pv(s)") and its node affinity
  admit the node ("node(s) had volume node affinity conflict"); each WFFC claim either already
  names this node in `volume.kubernetes.io/selected-node`, or gets the smallest matching
  Available volume (not one chosen for another claim of the pod), or can be provisioned here
  (a class whose provisioner is not `kubernetes.io/no-provisioner`, whose allowedTopologies
  admit the node and, for a CSIDriver with storageCapacity, a CSIStorageCapacity with room):
  else "node(s) didn't find available persistent volumes to bind" (or "node(s) did not have
  enough free storage"). Every reason is UnschedulableAndUnresolvable, so preemption never
  tries these nodes. The node's choices are kept in the cycle state.
- Reserve: the chosen node's bindings are assumed in the plugin's assume caches (a PV with the
  claim in claimRef, a claim with the selected-node annotation), so the next pod's Filter sees
  them taken; Unreserve restores the informer's objects.
- PreBind: the API writes (PV updates with claimRef and `pv.kubernetes.io/bound-by-controller`,
  claim updates with the selected-node annotation), then wait, without blocking the loop, until
  every claim is fully bound (re-checked on each PV/claim informer event and every second of the
  scheduler's clock) or `bindTimeoutSeconds` pass: "binding volumes: context deadline exceeded".
  A provisioner that gives up removes the selected-node annotation: "binding volumes:
  provisioning failed for PVC ..." and the pod is retried (the claim is updated again then).
- No Score: VolumeBinding scores only under the StorageCapacityScoring alpha gate (off in v1.33).

Example: claim "data" (5Gi, class local-path, WFFC, provisioner rancher.io/local-path), no
PVs: every node passes Filter as "provision"; on the chosen node n2 Reserve assumes the claim
with selected-node n2, PreBind updates the claim, the provisioner creates a PV with n2's
hostname affinity and the PV controller binds them; PreBind returns once the claim carries
volumeName and bind-completed, and DefaultBinder binds the pod to n2.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from minik3s.api.helpers.storage_volume import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    bind_volume_to_claim,
    check_node_affinity,
    claim_class,
    ephemeral_claim_error,
    find_matching_volume_on_node,
    is_delay_binding_mode,
    match_topology_selector_terms,
    requested_storage,
    volume_class,
)
from minik3s.api.quantity import parse_quantity
from minik3s.api.resources import NODES, PERSISTENTVOLUMECLAIMS, PODS, ResourceInfo, builtin_resources
from minik3s.api.selectors import label_selector_from_dict
from minik3s.api.types import JsonDict
from minik3s.client.store import object_key
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    ReservePlugin,
    Status,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS, as_pod_info
from scheduler.plugins.pod_volumes import pod_volumes

logger = logging.getLogger(__name__)


def _builtin(group: str, resource: str) -> ResourceInfo:
    return next(r for r in builtin_resources() if (r.group, r.resource) == (group, resource))


PERSISTENTVOLUMES = _builtin("", "persistentvolumes")
STORAGECLASSES = _builtin("storage.k8s.io", "storageclasses")
CSIDRIVERS = _builtin("storage.k8s.io", "csidrivers")
CSISTORAGECAPACITIES = _builtin("storage.k8s.io", "csistoragecapacities")

STATE_KEY = names.VOLUME_BINDING
DEFAULT_BIND_TIMEOUT_SECONDS = 600
# upstream polls the binding every second (wait.PollUntilContextTimeout)
POLL_SECONDS = 1.0

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


class UtilizationShapePoint(BaseModel):
    model_config = ConfigDict(extra="forbid")
    utilization: int
    score: int


class VolumeBindingArgs(BaseModel):
    """kubescheduler.config.k8s.io/v1 VolumeBindingArgs. `shape` belongs to the
    StorageCapacityScoring alpha gate, off in v1.33, so any value is refused as upstream does."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    bind_timeout_seconds: int = Field(default=DEFAULT_BIND_TIMEOUT_SECONDS, alias="bindTimeoutSeconds")
    shape: list[UtilizationShapePoint] | None = None

    @model_validator(mode="after")
    def _check(self) -> VolumeBindingArgs:
        if self.bind_timeout_seconds < 0:
            raise ValueError(f"bindTimeoutSeconds: Invalid value: {self.bind_timeout_seconds}: "
                             "invalid BindTimeoutSeconds, should not be a negative value")
        if self.shape is not None:
            raise ValueError("shape: Invalid value: unsupported when StorageCapacityScoring feature is disabled")
        return self


def _rv(obj: Mapping[str, Any] | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class AssumeCache:
    """An informer's objects with in-memory assumed versions on top (upstream AssumeCache).

    `get`/`list` give the latest object: the assumed one while the informer's is not newer
    (a strictly higher resourceVersion replaces it, as an informer update does upstream), else
    the informer's; `get_api` always the informer's. `assume` refuses an object older than the
    latest; `restore` drops the assumed one. Example: PV "a" at rv 5 assumed with a claimRef;
    `get("a")` is the assumed copy until the informer delivers rv 6, then rv 6."""

    def __init__(self, informer: Callable[[], Any], description: str) -> None:
        self._informer = informer
        self.description = description
        self._assumed: dict[str, JsonDict] = {}

    def _store(self) -> Any:
        return self._informer().store

    def get_api(self, key: str) -> JsonDict:
        obj = self._store().get(key)
        if obj is None:
            raise LookupError(f'could not find {self.description} "{key}"')
        return obj  # type: ignore[no-any-return]

    def _latest(self, key: str, api: JsonDict | None) -> JsonDict | None:
        assumed = self._assumed.get(key)
        if assumed is None:
            return api
        if api is None or _rv(api) > _rv(assumed):
            del self._assumed[key]
            return api
        return assumed

    def get(self, key: str) -> JsonDict:
        obj = self._latest(key, self._store().get(key))
        if obj is None:
            raise LookupError(f'could not find {self.description} "{key}"')
        return obj

    def list(self) -> list[JsonDict]:
        if not self._assumed:
            return list(self._store().list())
        out = []
        for api in self._store().list():
            latest = self._latest(object_key(api), api)
            if latest is not None:
                out.append(latest)
        return out

    def assume(self, obj: JsonDict) -> None:
        key = object_key(obj)
        stored = self.get(key)
        if _rv(obj) < _rv(stored):
            raise ValueError(f'{self.description} "{key}" is out of sync (stored: {_rv(stored)}, '
                             f"assume: {_rv(obj)})")
        self._assumed[key] = obj

    def restore(self, key: str) -> None:
        self._assumed.pop(key, None)

    def is_assumed(self, key: str) -> bool:
        """Whether `get(key)` gives an assumed object (not the informer's)."""
        self._latest(key, self._store().get(key))
        return key in self._assumed


@dataclass(slots=True)
class PodVolumeClaims:
    """The pod's claims sorted as upstream GetPodVolumeClaims does, plus the volumes of the
    WaitForFirstConsumer claims' classes (class name -> latest PVs)."""

    bound: list[JsonDict] = field(default_factory=list)
    unbound_delay_binding: list[JsonDict] = field(default_factory=list)
    unbound_immediate: list[JsonDict] = field(default_factory=list)
    volumes_by_class: dict[str, list[JsonDict]] = field(default_factory=dict)


@dataclass(slots=True)
class Binding:
    """A claim and the volume it would take (upstream BindingInfo)."""

    pvc: JsonDict
    pv: JsonDict


@dataclass(slots=True)
class PodVolumes:
    """What one node needs for the pod (upstream PodVolumes): static bindings and claims to
    provision."""

    static_bindings: list[Binding] = field(default_factory=list)
    dynamic_provisions: list[JsonDict] = field(default_factory=list)


@dataclass(slots=True)
class _State:
    claims: PodVolumeClaims
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False

    def clone(self) -> _State:
        """Shared, as upstream's stateData.Clone: preemption's dry runs only add per-node entries."""
        return self


class _BindError(Exception):
    """checkBindings' error: binding must fail and the pod be retried."""


def _claim_key(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _fully_bound(pvc: Mapping[str, Any]) -> bool:
    """upstream isPVCFullyBound: spec.volumeName set and the bind-completed annotation present."""
    return bool((pvc.get("spec") or {}).get("volumeName")) and \
        ANN_BIND_COMPLETED in ((pvc.get("metadata") or {}).get("annotations") or {})


class VolumeBinding(PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, EnqueueExtensions):
    NAME = names.VOLUME_BINDING
    Args = VolumeBindingArgs

    def __init__(self, args: VolumeBindingArgs | None = None, handle: Any = None) -> None:
        super().__init__(args if args is not None else VolumeBindingArgs(), handle)
        self.bind_timeout = float(self.args.bind_timeout_seconds)
        self.pv_cache = AssumeCache(lambda: self._informer(PERSISTENTVOLUMES), "v1.PersistentVolume")
        self.pvc_cache = AssumeCache(lambda: self._informer(PERSISTENTVOLUMECLAIMS), "v1.PersistentVolumeClaim")
        self._waiters: set[asyncio.Event] = set()
        self._watching = False
        if handle is not None and handle.informers is not None:
            # start the informers with the scheduler, as upstream's New asks the factory for them
            for res in (PERSISTENTVOLUMES, PERSISTENTVOLUMECLAIMS, STORAGECLASSES, CSIDRIVERS,
                        CSISTORAGECAPACITIES):
                handle.informers.informer(res)

    def _informer(self, res: ResourceInfo) -> Any:
        assert self.handle is not None
        return self.handle.informers.informer(res)

    def _get(self, res: ResourceInfo, key: str) -> JsonDict | None:
        return self._informer(res).store.get(key)  # type: ignore[no-any-return]

    # ---- PreFilter ----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        claims = pod_volumes(pod).claims
        if not claims:
            return None, Status.skip()
        msg = self._pod_claims_problem(pod, claims)
        if msg:
            return None, Status.unresolvable(msg, plugin=self.NAME)
        try:
            pvc = self._pod_volume_claims(pod, claims)
        except (LookupError, ValueError) as e:
            return None, Status.as_error(str(e), self.NAME)
        if pvc.unbound_immediate:
            # the PV controller binds them; their PVC updates requeue the pod
            return None, Status.unresolvable(ERR_UNBOUND_IMMEDIATE, plugin=self.NAME)
        state.write(STATE_KEY, _State(pvc))
        return None, SUCCESS

    def _pod_claims_problem(self, pod: PodInfo, claims: Sequence[tuple[str, bool]]) -> str:
        """upstream podHasPVCs: why a claim cannot be used at all, "" when every claim can."""
        for name, ephemeral in claims:
            pvc = self._get(PERSISTENTVOLUMECLAIMS, f"{pod.namespace}/{name}")
            if pvc is None:
                if ephemeral:
                    return f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                return f'persistentvolumeclaim "{name}" not found'
            if (pvc.get("status") or {}).get("phase") == "Lost":
                return (f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                        f'"{(pvc.get("spec") or {}).get("volumeName") or ""}"')
            if (pvc.get("metadata") or {}).get("deletionTimestamp"):
                return f'persistentvolumeclaim "{name}" is being deleted'
            if ephemeral:
                err = ephemeral_claim_error(pod.pod, pvc)
                if err:
                    return err
        return ""

    def _volume_bound(self, pod: PodInfo, name: str, ephemeral: bool) -> tuple[bool, JsonDict]:
        """upstream isVolumeBound: (fully bound, the latest claim). Raises LookupError/ValueError."""
        key = f"{pod.namespace}/{name}"
        try:
            pvc = self.pvc_cache.get(key)
        except LookupError as e:
            raise LookupError(f'error getting PVC "{key}": {e}') from None
        if ephemeral:
            err = ephemeral_claim_error(pod.pod, pvc)
            if err:
                raise ValueError(err)
        return _fully_bound(pvc), pvc

    def _pod_volume_claims(self, pod: PodInfo, claims: Sequence[tuple[str, bool]]) -> PodVolumeClaims:
        out = PodVolumeClaims()
        for name, ephemeral in claims:
            bound, pvc = self._volume_bound(pod, name, ephemeral)
            if bound:
                out.bound.append(pvc)
            elif is_delay_binding_mode(pvc, lambda c: self._get(STORAGECLASSES, c)) \
                    and not (pvc.get("spec") or {}).get("volumeName"):
                out.unbound_delay_binding.append(pvc)
            else:  # Immediate, or pre-bound to a volume: the PV controller's to finish
                out.unbound_immediate.append(pvc)
        if out.unbound_delay_binding:
            wanted = {claim_class(c) for c in out.unbound_delay_binding}
            by_class: dict[str, list[JsonDict]] = {c: [] for c in wanted}
            for pv in self.pv_cache.list():
                cls = volume_class(pv)
                if cls in by_class:
                    by_class[cls].append(pv)
            out.volumes_by_class = by_class
        return out

    # ---- Filter -------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        st: _State | None = state.get(STATE_KEY)
        if st is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found", self.NAME)
        try:
            volumes, reasons = self._find_pod_volumes(pod, st.claims, node)
        except (LookupError, ValueError) as e:
            return Status.as_error(str(e), self.NAME)
        if reasons:
            return Status.unresolvable(*reasons, plugin=self.NAME)
        st.by_node[node.name] = volumes
        return SUCCESS

    def _find_pod_volumes(self, pod: PodInfo, claims: PodVolumeClaims,
                          node: NodeInfo) -> tuple[PodVolumes, list[str]]:
        """upstream FindPodVolumes: the node's bindings and provisionings, or the reasons it
        cannot have them (in upstream's order). Raises LookupError/ValueError for errors."""
        out = PodVolumes()
        bound_ok = unbound_ok = enough_storage = pvs_found = True
        labels = node.labels
        for pvc in claims.bound:
            pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
            try:
                pv = self.pv_cache.get(pv_name)
            except LookupError:
                pvs_found = False
                break
            if not check_node_affinity(pv, labels):
                bound_ok = False
                break
        if claims.unbound_delay_binding:
            to_match: list[JsonDict] = []
            to_provision: list[JsonDict] = []
            for pvc in claims.unbound_delay_binding:
                ann = (pvc.get("metadata") or {}).get("annotations") or {}
                if ANN_SELECTED_NODE in ann:
                    if ann[ANN_SELECTED_NODE] != node.name:
                        unbound_ok = False  # the claim is being provisioned for another node
                        return out, _reasons(bound_ok, unbound_ok, enough_storage, pvs_found)
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if to_match:
                unbound_ok, out.static_bindings, unmatched = self._find_matching_volumes(claims, to_match, labels)
                to_provision += unmatched
            if to_provision:
                unbound_ok, enough_storage, out.dynamic_provisions = self._check_provisions(to_provision, node)
        return out, _reasons(bound_ok, unbound_ok, enough_storage, pvs_found)

    @staticmethod
    def _find_matching_volumes(claims: PodVolumeClaims, to_match: list[JsonDict], labels: Mapping[str, str]
                               ) -> tuple[bool, list[Binding], list[JsonDict]]:
        """Smallest claims first, each the smallest fitting volume not chosen yet."""
        chosen: dict[str, JsonDict] = {}
        bindings: list[Binding] = []
        unmatched: list[JsonDict] = []
        for pvc in sorted(to_match, key=requested_storage):
            pv = find_matching_volume_on_node(pvc, claims.volumes_by_class.get(claim_class(pvc), ()), labels,
                                              chosen)
            if pv is None:
                unmatched.append(pvc)
                continue
            chosen[_name(pv)] = dict(pv)
            bindings.append(Binding(pvc, dict(pv)))
        return not unmatched, bindings, unmatched

    def _check_provisions(self, to_provision: list[JsonDict], node: NodeInfo
                          ) -> tuple[bool, bool, list[JsonDict]]:
        """upstream checkVolumeProvisions: (provisionable, enough storage, claims to provision)."""
        out: list[JsonDict] = []
        for pvc in to_provision:
            class_name = claim_class(pvc)
            if not class_name:
                raise ValueError(f'no class for claim "{_claim_key(pvc)}"')
            sc = self._get(STORAGECLASSES, class_name)
            if sc is None:
                raise LookupError(f'failed to find storage class "{class_name}"')
            provisioner = sc.get("provisioner") or ""
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.get("allowedTopologies"), node.labels):
                return False, True, []
            if not self._has_enough_capacity(provisioner, pvc, class_name, node.labels):
                return True, False, []
            out.append(pvc)
        return True, True, out

    def _has_enough_capacity(self, provisioner: str, pvc: JsonDict, class_name: str,
                             labels: Mapping[str, str]) -> bool:
        """Storage capacity tracking: only for a CSIDriver named as the provisioner that sets
        storageCapacity; then some CSIStorageCapacity of the class reachable from the node
        (nodeTopology selects its labels) must hold the request (maximumVolumeSize, else
        capacity)."""
        requests = ((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}
        if "storage" not in requests:
            return True
        driver = self._get(CSIDRIVERS, provisioner)
        if driver is None or not (driver.get("spec") or {}).get("storageCapacity"):
            return True
        size = parse_quantity(requests["storage"])
        for cap in self._informer(CSISTORAGECAPACITIES).store.list():
            if cap.get("storageClassName") != class_name:
                continue
            limit = _volume_limit(cap)
            if limit is None or limit < size:
                continue
            topo = cap.get("nodeTopology")
            if topo is None:
                continue
            try:
                if label_selector_from_dict(topo).matches(labels):
                    return True
            except ValueError:
                continue
        return False

    # ---- Reserve ------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        st: _State | None = state.get(STATE_KEY)
        if st is None:
            return SUCCESS
        volumes = st.by_node.get(node_name)
        if volumes is None:
            st.all_bound = True
            return SUCCESS
        try:
            st.all_bound = self._assume_pod_volumes(pod, node_name, volumes)
        except (LookupError, ValueError) as e:
            return Status.as_error(str(e), self.NAME)
        return SUCCESS

    def _assume_pod_volumes(self, pod: PodInfo, node_name: str, volumes: PodVolumes) -> bool:
        """upstream AssumePodVolumes: True when every claim is already fully bound; else the
        node's bindings and provisionings are assumed and `volumes` holds the assumed objects."""
        if self._all_bound(pod):
            return True
        bindings: list[Binding] = []
        for b in volumes.static_bindings:
            new_pv, dirty = bind_volume_to_claim(b.pv, b.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv)
                except (LookupError, ValueError):
                    self._revert(bindings, [])
                    raise
            bindings.append(Binding(b.pvc, new_pv))
        provisions: list[JsonDict] = []
        for pvc in volumes.dynamic_provisions:
            meta = dict(pvc.get("metadata") or {})
            meta["annotations"] = {**(meta.get("annotations") or {}), ANN_SELECTED_NODE: node_name}
            clone = {**pvc, "metadata": meta}
            try:
                self.pvc_cache.assume(clone)
            except (LookupError, ValueError):
                self._revert(bindings, provisions)
                raise
            provisions.append(clone)
        volumes.static_bindings, volumes.dynamic_provisions = bindings, provisions
        return False

    def _all_bound(self, pod: PodInfo) -> bool:
        for name, ephemeral in pod_volumes(pod).claims:
            try:
                if not self._volume_bound(pod, name, ephemeral)[0]:
                    return False
            except (LookupError, ValueError):
                return False
        return True

    def _revert(self, bindings: Sequence[Binding], provisions: Sequence[JsonDict]) -> None:
        for b in bindings:
            self.pv_cache.restore(_name(b.pv))
        for pvc in provisions:
            self.pvc_cache.restore(_claim_key(pvc))

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        st: _State | None = state.get(STATE_KEY)
        if st is None:
            return
        volumes = st.by_node.get(node_name)
        if volumes is not None:
            self._revert(volumes.static_bindings, volumes.dynamic_provisions)

    # ---- PreBind ------------------------------------------------------------------------
    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        st: _State | None = state.get(STATE_KEY)
        if st is None or st.all_bound:
            return SUCCESS
        volumes = st.by_node.get(node_name)
        if volumes is None:
            return Status.as_error(f'no pod volumes found for node "{node_name}"', self.NAME)
        logger.debug("binding volumes pod=%s node=%s static=%d provision=%d", pod.key, node_name,
                     len(volumes.static_bindings), len(volumes.dynamic_provisions))
        try:
            await self._bind_api_update(volumes)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # an API error: the pod is retried
            logger.info("binding volumes failed pod=%s node=%s err=%s", pod.key, node_name, e)
            return Status.as_error(str(e), self.NAME)
        try:
            await self._wait_for_bindings(pod, node_name, volumes)
        except _BindError as e:
            logger.info("binding volumes failed pod=%s node=%s err=%s", pod.key, node_name, e)
            return Status.as_error(f"binding volumes: {e}", self.NAME)
        return SUCCESS

    async def _bind_api_update(self, volumes: PodVolumes) -> None:
        """PV updates for static bindings, then claim updates for provisioning; what was not
        written is reverted in the caches (upstream bindAPIUpdate: no API rollback)."""
        assert self.handle is not None
        client = self.handle.client
        bindings, provisions = volumes.static_bindings, volumes.dynamic_provisions
        done_b = done_p = 0
        try:
            for b in bindings:
                b.pv = await client.update(PERSISTENTVOLUMES, b.pv, read_only=True)
                done_b += 1
            for i, pvc in enumerate(provisions):
                provisions[i] = await client.update(PERSISTENTVOLUMECLAIMS, pvc, read_only=True)
                done_p += 1
        finally:
            self._revert(bindings[done_b:], provisions[done_p:])

    async def _wait_for_bindings(self, pod: PodInfo, node_name: str, volumes: PodVolumes) -> None:
        """Until `_check_bindings` is true (re-checked on every PV/claim event and every second
        of the scheduler's clock); _BindError on its errors or after the bind timeout."""
        self._watch()
        clock = self.handle.clock if self.handle is not None else None
        assert clock is not None
        deadline = clock.monotonic() + self.bind_timeout
        while True:
            remaining = deadline - clock.monotonic()
            if remaining <= 0:
                raise _BindError("context deadline exceeded")
            await self._changed_or(min(POLL_SECONDS, remaining))
            if self._check_bindings(pod, node_name, volumes):
                logger.debug("all claims bound pod=%s", pod.key)
                return

    def _watch(self) -> None:
        """Wake waiting binders on PV and claim events (registered on first use)."""
        if self._watching or self.handle is None:
            return
        self._watching = True
        for res in (PERSISTENTVOLUMES, PERSISTENTVOLUMECLAIMS):
            self._informer(res).add_handler(on_add=self._wake, on_update=self._wake2, on_delete=self._wake)

    def _wake(self, _obj: Any) -> None:
        for ev in self._waiters:
            ev.set()

    def _wake2(self, _old: Any, _new: Any) -> None:
        self._wake(None)

    async def _changed_or(self, seconds: float) -> None:
        assert self.handle is not None
        ev = asyncio.Event()
        self._waiters.add(ev)
        waiter = asyncio.ensure_future(ev.wait())
        ticker = asyncio.ensure_future(self.handle.clock.sleep(seconds))
        try:
            await asyncio.wait((waiter, ticker), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._waiters.discard(ev)
            waiter.cancel()
            ticker.cancel()

    def _check_bindings(self, pod: PodInfo, node_name: str, volumes: PodVolumes) -> bool:
        """upstream checkBindings, on the informers' objects (not the assumed ones): True once
        every claim is fully bound; _BindError when binding must fail and be retried."""
        node = self._get(NODES, node_name)
        if node is None:
            raise _BindError(f'failed to get node "{node_name}": node "{node_name}" not found')
        labels = (node.get("metadata") or {}).get("labels") or {}
        if self._get(PODS, pod.key) is None:
            raise _BindError(f'pod does not exist any more: pod "{pod.name}" not found')
        for b in volumes.static_bindings:
            try:
                pv = self.pv_cache.get_api(_name(b.pv))
                pvc = self.pvc_cache.get_api(_claim_key(b.pvc))
            except LookupError as e:
                raise _BindError(f"failed to check binding: {e}") from None
            if _rv(b.pv) > _rv(pv):  # our write has not reached the informer yet
                return False
            if not check_node_affinity(pv, labels):
                raise _BindError(f'pv "{_name(pv)}" node affinity doesn\'t match node "{node_name}": '
                                 "no matching NodeSelectorTerms")
            ref = (pv.get("spec") or {}).get("claimRef")
            if not ref or not ref.get("uid"):
                raise _BindError(f'ClaimRef got reset for pv "{_name(pv)}"')
            if not _fully_bound(pvc):
                return False
        for claim in volumes.dynamic_provisions:
            try:
                pvc = self.pvc_cache.get_api(_claim_key(claim))
            except LookupError as e:
                raise _BindError(f"failed to check provisioning pvc: {e}") from None
            if _rv(claim) > _rv(pvc):
                return False
            ann = (pvc.get("metadata") or {}).get("annotations")
            if ann is None:
                raise _BindError(f'selectedNode annotation reset for PVC "{_name(pvc)}"')
            if ann.get(ANN_SELECTED_NODE) != node_name:
                # a provisioner that gives up removes the annotation: schedule again
                raise _BindError(f'provisioning failed for PVC "{_name(pvc)}"')
            volume_name = (pvc.get("spec") or {}).get("volumeName")
            if volume_name:
                try:
                    pv = self.pv_cache.get_api(volume_name)
                except LookupError:
                    return False  # not seen yet; a deleted PV unbinds the claim eventually
                if not check_node_affinity(pv, labels):
                    raise _BindError(f'pv "{_name(pv)}" node affinity doesn\'t match node "{node_name}": '
                                     "no matching NodeSelectorTerms")
            if not _fully_bound(pvc):
                return False
        return True

    # ---- queueing hints -----------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            # a class added, or its allowedTopologies changed
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, add_update),
                                 self._after_storage_class_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                                 self._after_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update)),
            # node labels decide PV node affinity and allowedTopologies (queueing hints on:
            # no UpdateNodeTaint, as upstream with SchedulerQueueingHints)
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, add_update), self._after_csi_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE),
                                 self._after_csi_driver_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_update),
                                 self._after_capacity_change),
        ]

    @staticmethod
    def _after_storage_class_change(pod: Any, old: JsonDict | None, new: JsonDict) -> QueueingHint:
        if old is None or old.get("allowedTopologies") != new.get("allowedTopologies"):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def _after_claim_change(pod: Any, old: JsonDict | None, new: JsonDict) -> QueueingHint:
        pi = as_pod_info(pod)
        meta = new.get("metadata") or {}
        if meta.get("namespace") != pi.namespace:
            return QueueingHint.SKIP
        name = meta.get("name")
        return QueueingHint.QUEUE if any(c == name for c, _ in pod_volumes(pi).claims) else QueueingHint.SKIP

    @staticmethod
    def _after_csi_node_change(pod: Any, old: JsonDict | None, new: JsonDict) -> QueueingHint:
        if old is None:
            return QueueingHint.QUEUE
        before = ((old.get("metadata") or {}).get("annotations") or {}).get(ANN_MIGRATED_PLUGINS)
        after = ((new.get("metadata") or {}).get("annotations") or {}).get(ANN_MIGRATED_PLUGINS)
        return QueueingHint.QUEUE if before != after else QueueingHint.SKIP

    @staticmethod
    def _after_csi_driver_change(pod: Any, old: JsonDict | None, new: JsonDict) -> QueueingHint:
        pi = as_pod_info(pod)
        driver = _name(new)
        was = bool(((old or {}).get("spec") or {}).get("storageCapacity"))
        now = bool((new.get("spec") or {}).get("storageCapacity"))
        for vol in pi.spec.get("volumes") or ():
            csi = vol.get("csi")
            if csi is None or csi.get("driver") != driver:
                continue
            if was and not now:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def _after_capacity_change(pod: Any, old: JsonDict | None, new: JsonDict) -> QueueingHint:
        if old is None:
            return QueueingHint.QUEUE
        before, after = _volume_limit(old), _volume_limit(new)
        if after is not None and (before is None or after > before):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP


def _volume_limit(cap: Mapping[str, Any]) -> Fraction | None:
    """A CSIStorageCapacity's largest volume: maximumVolumeSize, else capacity (None: unknown)."""
    q = cap.get("maximumVolumeSize")
    if q is None:
        q = cap.get("capacity")
    return parse_quantity(q) if q is not None else None


def _reasons(bound_ok: bool, unbound_ok: bool, enough_storage: bool, pvs_found: bool) -> list[str]:
    out = []
    if not bound_ok:
        out.append(ERR_REASON_NODE_CONFLICT)
    if not unbound_ok:
        out.append(ERR_REASON_BIND_CONFLICT)
    if not enough_storage:
        out.append(ERR_REASON_NOT_ENOUGH_SPACE)
    if not pvs_found:
        out.append(ERR_REASON_PV_NOT_EXIST)
    return out
