"""The declarative resources table (layer L2).

One entry per served resource drives routing, discovery, validation and field selectors in
the apiserver, and path building in the client. Adding a built-in resource is one entry here
(plus, optionally, a strategy in `apiserver/strategies`). CustomResourceDefinitions add
entries at run time through `ResourceRegistry.add`.

Storage keys: `<group or "core">/<resource>/<namespace>/<name>` for namespaced objects and
`<group or "core">/<resource>//<name>` for cluster-scoped ones, so one prefix scan lists a
resource (all namespaces) or a namespace of it, sorted by namespace then name as etcd does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from minik3s.api.types import JsonDict

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def dig(obj: JsonDict, path: str) -> Any:
    """The value at a dotted path (`spec.replicas`), None where a step is missing or not a map."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _as_field_value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


FieldGetter = Callable[[JsonDict], str]


def path_getter(path: str) -> FieldGetter:
    return lambda obj: _as_field_value(dig(obj, path))


def _pod_ip(obj: JsonDict) -> str:
    status = obj.get("status") or {}
    ips = status.get("podIPs") or []
    if ips and isinstance(ips[0], dict):
        return _as_field_value(ips[0].get("ip"))
    return _as_field_value(status.get("podIP"))


def _event_source(obj: JsonDict) -> str:
    src = (obj.get("source") or {}).get("component")
    return _as_field_value(src or obj.get("reportingController") or obj.get("reportingComponent"))


POD_FIELDS: dict[str, FieldGetter] = {
    "spec.nodeName": path_getter("spec.nodeName"),
    "spec.host": path_getter("spec.nodeName"),
    "spec.restartPolicy": path_getter("spec.restartPolicy"),
    "spec.schedulerName": path_getter("spec.schedulerName"),
    "spec.serviceAccountName": path_getter("spec.serviceAccountName"),
    "spec.hostNetwork": lambda o: "true" if (o.get("spec") or {}).get("hostNetwork") else "false",
    "status.phase": path_getter("status.phase"),
    "status.podIP": _pod_ip,
    "status.nominatedNodeName": path_getter("status.nominatedNodeName"),
}

EVENT_FIELDS: dict[str, FieldGetter] = {
    **{f"involvedObject.{k}": path_getter(f"involvedObject.{k}") for k in (
        "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
    "reason": path_getter("reason"),
    "reportingComponent": path_getter("reportingComponent"),
    "source": _event_source,
    "type": path_getter("type"),
}

# events.k8s.io/v1 serves the core/v1 Events (one stored resource, as upstream's one internal
# type): its field labels use v1's names and read the stored (core/v1) object
EVENTS_V1_FIELDS: dict[str, FieldGetter] = {
    **{f"regarding.{k}": path_getter(f"involvedObject.{k}") for k in (
        "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
    "reason": path_getter("reason"),
    "reportingController": path_getter("reportingComponent"),
    "type": path_getter("type"),
}


@dataclass(slots=True)
class ResourceInfo:
    """One served resource. `resource` is the plural (`pods`), `kind` the object kind (`Pod`)."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()  # "status", "scale", "binding", "eviction"
    singular: str = ""
    # extra field-selector labels beyond metadata.name / metadata.namespace
    field_labels: dict[str, FieldGetter] = field(default_factory=dict)
    # True for built-in kinds: strategic merge patch is allowed (CRDs reject it with 415)
    builtin: bool = True
    has_spec: bool = True
    # status subresource: the main resource ignores status changes and vice versa
    # (only when "status" is in subresources)
    crd_schema: JsonDict | None = None  # openAPIV3Schema for custom resources
    printer_columns: tuple[JsonDict, ...] = ()  # CRD additionalPrinterColumns
    selectable_fields: tuple[str, ...] = ()  # CRD selectableFields jsonPaths (without leading dot)
    # CRD subresources.scale: (specReplicasPath, statusReplicasPath, labelSelectorPath), the
    # paths without their leading dot ("" when the CRD names no selector path); None for
    # built-in kinds (spec.replicas, status.replicas, spec.selector)
    scale_paths: tuple[str, str, str] | None = None
    # create-only review resources (access reviews, whoami): answered, never stored
    virtual: bool = False
    # a version served by conversion: objects are stored at `storage_version` (the kind's
    # strategy converts on the way in and out); "" means this version is the stored one
    storage_version: str = ""
    # the group of the stored version when it is another group's resource (events.k8s.io/v1
    # Events are core/v1 Events); None: this resource's own group
    storage_group: str | None = None

    def __post_init__(self) -> None:
        if not self.singular:
            self.singular = self.kind.lower()
        for path in self.selectable_fields:
            self.field_labels.setdefault(path, path_getter(path))

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        return self.group_version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def stored_group(self) -> str:
        return self.group if self.storage_group is None else self.storage_group

    @property
    def converted(self) -> bool:
        """Served through conversion from another (stored) version of the same resource."""
        return bool(self.storage_version) and (self.storage_version != self.version
                                               or self.stored_group != self.group)

    @property
    def qualified(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def key_prefix(self) -> str:
        return f"{self.group or 'core'}/{self.resource}/"

    def key(self, namespace: str | None, name: str) -> str:
        return f"{self.key_prefix}{namespace or ''}/{name}"

    def list_prefix(self, namespace: str | None) -> str:
        if namespace and self.namespaced:
            return f"{self.key_prefix}{namespace}/"
        return self.key_prefix

    def field_getter(self, label: str) -> FieldGetter | None:
        if label == "metadata.name":
            return path_getter("metadata.name")
        if label == "metadata.namespace" and self.namespaced:
            return path_getter("metadata.namespace")
        return self.field_labels.get(label)

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.resource}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


def builtin_resources() -> list[ResourceInfo]:
    """The built-in resources minik3s serves (a fresh list per call: no global mutable state)."""
    R = ResourceInfo
    return [
        # no deletecollection: upstream's namespace REST storage does not offer it (405)
        R("", "v1", "namespaces", "Namespace", False, ("ns",), subresources=("status", "finalize"),
          verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
          field_labels={"status.phase": path_getter("status.phase")}),
        R("", "v1", "nodes", "Node", False, ("no",), subresources=("status",),
          field_labels={"spec.unschedulable": lambda o: "true" if (o.get("spec") or {}).get("unschedulable") else "false"}),
        R("", "v1", "pods", "Pod", True, ("po",), ("all",), subresources=("status", "binding", "eviction"),
          field_labels=dict(POD_FIELDS)),
        R("", "v1", "bindings", "Binding", True, verbs=("create",), has_spec=False),
        R("", "v1", "events", "Event", True, ("ev",), has_spec=False, field_labels=dict(EVENT_FIELDS)),
        R("", "v1", "configmaps", "ConfigMap", True, ("cm",), has_spec=False),
        R("", "v1", "secrets", "Secret", True, has_spec=False,
          field_labels={"type": path_getter("type")}),
        # service SelectableFields (pkg/registry/core/service/strategy.go)
        R("", "v1", "services", "Service", True, ("svc",), ("all",), subresources=("status",),
          field_labels={"spec.clusterIP": path_getter("spec.clusterIP"), "spec.type": path_getter("spec.type")}),
        R("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",), has_spec=False),
        R("", "v1", "endpoints", "Endpoints", True, ("ep",), has_spec=False),
        R("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), subresources=("status",)),
        R("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",), subresources=("status",)),
        R("", "v1", "replicationcontrollers", "ReplicationController", True, ("rc",), ("all",),
          subresources=("status", "scale"), field_labels={"status.replicas": path_getter("status.replicas")}),
        R("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",), subresources=("status",)),
        R("", "v1", "limitranges", "LimitRange", True, ("limits",)),
        R("", "v1", "podtemplates", "PodTemplate", True, has_spec=False),
        # probed on each read, never stored (apiserver/handlers/component_status.py)
        R("", "v1", "componentstatuses", "ComponentStatus", False, ("cs",), verbs=("get", "list"), has_spec=False),
        R("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, has_spec=False),
        R("apps", "v1", "deployments", "Deployment", True, ("deploy",), ("all",), subresources=("status", "scale")),
        R("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), ("all",), subresources=("status", "scale"),
          field_labels={"status.replicas": path_getter("status.replicas")}),
        R("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), ("all",), subresources=("status", "scale")),
        R("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), ("all",), subresources=("status",)),
        R("apps", "v1", "controllerrevisions", "ControllerRevision", True, has_spec=False),
        R("batch", "v1", "jobs", "Job", True, (), ("all",), subresources=("status",),
          field_labels={"status.successful": path_getter("status.succeeded")}),
        R("batch", "v1", "cronjobs", "CronJob", True, ("cj",), ("all",), subresources=("status",)),
        R("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",), has_spec=False),
        R("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False, has_spec=False),
        # v1.35 alpha (KEP-4671 gang scheduling); v1 stays the group's preferred version
        R("scheduling.k8s.io", "v1alpha1", "workloads", "Workload", True),
        R("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), ("all",),
          subresources=("status",)),
        R("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), subresources=("status",)),
        R("coordination.k8s.io", "v1", "leases", "Lease", True),
        R("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False,
          verbs=("create",), virtual=True),
        R("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False,
          verbs=("create",), virtual=True),
        R("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False,
          verbs=("create",), virtual=True),
        R("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True,
          verbs=("create",), virtual=True),
        R("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False,
          verbs=("create",), virtual=True, has_spec=False),
        R("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=("create",), virtual=True),
        R("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
          ("crd", "crds"), subresources=("status",)),
        R("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False, has_spec=False),
        R("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, has_spec=False),
        R("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, has_spec=False),
        R("rbac.authorization.k8s.io", "v1", "roles", "Role", True, has_spec=False),
        R("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False),
        R("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",), subresources=("status",)),
        R("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
        R("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", False, subresources=("status",)),
        R("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "FlowSchema", False, subresources=("status",)),
        R("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "PriorityLevelConfiguration", False,
          subresources=("status",)),
        R("networking.k8s.io", "v1", "ipaddresses", "IPAddress", False),
        R("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
        R("storage.k8s.io", "v1", "csinodes", "CSINode", False),
        R("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True, has_spec=False),
        R("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",), has_spec=False),
        R("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, subresources=("status",)),
        R("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", False,
          ("csr",), subresources=("status",),
          field_labels={"spec.signerName": path_getter("spec.signerName")}),
        R("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
          False, categories=("api-extensions",), has_spec=False),
        R("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", False,
          categories=("api-extensions",), subresources=("status",)),
        R("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
          "ValidatingAdmissionPolicyBinding", False, categories=("api-extensions",)),
        R("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
          "ValidatingWebhookConfiguration", False, categories=("api-extensions",), has_spec=False),
        R("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, categories=("api-extensions",),
          subresources=("status",)),
    ]


def converted_resources() -> list[ResourceInfo]:
    """Further versions of built-in resources, served by converting the stored objects (not
    in `builtin_resources`, which lists each stored resource once). The registry lists them
    after the stored version, so the stored one stays the group's preferred version."""
    return [
        # autoscaling/v1 HPAs: minik3s.api.autoscaling_v1, through the HPA strategy's hooks
        ResourceInfo("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",),
                     ("all",), subresources=("status",), storage_version="v2"),
        # events.k8s.io/v1 Events are the core/v1 Events (upstream stores both as one internal
        # type under one key): apiserver.strategies.generic.EventsV1Strategy converts
        ResourceInfo("events.k8s.io", "v1", "events", "Event", True, (), has_spec=False,
                     field_labels=dict(EVENTS_V1_FIELDS), storage_version="v1", storage_group=""),
    ]


class ResourceRegistry:
    """Lookup of served resources by (group, version, resource), by kind, and by short name.

    Mutable only through `add`/`remove` (CRDs); readers see a consistent dict per call.
    """

    def __init__(self, resources: Iterable[ResourceInfo] | None = None) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceInfo] = {}
        self._by_gr: dict[tuple[str, str], ResourceInfo] = {}
        # (group, version) -> how many resources it serves: the per-request "is this path served" test
        self._gv_count: dict[tuple[str, str], int] = {}
        self._listeners: list[Callable[[], None]] = []
        for info in resources if resources is not None else [*builtin_resources(), *converted_resources()]:
            self.add(info, notify=False)

    def add(self, info: ResourceInfo, *, notify: bool = True) -> None:
        gvr = (info.group, info.version, info.resource)
        if gvr not in self._by_gvr:
            self._gv_count[(info.group, info.version)] = self._gv_count.get((info.group, info.version), 0) + 1
        self._by_gvr[gvr] = info
        if not info.converted or (info.group, info.resource) not in self._by_gr:
            self._by_gr[(info.group, info.resource)] = info
        if notify:
            for cb in list(self._listeners):
                cb()

    def remove(self, group: str, version: str, resource: str) -> None:
        if self._by_gvr.pop((group, version, resource), None) is not None:
            left = self._gv_count.get((group, version), 1) - 1
            if left > 0:
                self._gv_count[(group, version)] = left
            else:
                self._gv_count.pop((group, version), None)
        self._by_gr.pop((group, resource), None)
        for (g, _v, r), info in self._by_gvr.items():
            if g == group and r == resource and ((g, r) not in self._by_gr or not info.converted):
                self._by_gr[(g, r)] = info
        for cb in list(self._listeners):
            cb()

    def on_change(self, cb: Callable[[], None]) -> None:
        self._listeners.append(cb)

    def get(self, group: str, version: str, resource: str) -> ResourceInfo | None:
        return self._by_gvr.get((group, version, resource))

    def get_resource(self, group: str, resource: str) -> ResourceInfo | None:
        """Any served version of group/resource (storage keys do not depend on the version)."""
        return self._by_gr.get((group, resource))

    def all(self) -> list[ResourceInfo]:
        return list(self._by_gvr.values())

    def groups(self) -> dict[str, list[str]]:
        """group -> versions (preferred first), in a stable order ('' is the core group)."""
        out: dict[str, list[str]] = {}
        for (g, v, _r) in self._by_gvr:
            vs = out.setdefault(g, [])
            if v not in vs:
                vs.append(v)
        return out

    def serves_group(self, group: str) -> bool:
        """Whether any version of `group` is served (a scan of the served group versions)."""
        return any(g == group for g, _v in self._gv_count)

    def serves_group_version(self, group: str, version: str) -> bool:
        """Whether any resource is served at group/version (O(1); `for_group_version` lists them)."""
        return (group, version) in self._gv_count

    def for_group_version(self, group: str, version: str) -> list[ResourceInfo]:
        return [i for (g, v, _r), i in self._by_gvr.items() if g == group and v == version]

    def by_kind(self, api_version: str, kind: str) -> ResourceInfo | None:
        group, _, version = api_version.rpartition("/")
        for info in self._by_gvr.values():
            if info.kind == kind and info.group == group and info.version == version:
                return info
        return None

    def lookup(self, name: str) -> ResourceInfo | None:
        """Resolve what a user typed (`po`, `pods`, `pod`, `deployments.apps`, `Pod`)."""
        name_l = name.lower()
        res, _, grp = name_l.partition(".")
        for info in self._by_gvr.values():
            if grp and info.group != grp:
                continue
            if res in (info.resource, info.singular, info.kind.lower()) or res in info.short_names:
                if info.group == "events.k8s.io" and not grp:
                    continue  # prefer core/v1 events, as kubectl does
                return info
        return None


def _builtin_index() -> dict[str, ResourceInfo]:
    return {r.qualified: r for r in builtin_resources()}


_IDX = _builtin_index()
# Read-only descriptors components use to address built-in resources through the client.
NAMESPACES = _IDX["namespaces"]
NODES = _IDX["nodes"]
PODS = _IDX["pods"]
EVENTS = _IDX["events"]
CONFIGMAPS = _IDX["configmaps"]
SECRETS = _IDX["secrets"]
SERVICES = _IDX["services"]
SERVICEACCOUNTS = _IDX["serviceaccounts"]
ENDPOINTS = _IDX["endpoints"]
ENDPOINTSLICES = _IDX["endpointslices.discovery.k8s.io"]
JOBS = _IDX["jobs.batch"]
DEPLOYMENTS = _IDX["deployments.apps"]
REPLICASETS = _IDX["replicasets.apps"]
PRIORITYCLASSES = _IDX["priorityclasses.scheduling.k8s.io"]
RUNTIMECLASSES = _IDX["runtimeclasses.node.k8s.io"]
SERVICECIDRS = _IDX["servicecidrs.networking.k8s.io"]
IPADDRESSES = _IDX["ipaddresses.networking.k8s.io"]
FLOWSCHEMAS = _IDX["flowschemas.flowcontrol.apiserver.k8s.io"]
PRIORITYLEVELS = _IDX["prioritylevelconfigurations.flowcontrol.apiserver.k8s.io"]
WORKLOADS = _IDX["workloads.scheduling.k8s.io"]
PODDISRUPTIONBUDGETS = _IDX["poddisruptionbudgets.policy"]
LEASES = _IDX["leases.coordination.k8s.io"]
HPAS = _IDX["horizontalpodautoscalers.autoscaling"]
CRDS = _IDX["customresourcedefinitions.apiextensions.k8s.io"]
CLUSTERROLES = _IDX["clusterroles.rbac.authorization.k8s.io"]
CLUSTERROLEBINDINGS = _IDX["clusterrolebindings.rbac.authorization.k8s.io"]
ROLES = _IDX["roles.rbac.authorization.k8s.io"]
ROLEBINDINGS = _IDX["rolebindings.rbac.authorization.k8s.io"]
APISERVICES = _IDX["apiservices.apiregistration.k8s.io"]
STATEFULSETS = _IDX["statefulsets.apps"]
DAEMONSETS = _IDX["daemonsets.apps"]
CONTROLLERREVISIONS = _IDX["controllerrevisions.apps"]
PERSISTENTVOLUMECLAIMS = _IDX["persistentvolumeclaims"]
PERSISTENTVOLUMES = _IDX["persistentvolumes"]
STORAGECLASSES = _IDX["storageclasses.storage.k8s.io"]
CSINODES = _IDX["csinodes.storage.k8s.io"]
CSIDRIVERS = _IDX["csidrivers.storage.k8s.io"]
CSISTORAGECAPACITIES = _IDX["csistoragecapacities.storage.k8s.io"]
VOLUMEATTACHMENTS = _IDX["volumeattachments.storage.k8s.io"]
REPLICATIONCONTROLLERS = _IDX["replicationcontrollers"]
CRONJOBS = _IDX["cronjobs.batch"]
CERTIFICATESIGNINGREQUESTS = _IDX["certificatesigningrequests.certificates.k8s.io"]
