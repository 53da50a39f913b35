"""Unknown-field detection and pruning from the wire models (layer L4, apiserver).

Why: `fieldValidation=Strict` must reject, and `Warn` (the default) must warn about, fields the
schema does not define: upstream reports them as `unknown field "spec.containers[0].bar"`.
The pydantic models in minik3s.api are the schema; they are compiled once (lazily, per model
class) into a small tree of field names -> child node, and the request's dict is walked
against that tree without constructing a model.

Example: for a Pod `{"spec": {"foo": 1, "containers": [{"name": "c", "bar": 2}]}}` ->
`["spec.containers[0].bar", "spec.foo"]` (sorted, as upstream sorts them).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel

from apiserver.strategies.memo import (
    SecondSightLRU,
    exact_json,
    same_but_token_name,
    without_token_volume_name,
)
from minik3s.api.quantity import QuantityError, canonical_quantity
from minik3s.api.types import JsonDict


@dataclass(slots=True)
class Node:
    """`kind`: "model" (known fields in `fields`), "list"/"map" (element in `elem`), "any", or a
    scalar "string"/"int"/"float"/"bool". `name` is the model's Go type name."""

    kind: str
    fields: dict[str, Node] = field(default_factory=dict)
    elem: Node | None = None
    name: str = ""


_ANY = Node("any")
_QUANTITY = Node("quantity")
# in a `quantity_tree`: an ObjectMeta's creationTimestamp, dropped when null (Go's zero time)
_ZERO_TIME = Node("zero-time")
_SCALARS = {str: Node("string"), int: Node("int"), float: Node("float"), bool: Node("bool")}
# Go type names where the python model's class name differs from the upstream struct
_GO_NAMES = {"EventsV1Event": "Event", "AppsCondition": "DeploymentCondition"}


def _node_for(tp: Any, cache: dict[type, Node]) -> Node:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if set(args) == {str, int, float}:
            return _QUANTITY  # meta.Quantity: a string or a JSON number, normalised on write
        if len(args) > 1 and all(a in _SCALARS for a in args):
            return _ANY  # IntOrString: several JSON types are fine
        nodes = [_node_for(a, cache) for a in args]
        for n in nodes:
            if n.kind != "any":
                return n
        return _ANY
    if origin is typing.Literal:
        kinds = {type(a) for a in typing.get_args(tp)}
        return _SCALARS.get(kinds.pop(), _ANY) if len(kinds) == 1 else _ANY
    if origin in (list, tuple):
        targs = typing.get_args(tp)
        return Node("list", elem=_node_for(targs[0], cache) if targs else _ANY)
    if origin is dict:
        targs = typing.get_args(tp)
        return Node("map", elem=_node_for(targs[1], cache) if len(targs) == 2 else _ANY)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return model_node(tp, cache)
    if isinstance(tp, type) and tp in _SCALARS:
        return _SCALARS[tp]
    return _ANY


def model_node(model: type[BaseModel], cache: dict[type, Node] | None = None) -> Node:
    cache = {} if cache is None else cache
    hit = cache.get(model)
    if hit is not None:
        return hit
    node = Node("model", name=_GO_NAMES.get(model.__name__, model.__name__))
    cache[model] = node  # before recursing: models may be recursive
    for name, info in model.model_fields.items():
        node.fields[info.alias or name] = _node_for(info.annotation, cache)
    return node


def walk_unknown(obj: Any, node: Node, path: str, out: list[str]) -> None:
    if node.kind == "model":
        if not isinstance(obj, dict):
            return
        for k, v in obj.items():
            child = node.fields.get(k)
            p = f"{path}.{k}" if path else k
            if child is None:
                out.append(p)
            elif child.kind in _CONTAINERS:
                walk_unknown(v, child, p, out)
    elif node.kind == "list" and node.elem is not None and node.elem.kind in _CONTAINERS:
        if isinstance(obj, list):
            for i, item in enumerate(obj):
                walk_unknown(item, node.elem, f"{path}[{i}]", out)
    elif node.kind == "map" and node.elem is not None and node.elem.kind in _CONTAINERS:
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk_unknown(v, node.elem, f"{path}[{k}]", out)


_CONTAINERS = ("model", "list", "map")


def _has_quantity(node: Node, memo: dict[int, bool]) -> bool:
    """Whether a quantity can occur below `node` (memoised by node identity; recursive models
    count as False while being computed)."""
    key = id(node)
    hit = memo.get(key)
    if hit is not None:
        return hit
    memo[key] = False
    if node.kind == "quantity":
        out = True
    elif node.kind == "model":
        # an ObjectMeta (a template's) has its null creationTimestamp to drop
        out = node.name == "ObjectMeta" or any(_has_quantity(c, memo) for c in node.fields.values())
    else:
        out = node.elem is not None and _has_quantity(node.elem, memo)
    memo[key] = out
    return out


def quantity_tree(node: Node, memo: dict[int, Node | None]) -> Node | None:
    """The part of a schema tree that leads to quantities (None when none can occur), so the
    write path walks only e.g. `spec.containers[*].resources.{requests,limits}` of a Pod; an
    ObjectMeta on the way (a pod template's) keeps its creationTimestamp, dropped when null."""
    key = id(node)
    if key in memo:
        return memo[key]
    has: dict[int, bool] = {}
    if not _has_quantity(node, has):
        memo[key] = None
        return None
    if node.kind == "quantity":
        memo[key] = node
        return node
    if node.kind == "model":
        out = Node("model", name=node.name)
        memo[key] = out
        for k, c in node.fields.items():
            sub = quantity_tree(c, memo)
            if sub is not None:
                out.fields[k] = sub
        if node.name == "ObjectMeta":
            out.fields["creationTimestamp"] = _ZERO_TIME
        return out
    out = Node(node.kind)
    memo[key] = out
    out.elem = quantity_tree(node.elem, memo) if node.elem is not None else None
    return out


def normalize_quantities(obj: Any, node: Node) -> None:
    """Rewrite every quantity under `node` (a `quantity_tree`) in its canonical form, as
    upstream's decode + encode round trip does: `{"cpu": 1.5}` -> `{"cpu": "1500m"}`. Values
    that do not parse stay (validation reports them)."""
    if node.kind == "model":
        if isinstance(obj, dict):
            for k, child in node.fields.items():
                v = obj.get(k)
                if v is None:
                    if child is _ZERO_TIME and k in obj:
                        del obj[k]  # as decode_walk drops it: Go's zero time is no time
                    continue
                if child.kind == "quantity":
                    c = _canonical(v)
                    if c is not None:
                        obj[k] = c
                else:
                    normalize_quantities(v, child)
    elif node.elem is not None:
        elem = node.elem
        if node.kind == "list" and isinstance(obj, list):
            if elem.kind == "quantity":
                for i, v in enumerate(obj):
                    c = _canonical(v)
                    if c is not None:
                        obj[i] = c
            else:
                for v in obj:
                    normalize_quantities(v, elem)
        elif node.kind == "map" and isinstance(obj, dict):
            if elem.kind == "quantity":
                for k, v in obj.items():
                    c = _canonical(v)
                    if c is not None and c != v:
                        obj[k] = c
            else:
                for v in obj.values():
                    normalize_quantities(v, elem)


def _canonical(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, str | int | float):
        return None
    try:
        return canonical_quantity(v)
    except QuantityError:
        return None


def decode_walk(obj: Any, node: Node, path: str, out: list[str]) -> None:
    """What decoding into the Go struct and encoding again does to a request's object, in one
    walk of the object against the kind's full model tree: fields the types do not declare are
    dropped (their paths go to `out`), and every quantity is written canonically (values that do
    not parse stay; validation reports them). Example: a Pod
    `{"spec": {"foo": 1, "containers": [{"name": "c", "bar": 2, "resources": {"requests":
    {"cpu": 0.5}}}]}}` becomes `{"spec": {"containers": [{"name": "c", "resources": {"requests":
    {"cpu": "500m"}}}]}}`, `out` gets `spec.foo`, `spec.containers[0].bar`. Scalars are looked at
    only where the schema says quantity, and null elements of lists and maps become their Go
    zero value (`_ZERO_SCALARS`); containers are descended once."""
    kind = node.kind
    if kind == "model":
        if not isinstance(obj, dict):
            return
        fields = node.fields
        drop: list[str] | None = None
        zero: list[str] | None = None
        for k, v in obj.items():
            child = fields.get(k)
            if child is None:
                if drop is None:
                    drop = []
                drop.append(k)
                continue
            ck = child.kind
            if ck == "quantity":
                c = _canonical(v)
                if c is not None and c != v:
                    obj[k] = c  # an existing key: the dict's size does not change while iterating
            elif ck in _WALKED and isinstance(v, _CONTAINER_TYPES):
                decode_walk(v, child, f"{path}.{k}" if path else k, out)
            elif v is None and k == "creationTimestamp" and node.name == "ObjectMeta":
                # Go's zero time, the same as none: a template sent back as Go serialised it
                # (kubectl rollout undo, a manifest from `get -o yaml`) is the template without it
                if zero is None:
                    zero = []
                zero.append(k)
        if drop:
            for k in drop:
                del obj[k]
                out.append(f"{path}.{k}" if path else k)
        if zero:
            for k in zero:
                del obj[k]
        return
    elem = node.elem
    if elem is None:
        return
    ek = elem.kind
    if kind == "list" and isinstance(obj, list):
        if ek == "quantity":
            for i, v in enumerate(obj):
                c = _canonical(v)
                if c is not None and c != v:
                    obj[i] = c
        elif ek in _WALKED:
            for i, item in enumerate(obj):
                if isinstance(item, _CONTAINER_TYPES):
                    decode_walk(item, elem, f"{path}[{i}]", out)
                elif item is None and ek == "model":
                    obj[i] = {}  # Go leaves a null element of a struct slice as the zero struct
        elif ek in _ZERO_SCALARS and None in obj:
            fill = _ZERO_SCALARS[ek]
            obj[:] = [fill if v is None else v for v in obj]
    elif kind == "map" and isinstance(obj, dict):
        if ek == "quantity":
            for k, v in obj.items():
                c = _canonical(v)
                if c is not None and c != v:
                    obj[k] = c
        elif ek in _WALKED:
            for k, v in obj.items():
                if isinstance(v, _CONTAINER_TYPES):
                    decode_walk(v, elem, f"{path}[{k}]", out)
                elif v is None and ek == "model":
                    obj[k] = {}  # an existing key: the dict's size does not change while iterating
        elif ek in _ZERO_SCALARS and None in obj.values():
            fill = _ZERO_SCALARS[ek]
            for k, v in obj.items():
                if v is None:
                    obj[k] = fill


_WALKED = frozenset(("model", "list", "map"))
# What a JSON null element of a slice or map of these Go types decodes to: the type's zero value
# (encoding/json ignores a null for a non-pointer element), so `labels: {a: null}` is stored as
# `{a: ""}` and `args: [null]` as `[""]`. A null element of a struct slice is the zero struct,
# written here as `{}` (Go also writes the struct's non-omitempty fields, e.g. a NodeCondition's
# `"type": ""`); a null element of a slice or map of slices or maps stays null, as Go writes nil.
_ZERO_SCALARS: dict[str, object] = {"string": "", "int": 0, "float": 0, "bool": False}
_CONTAINER_TYPES = (dict, list)  # a constant tuple: `isinstance(v, dict | list)` builds a union per call

# int64 fields (everything else typed `int` in the models is an int32 upstream)
_INT64_FIELDS = frozenset({
    "generation", "deletionGracePeriodSeconds", "terminationGracePeriodSeconds", "activeDeadlineSeconds",
    "tolerationSeconds", "observedGeneration", "runAsUser", "runAsGroup", "fsGroup", "gracePeriodSeconds",
    "startingDeadlineSeconds", "seconds", "supplementalGroups", "sizeBytes", "remainingItemCount",
    "expirationSeconds", "uid", "gid", "capacity", "revision",
})


def _named(table: str) -> dict[tuple[str, str], str]:
    """`Go type: Struct.field ...` lines -> {(struct, json field): Go type}."""
    out: dict[tuple[str, str], str] = {}
    for line in table.strip().splitlines():
        go, fields = line.split(":", 1)
        for f in fields.split():
            struct, name = f.split(".")
            out[(struct, name)] = go.strip()
    return out


# Fields whose Go type is a named string type (`type HostPathType string`): the decoder's error
# names it (`of type v1.HostPathType`; a list's elements `[]v1.PersistentVolumeAccessMode`).
# core/v1, meta/v1, apps/v1 and policy/v1 of the kinds with a wire model (k8s.io/api v1.33).
_NAMED_STRINGS = _named("""
v1.Protocol: ContainerPort.protocol ServicePort.protocol EndpointPort.protocol PortStatus.protocol
v1.PullPolicy: Container.imagePullPolicy EphemeralContainer.imagePullPolicy ImageVolumeSource.pullPolicy
v1.TerminationMessagePolicy: Container.terminationMessagePolicy EphemeralContainer.terminationMessagePolicy
v1.ContainerRestartPolicy: Container.restartPolicy EphemeralContainer.restartPolicy
v1.RestartPolicy: PodSpec.restartPolicy
v1.DNSPolicy: PodSpec.dnsPolicy
v1.PreemptionPolicy: PodSpec.preemptionPolicy
v1.URIScheme: HTTPGetAction.scheme
v1.Signal: Lifecycle.stopSignal ContainerStatus.stopSignal
v1.ResourceName: ContainerResizePolicy.resourceName ResourceStatus.name
v1.ResourceResizeRestartPolicy: ContainerResizePolicy.restartPolicy
v1.MountPropagationMode: VolumeMount.mountPropagation
v1.RecursiveReadOnlyMode: VolumeMount.recursiveReadOnly VolumeMountStatus.recursiveReadOnly
v1.Capability: Capabilities.add Capabilities.drop
v1.ProcMountType: SecurityContext.procMount
v1.SeccompProfileType: SeccompProfile.type
v1.AppArmorProfileType: AppArmorProfile.type
v1.PodFSGroupChangePolicy: PodSecurityContext.fsGroupChangePolicy
v1.SupplementalGroupsPolicy: PodSecurityContext.supplementalGroupsPolicy
v1.PodSELinuxChangePolicy: PodSecurityContext.seLinuxChangePolicy
v1.HostPathType: HostPathVolumeSource.type
v1.StorageMedium: EmptyDirVolumeSource.medium
v1.AzureDataDiskCachingMode: AzureDiskVolumeSource.cachingMode
v1.AzureDataDiskKind: AzureDiskVolumeSource.kind
v1.PersistentVolumeAccessMode: PersistentVolumeClaimSpec.accessModes PersistentVolumeSpec.accessModes
  PersistentVolumeClaimStatus.accessModes
v1.PersistentVolumeMode: PersistentVolumeClaimSpec.volumeMode PersistentVolumeSpec.volumeMode
v1.PersistentVolumeReclaimPolicy: PersistentVolumeSpec.persistentVolumeReclaimPolicy
v1.PersistentVolumePhase: PersistentVolumeStatus.phase
v1.PersistentVolumeClaimPhase: PersistentVolumeClaimStatus.phase
v1.PersistentVolumeClaimConditionType: PersistentVolumeClaimCondition.type
v1.PersistentVolumeClaimModifyVolumeStatus: ModifyVolumeStatus.status
v1.ClaimResourceStatus: PersistentVolumeClaimStatus.allocatedResourceStatuses
v1.ConditionStatus: PodCondition.status NodeCondition.status NamespaceCondition.status ComponentCondition.status
  PersistentVolumeClaimCondition.status ReplicationControllerCondition.status DeploymentCondition.status
  ReplicaSetCondition.status StatefulSetCondition.status DaemonSetCondition.status Condition.status
v1.PodConditionType: PodCondition.type
v1.PodPhase: PodStatus.phase
v1.PodQOSClass: PodStatus.qosClass
v1.PodResizeStatus: PodStatus.resize
v1.NodeConditionType: NodeCondition.type
v1.NodeAddressType: NodeAddress.type
v1.NodePhase: NodeStatus.phase
v1.UniqueVolumeName: NodeStatus.volumesInUse AttachedVolume.name
v1.TaintEffect: Taint.effect Toleration.effect
v1.TolerationOperator: Toleration.operator
v1.NodeSelectorOperator: NodeSelectorRequirement.operator
v1.UnsatisfiableConstraintAction: TopologySpreadConstraint.whenUnsatisfiable
v1.NodeInclusionPolicy: TopologySpreadConstraint.nodeAffinityPolicy TopologySpreadConstraint.nodeTaintsPolicy
v1.OSName: PodOS.name
v1.ServiceType: ServiceSpec.type
v1.ServiceAffinity: ServiceSpec.sessionAffinity
v1.ServiceExternalTrafficPolicy: ServiceSpec.externalTrafficPolicy
v1.ServiceInternalTrafficPolicy: ServiceSpec.internalTrafficPolicy
v1.IPFamily: ServiceSpec.ipFamilies
v1.IPFamilyPolicy: ServiceSpec.ipFamilyPolicy
v1.LoadBalancerIPMode: LoadBalancerIngress.ipMode
v1.FinalizerName: NamespaceSpec.finalizers
v1.NamespacePhase: NamespaceStatus.phase
v1.NamespaceConditionType: NamespaceCondition.type
v1.SecretType: Secret.type
v1.ResourceQuotaScope: ResourceQuotaSpec.scopes ScopedResourceSelectorRequirement.scopeName
v1.ScopeSelectorOperator: ScopedResourceSelectorRequirement.operator
v1.LimitType: LimitRangeItem.type
v1.ComponentConditionType: ComponentCondition.type
v1.ReplicationControllerConditionType: ReplicationControllerCondition.type
v1.ResourceID: ResourceHealth.resourceID
v1.ResourceHealthStatus: ResourceHealth.health
types.UID: ObjectMeta.uid OwnerReference.uid ObjectReference.uid Preconditions.uid ConfigMapNodeConfigSource.uid
v1.LabelSelectorOperator: LabelSelectorRequirement.operator
v1.ManagedFieldsOperationType: ManagedFieldsEntry.operation
v1.DeletionPropagation: DeleteOptions.propagationPolicy
v1.DeploymentStrategyType: DeploymentStrategy.type
v1.DeploymentConditionType: DeploymentCondition.type
v1.ReplicaSetConditionType: ReplicaSetCondition.type
v1.PodManagementPolicyType: StatefulSetSpec.podManagementPolicy
v1.StatefulSetUpdateStrategyType: StatefulSetUpdateStrategy.type
v1.PersistentVolumeClaimRetentionPolicyType: StatefulSetPersistentVolumeClaimRetentionPolicy.whenDeleted
  StatefulSetPersistentVolumeClaimRetentionPolicy.whenScaled
v1.StatefulSetConditionType: StatefulSetCondition.type
v1.DaemonSetUpdateStrategyType: DaemonSetUpdateStrategy.type
v1.DaemonSetConditionType: DaemonSetCondition.type
v1.UnhealthyPodEvictionPolicyType: PodDisruptionBudgetSpec.unhealthyPodEvictionPolicy
[]uint8: Secret.data ConfigMap.binaryData
""".replace("\n  ", " "))
# a map field's own Go type where it is not map[string]<element> (a ResourceList is named below)
_NAMED_MAPS = {
    ("PersistentVolumeClaimStatus", "allocatedResourceStatuses"): "map[v1.ResourceName]v1.ClaimResourceStatus",
    ("Secret", "data"): "map[string][]uint8",
    ("ConfigMap", "binaryData"): "map[string][]uint8",
}


def _go_type(node: Node, field_name: str, struct: str = "") -> str:
    """The Go type of field `field_name` of Go struct `struct`, as the decoder names it.
    Example: a list of Container models -> `[]v1.Container`; `replicas` -> `int32`;
    HostPathVolumeSource's `type` -> `v1.HostPathType`; a map of quantities -> `v1.ResourceList`."""
    kind = node.kind
    if kind == "model":
        return f"v1.{node.name}"
    if kind == "list":
        return "[]" + (_go_type(node.elem, field_name, struct) if node.elem else "interface {}")
    if kind == "map":
        whole = _NAMED_MAPS.get((struct, field_name))
        if whole is not None:
            return whole
        if node.elem is not None and node.elem.kind == "quantity":
            return "v1.ResourceList"
        return "map[string]" + (_go_type(node.elem, field_name, struct) if node.elem else "interface {}")
    if kind == "int":
        return "int64" if field_name in _INT64_FIELDS else "int32"
    if kind == "string":
        return _NAMED_STRINGS.get((struct, field_name), "string")
    return {"float": "float64", "bool": "bool"}.get(kind, "interface {}")


def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _mismatch(v: Any, node: Node, field_name: str = "") -> str | None:
    """The JSON value's description when it cannot be decoded into `node`, else None.
    Example: 1.5 into an int -> "number 1.5" (Go reports the literal for failed integer parses);
    2147483648 into an int32 -> "number 2147483648" (Go's decoder refuses out-of-range integers)."""
    k = node.kind
    if v is None or k == "any":
        return None
    if k == "string":
        return None if isinstance(v, str) else _json_kind(v)
    if k == "bool":
        return None if isinstance(v, bool) else _json_kind(v)
    if k == "int":
        if isinstance(v, bool) or not isinstance(v, int | float):
            return _json_kind(v)
        if isinstance(v, float):
            return f"number {v!r}"
        lo, hi = _INT_RANGES[_go_type(node, field_name)]
        return None if lo <= v <= hi else f"number {v}"
    if k == "float":
        return None if isinstance(v, int | float) and not isinstance(v, bool) else _json_kind(v)
    if k == "model" or k == "map":
        return None if isinstance(v, dict) else _json_kind(v)
    if k == "list":
        return None if isinstance(v, list) else _json_kind(v)
    return None


# scalar kinds every value of exactly this Python type decodes into (first_type_error's fast path)
_PLAIN: dict[str, type] = {"string": str, "bool": bool}


def first_type_error(obj: Any, root: Node) -> str | None:
    """The error Go's JSON decoder reports for the first value of the wrong JSON type, e.g.
    `json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string`
    (struct = the innermost Go struct; the field path drops list indices and map keys)."""

    def walk(v: Any, node: Node, struct: str, path: str, field_name: str) -> str | None:
        bad = _mismatch(v, node, field_name)
        if bad is not None:
            return (f"json: cannot unmarshal {bad} into Go struct field {struct}.{path} of type "
                    f"{_go_type(node, field_name, struct)}")
        if node.kind == "model" and isinstance(v, dict):
            fields = node.fields
            for k, child_v in v.items():
                child = fields.get(k)
                # null decodes into anything; a plain string or bool value of a string or bool
                # field (most leaves) is fine without a call
                if child is None or child_v is None or type(child_v) is _PLAIN.get(child.kind):
                    continue
                if child.kind == "any":
                    continue
                err = walk(child_v, child, node.name, f"{path}.{k}" if path else k, k)
                if err:
                    return err
        elif node.kind in ("list", "map") and node.elem is not None and node.elem.kind != "any":
            items = v if isinstance(v, list) else list(v.values()) if isinstance(v, dict) else []
            plain = _PLAIN.get(node.elem.kind)
            for item in items:
                if item is None or type(item) is plain:
                    continue
                err = walk(item, node.elem, struct, path, field_name)
                if err:
                    return err
        return None

    if not isinstance(obj, dict):
        return None
    return walk(obj, root, root.name, "", "")


def kind_models() -> dict[tuple[str, str], type[BaseModel]]:
    """(group, kind) -> wire model for the kinds with a schema. The model modules are imported
    here, by the first request that decodes a body, not by the server's start (building their
    ~200 pydantic classes is a good part of the import time)."""
    from minik3s.api import (
        admissionregistration,
        apiextensions,
        apiregistration,
        apps,
        autoscaling,
        certificates,
        coordination,
        core,
        flowcontrol,
        networking,
        node,
        policy,
        rbac,
        scheduling,
        storage,
    )

    return {
        ("", "Pod"): core.Pod,
        ("", "Node"): core.Node,
        ("", "Namespace"): core.Namespace,
        ("", "ConfigMap"): core.ConfigMap,
        ("", "Secret"): core.Secret,
        ("", "Service"): core.Service,
        ("", "ServiceAccount"): core.ServiceAccount,
        ("", "Event"): core.Event,
        ("", "Binding"): core.Binding,
        **{("", k): getattr(core, k) for k in ("PersistentVolume", "PersistentVolumeClaim", "Endpoints",
                                               "ReplicationController", "PodTemplate", "ResourceQuota",
                                               "LimitRange")},
        ("events.k8s.io", "Event"): core.EventsV1Event,
        ("apps", "Deployment"): apps.Deployment,
        ("apps", "ReplicaSet"): apps.ReplicaSet,
        ("apps", "StatefulSet"): apps.StatefulSet,
        ("apps", "DaemonSet"): apps.DaemonSet,
        ("apps", "ControllerRevision"): apps.ControllerRevision,
        ("policy", "PodDisruptionBudget"): policy.PodDisruptionBudget,
        ("policy", "Eviction"): policy.Eviction,
        ("scheduling.k8s.io", "PriorityClass"): scheduling.PriorityClass,
        ("node.k8s.io", "RuntimeClass"): node.RuntimeClass,
        ("autoscaling", "HorizontalPodAutoscaler"): autoscaling.HorizontalPodAutoscaler,
        ("scheduling.k8s.io", "Workload"): scheduling.Workload,
        ("coordination.k8s.io", "Lease"): coordination.Lease,
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"): flowcontrol.FlowSchema,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): flowcontrol.PriorityLevelConfiguration,
        ("apiextensions.k8s.io", "CustomResourceDefinition"): apiextensions.CustomResourceDefinition,
        **{("rbac.authorization.k8s.io", k): getattr(rbac, k)
           for k in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
        **{("networking.k8s.io", k): getattr(networking, k) for k in ("Ingress", "IngressClass", "NetworkPolicy",
                                                                        "ServiceCIDR", "IPAddress")},
        **{("storage.k8s.io", k): getattr(storage, k)
           for k in ("StorageClass", "CSIDriver", "CSINode", "CSIStorageCapacity", "VolumeAttachment")},
        ("certificates.k8s.io", "CertificateSigningRequest"): certificates.CertificateSigningRequest,
        **{("admissionregistration.k8s.io", k): getattr(admissionregistration, k)
           for k in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                     "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")},
        ("apiregistration.k8s.io", "APIService"): apiregistration.APIService,
    }


def _ints(struct: str, names: str, **children: Node) -> Node:
    """A partial struct node: the listed integer fields and `children`; other fields unchecked."""
    node = Node("model", name=struct)
    for n in names.split():
        node.fields[n] = _SCALARS[int]
    node.fields.update(children)
    return node


def _type_only_nodes(cache: dict[type, Node]) -> dict[tuple[str, str], Node]:
    """Decode-time type trees for built-in kinds without a full wire model (batch/v1): their
    integer fields (int32/int64 ranges, upstream's types) and the pod template. Only type errors
    and quantities are read from these trees, never unknown fields (they are partial)."""
    from minik3s.api import core

    tmpl = model_node(core.PodTemplateSpec, cache)
    job_spec = _ints("JobSpec", "parallelism completions activeDeadlineSeconds backoffLimit backoffLimitPerIndex "
                     "maxFailedIndexes ttlSecondsAfterFinished", template=tmpl)
    job_status = _ints("JobStatus", "active succeeded failed terminating ready")
    job_tmpl = _ints("JobTemplateSpec", "", spec=job_spec)
    top = {"metadata": _ANY}
    return {
        ("batch", "Job"): _ints("Job", "", spec=job_spec, status=job_status, **top),
        ("batch", "CronJob"): _ints("CronJob", "", **top, spec=_ints(
            "CronJobSpec", "startingDeadlineSeconds successfulJobsHistoryLimit failedJobsHistoryLimit",
            jobTemplate=job_tmpl)),
    }


_SCALE = _ints("Scale", "", metadata=Node("model", name="ObjectMeta", fields={}), spec=_ints("ScaleSpec", "replicas"))


def scale_type_error(obj: Any) -> str | None:
    """Go's decoding error for an autoscaling/v1 Scale body (`spec.replicas` is an int32)."""
    return first_type_error(obj, _SCALE)


def delete_options_type_error(obj: Any) -> str | None:
    """Go's decoding error for a meta/v1 DeleteOptions body, e.g. `{"preconditions": "x"}` ->
    `json: cannot unmarshal string into Go struct field DeleteOptions.preconditions of type
    v1.Preconditions`."""
    return first_type_error(obj, _DELETE_OPTIONS)


_DELETE_OPTIONS = _ints("DeleteOptions", "gracePeriodSeconds", kind=_SCALARS[str], apiVersion=_SCALARS[str],
                 preconditions=Node("model", name="Preconditions",
                                    fields={"uid": _SCALARS[str], "resourceVersion": _SCALARS[str]}),
                 orphanDependents=_SCALARS[bool], propagationPolicy=_SCALARS[str],
                 dryRun=Node("list", elem=_SCALARS[str]), ignoreStoreReadErrorWithClusterBreakingPotential=
                 _SCALARS[bool])


_EVICTION = Node("model", name="Eviction", fields={
    "apiVersion": _SCALARS[str], "kind": _SCALARS[str], "metadata": Node("model", name="ObjectMeta", fields={}),
    "deleteOptions": _DELETE_OPTIONS})


def eviction_type_error(obj: Any) -> str | None:
    """Go's decoding error for a policy/v1 Eviction body, e.g. `{"deleteOptions":
    {"gracePeriodSeconds": "x"}}` -> `json: cannot unmarshal string into Go struct field
    DeleteOptions.deleteOptions.gracePeriodSeconds of type int64`."""
    return first_type_error(obj, _EVICTION)


def _json_schema_props() -> Node:
    """apiextensions/v1 JSONSchemaProps, recursive (a CRD version's openAPIV3Schema): its typed
    keywords; `items`, `additionalProperties`, `dependencies` (schema-or-array/bool unions) and the
    value keywords (`default`, `enum` items, `example`) are not checked."""
    props = Node("model", name="JSONSchemaProps")
    of = {"list": Node("list", elem=props), "map": Node("map", elem=props)}
    strings = Node("list", elem=_SCALARS[str])
    props.fields.update({name: _SCALARS[str] for name in (
        "id", "$schema", "$ref", "description", "type", "format", "title", "pattern",
        "x-kubernetes-list-type", "x-kubernetes-map-type")})
    props.fields.update({name: _SCALARS[float] for name in ("maximum", "minimum", "multipleOf")})
    props.fields.update({name: _SCALARS[bool] for name in (
        "exclusiveMaximum", "exclusiveMinimum", "uniqueItems", "nullable", "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string")})
    props.fields.update({name: _SCALARS[int] for name in (
        "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties")})
    props.fields.update({"required": strings, "x-kubernetes-list-map-keys": strings, "enum": Node("list", elem=_ANY),
                         "properties": of["map"], "patternProperties": of["map"], "definitions": of["map"],
                         "allOf": of["list"], "oneOf": of["list"], "anyOf": of["list"], "not": props,
                         "externalDocs": Node("model", name="ExternalDocumentation",
                                              fields={"description": _SCALARS[str], "url": _SCALARS[str]}),
                         "x-kubernetes-validations": Node("list", elem=Node("model", name="ValidationRule", fields={
                             "rule": _SCALARS[str], "message": _SCALARS[str], "messageExpression": _SCALARS[str],
                             "reason": _SCALARS[str], "fieldPath": _SCALARS[str],
                             "optionalOldSelf": _SCALARS[bool]}))})
    return props


_JSON_SCHEMA_PROPS = _json_schema_props()


def json_schema_props_type_error(schema: Any, path: str) -> str | None:
    """Go's decoding error for a JSONSchemaProps at `path` of its object, e.g. `{"maximum": "x"}`
    at spec.versions.schema.openAPIV3Schema.properties -> `json: cannot unmarshal string into Go
    struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.maximum of type
    float64` (the struct is the innermost, the path the JSON names without indices or keys)."""
    err = first_type_error(schema, _JSON_SCHEMA_PROPS)
    if err is None:
        return None
    head, sep, rest = err.partition(" into Go struct field ")
    struct, _, field_and_type = rest.partition(".")
    return f"{head}{sep}{struct}.{path}.{field_and_type}" if sep else err


_UNSET = Node("unset")


# decode's spec memo (SchemaIndex._decode_spec): how many specs, how large (their JSON)
DECODE_MEMO_SIZE = 128
DECODE_MEMO_MAX_BYTES = 16 * 1024


class SchemaIndex:
    """Compiled schema trees per kind (built lazily; one instance per app)."""

    def __init__(self) -> None:
        self._models = kind_models()
        self._cache: dict[type, Node] = {}
        self._nodes: dict[tuple[str, str], Node] = {}
        self._type_only: dict[tuple[str, str], Node] | None = None
        self._quantities: dict[tuple[str, str], Node | None] = {}
        self._qmemo: dict[int, Node | None] = {}
        # decode's memo of specs the walk leaves as they are (`_decode_spec`)
        self._without_spec: dict[tuple[str, str], Node] = {}
        self._unchanged: SecondSightLRU[tuple[str, str, bytes], Any] = SecondSightLRU(DECODE_MEMO_SIZE)

    def node(self, group: str, kind: str) -> Node | None:
        key = (group, kind)
        n = self._nodes.get(key)
        if n is None:
            model = self._models.get(key)
            if model is None:
                return None
            n = model_node(model, self._cache)
            self._nodes[key] = n
        return n

    def type_error(self, group: str, kind: str, obj: JsonDict) -> str | None:
        n = self.node(group, kind)
        if n is None:
            if self._type_only is None:
                self._type_only = _type_only_nodes(self._cache)
            n = self._type_only.get((group, kind))
        return None if n is None else first_type_error(obj, n)

    def decode(self, group: str, kind: str, obj: JsonDict) -> list[str]:
        """Unknown fields dropped and quantities canonical (`decode_walk`) for a kind with a
        wire model; for a kind with only a type tree (`_type_only_nodes`), its quantities
        canonical. The dropped paths, sorted (upstream sorts them)."""
        n = self.node(group, kind)
        out: list[str] = []
        if n is not None:
            spec = obj.get("spec")
            child = n.fields.get("spec")
            if type(spec) is dict and child is not None and child.kind == "model":
                self._decode_spec(group, kind, spec, child, out)
                n = self._node_without_spec(group, kind, n)
            decode_walk(obj, n, "", out)
            out.sort()
            return out
        key = (group, kind)
        q = self._quantities.get(key, _UNSET)
        if q is _UNSET:
            if self._type_only is None:
                self._type_only = _type_only_nodes(self._cache)
            t = self._type_only.get(key)
            q = quantity_tree(t, self._qmemo) if t is not None else None
            self._quantities[key] = q
        if q is not None:
            normalize_quantities(obj, q)  # a partial tree: it may not drop what it does not list
        return out

    def _decode_spec(self, group: str, kind: str, spec: JsonDict, node: Node, out: list[str]) -> None:
        """`decode_walk` of the top-level `spec` (dropped paths to `out`), skipped for a spec
        known to decode to itself (no unknown field, every quantity canonical): memoised per
        kind on the spec's JSON and value, a hit needs both to equal a spec the walk left
        unchanged (the bytes tell 1, 1.0 and True apart; the equality a tuple from a list, NaN
        from null). A spec enters on its second sighting. At most `DECODE_MEMO_SIZE` specs, each under `DECODE_MEMO_MAX_BYTES`, are
        remembered. Example: the pods of one template, already canonical, walk their spec once."""
        data = exact_json(spec, DECODE_MEMO_MAX_BYTES)
        if data is None:
            decode_walk(spec, node, "spec", out)
            return
        # a pod's token volume name is unique to it: keyed by a placeholder (memo.without_token_volume_name)
        key_data, token_name = without_token_volume_name(spec, data) if kind == "Pod" and not group else (data, "")
        key = (group, kind, key_data)
        memo = self._unchanged
        plain = memo.get(key)
        if plain is not None:
            if same_but_token_name(spec, plain, token_name) if token_name else spec == plain:
                return
        elif memo.first_sighting(key):
            # first sighting: walked, only remembered as seen (a stream of specs unlike each
            # other pays the JSON encoding alone)
            decode_walk(spec, node, "spec", out)
            return
        before = len(out)
        decode_walk(spec, node, "spec", out)
        if plain is None and len(out) == before and exact_json(spec, DECODE_MEMO_MAX_BYTES) == data:
            memo.put(key, orjson.loads(key_data))

    def _node_without_spec(self, group: str, kind: str, n: Node) -> Node:
        """`n` with its `spec` field kept but not descended (the spec was decoded apart)."""
        key = (group, kind)
        rest = self._without_spec.get(key)
        if rest is None:
            rest = Node(n.kind, fields={**n.fields, "spec": _ANY}, elem=n.elem, name=n.name)
            self._without_spec[key] = rest
        return rest

    def unknown_fields(self, group: str, kind: str, obj: JsonDict) -> list[str]:
        n = self.node(group, kind)
        if n is None:
            return []
        out: list[str] = []
        walk_unknown(obj, n, "", out)
        out.sort()
        return out
