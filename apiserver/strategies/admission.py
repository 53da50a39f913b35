"""Built-in admission: NamespaceLifecycle, ServiceAccount (name only), Priority,
DefaultTolerationSeconds, RuntimeClass, LimitRanger, DefaultStorageClass,
StorageObjectInUseProtection, PersistentVolumeClaimResize (layer L4, apiserver).

Why: kube-apiserver's default admission chain changes and checks objects after decoding and
defaulting: it refuses content in missing or terminating namespaces, resolves a pod's
priorityClassName into spec.priority/preemptionPolicy (plugin/pkg/admission/priority), keeps
one globalDefault PriorityClass, and gives every pod 300 s tolerations for the
not-ready/unreachable NoExecute taints (plugin/pkg/admission/defaulttolerationseconds), and
copies a named RuntimeClass's overhead and scheduling constraints into the pod
(plugin/pkg/admission/runtimeclass), in upstream's plugin order.

Data flow: handler -> admit(group, kind, operation, obj, old, lookup) -> lookup reads other
objects from the store (sync) -> obj changed in place or an ApiError raised (403/404).

`lookup(group, resource, namespace, name) -> dict | None`. Listing (for the globalDefault
PriorityClass) uses `lookup.list(group, resource, namespace)` when the lookup has it, else
`lookup(group, resource, None, None)` must return a list.

Cost: every pod create without `priorityClassName` needs the globalDefault class. The request
core hands `admit` a `DefaultPriorityClass` (`default_priority=`), which lists the classes
only after one of them changed: it holds a store watcher on the PriorityClass prefix, opened at
the revision it listed (RBAC's `Authorizer` keeps its policy current the same way), so a class
created, changed or deleted through any transport is seen by the next pod create. A pod that
needs no change from ServiceAccount, DefaultTolerationSeconds or RuntimeClass (name resolved,
both default tolerations present, no runtimeClassName nor overhead) leaves each of them after a
few dict lookups, with the same result as their full paths.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

from apiserver.storage.interface import Store, Watcher
from minik3s.api import errors
from minik3s.api.errors import ForbiddenError, NotFoundError
from minik3s.api.helpers.names import generate_name
from minik3s.api.helpers.persistent_volumes import (
    ANN_BETA_STORAGE_CLASS,
    claim_class,
    default_storage_class,
    requested_storage,
)
from minik3s.api.helpers.resources import pod_limits, pod_requests
from minik3s.api.helpers.taints import merge_tolerations
from minik3s.api.quantity import (
    QuantityError,
    canonical_or_text,
    format_milli,
    format_quantity,
    milli_value,
    parse_quantity,
)
from minik3s.api.scheduling import SYSTEM_PRIORITY_CLASSES
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

Lookup = Callable[[str, str, str | None, str | None], Any]

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
_RESOURCES = {
    "Pod": "pods", "PriorityClass": "priorityclasses", "Namespace": "namespaces", "Node": "nodes",
    "Endpoints": "endpoints", "NetworkPolicy": "networkpolicies", "Ingress": "ingresses",
    "PodDisruptionBudget": "poddisruptionbudgets", "StorageClass": "storageclasses",
}


def resource_for_kind(kind: str) -> str:
    r = _RESOURCES.get(kind)
    if r:
        return r
    low = kind.lower()
    if low.endswith("y"):
        return low[:-1] + "ies"
    if low.endswith(("s", "x", "ch", "sh")):
        return low + "es"
    return low + "s"


def forbidden(group: str, kind: str, name: str, why: str, *, causes: list[JsonDict] | None = None) -> ForbiddenError:
    """apierrors.NewForbidden as admission.NewForbidden builds it (from the kind)."""
    return errors.forbidden(resource_for_kind(kind), group, name, why, causes=causes)


class ValidatingForbiddenError(ForbiddenError):
    """A 403 of a validating plugin's step (LimitRanger's limits): upstream raises it after the
    object's name was generated, so a generateName create is named by its generated name."""


def _list(lookup: Lookup, group: str, resource: str, namespace: str | None = None) -> list[JsonDict]:
    lister = getattr(lookup, "list", None)
    items = lister(group, resource, namespace) if callable(lister) else lookup(group, resource, namespace, None)
    return [i for i in items or [] if isinstance(i, dict)]


# ------------------------------------------------------------------------------------------------
# NamespaceLifecycle
# ------------------------------------------------------------------------------------------------


def admit_namespace_lifecycle(group: str, kind: str, operation: str, obj: JsonDict, lookup: Lookup) -> None:
    meta = obj.get("metadata") or {}
    if operation == "DELETE" and group == "" and kind == "Namespace":
        name = meta.get("name") or ""
        if name in IMMORTAL_NAMESPACES:
            raise forbidden("", "Namespace", name, "this namespace may not be deleted")
        return
    if operation != "CREATE" or (group == "" and kind == "Namespace"):
        return
    ns = meta.get("namespace")
    if not ns:
        return
    ns_obj = lookup("", "namespaces", None, ns)
    if not isinstance(ns_obj, dict):
        raise NotFoundError(f'namespaces "{ns}" not found', details={"name": ns, "kind": "namespaces"})
    if (ns_obj.get("status") or {}).get("phase") == "Terminating":
        why = f"unable to create new content in namespace {ns} because it is being terminated"
        raise forbidden(group, kind, meta.get("name") or "", why, causes=[
            {"reason": "NamespaceTerminating", "message": f"namespace {ns} is being terminated",
             "field": "metadata.namespace"}
        ])


# ------------------------------------------------------------------------------------------------
# Priority
# ------------------------------------------------------------------------------------------------


def _priority_class(name: str, lookup: Lookup) -> JsonDict | None:
    pc = lookup("scheduling.k8s.io", "priorityclasses", None, name)
    if pc is None and name in SYSTEM_PRIORITY_CLASSES:
        return {"metadata": {"name": name}, "value": SYSTEM_PRIORITY_CLASSES[name],
                "preemptionPolicy": "PreemptLowerPriority"}
    return pc if isinstance(pc, dict) else None


def _lowest_global_default(classes: list[JsonDict]) -> JsonDict | None:
    """The globalDefault class; with several (a race), the lowest value wins, as upstream."""
    best: JsonDict | None = None
    for pc in classes:
        if isinstance(pc, dict) and pc.get("globalDefault") is True:
            if best is None or int(pc.get("value") or 0) < int(best.get("value") or 0):
                best = pc
    return best


def default_priority_class(lookup: Lookup) -> JsonDict | None:
    """The globalDefault class, read by listing through `lookup`."""
    return _lowest_global_default(_list(lookup, "scheduling.k8s.io", "priorityclasses"))


DefaultPriority = Callable[[], JsonDict | None]


class DefaultPriorityClass:
    """The globalDefault PriorityClass of a store, recomputed only after a class changed.

    `get()` answers from the last listing while the store watcher opened at that listing's
    revision has no event; any event (create, update, delete of a class; the watcher ending when
    its queue overflows or the store closes) makes the next `get()` list again and re-open the
    watcher at the new revision, in one synchronous step, so no write falls in between. The
    store publishes a commit's events before the writer's caller resumes, so a pod created after
    a class write returns always sees that write. The returned object is the stored one
    (read-only). `rebuilds` counts the listings (observability, tests)."""

    def __init__(self, store: Store, prefix: str) -> None:
        self._store = store
        self._prefix = prefix
        self._watcher: Watcher | None = None
        self._value: JsonDict | None = None
        self.rebuilds = 0

    def get(self) -> JsonDict | None:
        w = self._watcher
        if w is not None and not w.ready():
            return self._value
        return self._rebuild()

    def _rebuild(self) -> JsonDict | None:
        self.close()
        rev = self._store.revision
        self._value = _lowest_global_default(self._store.list(self._prefix)[0])
        self.rebuilds += 1
        try:
            self._watcher = self._store.watch(self._prefix, rev, queue_size=16)
        except Exception as e:  # noqa: BLE001 - a closing store: stay correct by listing every time
            logger.debug("priority admission: cannot watch PriorityClasses, listing per request err=%r", e)
        return self._value

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None


def admit_pod_priority(obj: JsonDict, lookup: Lookup, default_priority: DefaultPriority | None = None) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    name = (obj.get("metadata") or {}).get("name") or ""
    pc_name = spec.get("priorityClassName")
    if not pc_name:
        dpc = default_priority() if default_priority is not None else default_priority_class(lookup)
        if dpc is not None:
            pc_name = (dpc.get("metadata") or {}).get("name") or ""
            priority = int(dpc.get("value") or 0)
            policy = dpc.get("preemptionPolicy") or "PreemptLowerPriority"
            spec["priorityClassName"] = pc_name
        else:
            priority, policy = 0, "PreemptLowerPriority"
    else:
        pc = _priority_class(pc_name, lookup)
        if pc is None:
            raise forbidden("", "Pod", name, f"no PriorityClass with name {pc_name} was found")
        priority = int(pc.get("value") or 0)
        policy = pc.get("preemptionPolicy") or "PreemptLowerPriority"
    given = spec.get("priority")
    if given is not None and given != priority:
        raise forbidden("", "Pod", name, f"the integer value of priority ({given}) must not be provided in pod "
                        f"spec; priority admission controller computed {priority} from the given PriorityClass name")
    spec["priority"] = priority
    given_policy = spec.get("preemptionPolicy")
    if given_policy is not None and given_policy != policy:
        raise forbidden("", "Pod", name, f"the string value of PreemptionPolicy ({given_policy}) must not be "
                        f"provided in pod spec; priority admission controller computed {policy} from the given "
                        "PriorityClass name")
    spec["preemptionPolicy"] = policy


def admit_priority_class(operation: str, obj: JsonDict, lookup: Lookup,
                         default_priority: DefaultPriority | None = None) -> None:
    """Only one globalDefault PriorityClass may exist."""
    if obj.get("globalDefault") is not True:
        return
    name = (obj.get("metadata") or {}).get("name") or ""
    dpc = default_priority() if default_priority is not None else default_priority_class(lookup)
    if dpc is None:
        return
    dname = (dpc.get("metadata") or {}).get("name") or ""
    if operation == "CREATE" or (operation == "UPDATE" and dname != name):
        raise forbidden("scheduling.k8s.io", "PriorityClass", name,
                        f"PriorityClass {dname} is already marked as default. Only one default can exist")


# ------------------------------------------------------------------------------------------------
# DefaultTolerationSeconds, ServiceAccount
# ------------------------------------------------------------------------------------------------


# the tolerations DefaultTolerationSeconds adds, exactly as it adds them
_DEFAULT_NOT_READY: JsonDict = {"key": NOT_READY_TAINT, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}
_DEFAULT_UNREACHABLE: JsonDict = {"key": UNREACHABLE_TAINT, "operator": "Exists", "effect": "NoExecute",
                                  "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}


def admit_default_tolerations(obj: JsonDict) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    tols = spec.get("tolerations")
    # early exit: a pod that already carries both default tolerations (one posted from an admitted
    # pod's manifest, a controller's template that has them) tolerates both taints: nothing to add
    if isinstance(tols, list) and _DEFAULT_NOT_READY in tols and _DEFAULT_UNREACHABLE in tols:
        return
    _add_default_tolerations(spec, tols)


def _add_default_tolerations(spec: JsonDict, tols: Any) -> None:
    """The plugin's full path: add each default toleration no existing one already covers."""
    if not isinstance(tols, list):
        tols = []
    not_ready = unreachable = False
    for t in tols:
        if not isinstance(t, dict):
            continue
        key, effect = t.get("key") or "", t.get("effect") or ""
        if effect in ("NoExecute", ""):
            if key in (NOT_READY_TAINT, ""):
                not_ready = True
            if key in (UNREACHABLE_TAINT, ""):
                unreachable = True
    if not_ready and unreachable:
        return
    if not not_ready:
        tols.append(dict(_DEFAULT_NOT_READY))
    if not unreachable:
        tols.append(dict(_DEFAULT_UNREACHABLE))
    spec["tolerations"] = tols


def admit_service_account(obj: JsonDict) -> None:
    """The v1 conversion of a pod's service account fields (always on, with or without the
    ServiceAccount plugin): `serviceAccountName` taken from the deprecated `serviceAccount` when
    unset, and `serviceAccount` mirroring `serviceAccountName`."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    sa = spec.get("serviceAccountName")
    if sa and spec.get("serviceAccount") == sa:  # early exit: already resolved
        return
    _resolve_service_account(spec)


def _resolve_service_account(spec: JsonDict) -> None:
    """The conversion's full path."""
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]


DEFAULT_SERVICE_ACCOUNT = "default"
SERVICE_ACCOUNT_TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"
# serviceaccount.WarnOnlyBoundTokenExpirationSeconds: the projected token's lifetime
TOKEN_EXPIRATION_SECONDS = 3607
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"


def token_volume(name: str) -> JsonDict:
    """The projected volume the plugin adds (TokenVolumeSource): a bound token, the cluster CA
    from kube-root-ca.crt and the pod's namespace, mode 0644; keys in Go's field order."""
    return {"name": name, "projected": {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": 420,
    }}


class ServiceAccountAdmission:
    """plugin/pkg/admission/serviceaccount on pod creates: a pod without a service account gets
    `default`; the account must exist (`default` is waited for: up to ten reads 100-200 ms apart,
    as its controller creates it just after the namespace), else 403; unless the pod or the
    account opts out (automountServiceAccountToken), every container and init container without
    a mount at /var/run/secrets/kubernetes.io/serviceaccount mounts a `kube-api-access-xxxxx`
    projected volume; the account's imagePullSecrets are copied to a pod that has none; an
    account annotated kubernetes.io/enforce-mountable-secrets=true limits the secrets the pod may
    reference. Mirror pods are only checked: no service account, no secrets, no token projection.

    Off (None in `admit`) as kube-apiserver with --disable-admission-plugins=ServiceAccount (as
    upstream's integration and scheduler_perf API servers run): the fields are only converted."""

    def __init__(self, rng: random.Random, sleep: Callable[[float], Awaitable[None]] | None = None,
                 *, default_attempts: int = 10) -> None:
        self.rng = rng
        self.sleep = sleep or asyncio.sleep
        self.default_attempts = default_attempts

    async def admit(self, obj: JsonDict, lookup: Lookup) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        admit_service_account(obj)
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        pod_name = str(meta.get("name") or meta.get("generateName") or "Unknown")
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and MIRROR_POD_ANNOTATION in annotations:
            _validate_mirror_pod(spec, pod_name)
            return
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec["serviceAccount"] = DEFAULT_SERVICE_ACCOUNT
        sa_name = str(spec["serviceAccountName"])
        sa = await self._service_account(lookup, namespace, sa_name, pod_name)
        if _should_automount(sa, spec):
            _mount_token(spec, self.rng)
        if not spec.get("imagePullSecrets"):
            pulls = [{"name": r.get("name") or ""} for r in sa.get("imagePullSecrets") or () if isinstance(r, dict)]
            if pulls:
                spec["imagePullSecrets"] = pulls
            else:
                spec.pop("imagePullSecrets", None)
        if _enforces_mountable_secrets(sa):
            why = _unmountable_secret(sa, spec)
            if why:
                raise forbidden("", "Pod", pod_name, why)

    async def _service_account(self, lookup: Lookup, namespace: str, name: str, pod_name: str) -> JsonDict:
        """The informer's copy, then live reads: ten for `default`, one for any other name."""
        sa = lookup("", "serviceaccounts", namespace, name)
        if isinstance(sa, dict):
            return sa
        attempts = self.default_attempts if name == DEFAULT_SERVICE_ACCOUNT else 1
        interval = (100 + self.rng.randrange(100)) / 1000.0
        for _ in range(attempts - 1):
            await self.sleep(interval)
            sa = lookup("", "serviceaccounts", namespace, name)
            if isinstance(sa, dict):
                return sa
        raise forbidden("", "Pod", pod_name, f"error looking up service account {namespace}/{name}: "
                        f"serviceaccount {errors.go_quote(name)} not found")


def _should_automount(sa: JsonDict, spec: JsonDict) -> bool:
    """The pod's automountServiceAccountToken wins, then the account's; default true."""
    pod_pref = spec.get("automountServiceAccountToken")
    if isinstance(pod_pref, bool):
        return pod_pref
    sa_pref = sa.get("automountServiceAccountToken")
    if isinstance(sa_pref, bool):
        return sa_pref
    return True


def _mount_token(spec: JsonDict, rng: random.Random) -> None:
    """mountServiceAccountToken: reuse a kube-api-access-* volume the pod already has, else
    name a new one; mount it read-only in every container and init container that has nothing
    at the token path; add the volume only when some container mounts it."""
    volumes = spec.get("volumes")
    vols = [v for v in volumes if isinstance(v, dict)] if isinstance(volumes, list) else []
    volume_name = next((str(v["name"]) for v in vols
                        if isinstance(v.get("name"), str) and v["name"].startswith(TOKEN_VOLUME_PREFIX)), "")
    has_volume = bool(volume_name)
    if not volume_name:
        volume_name = generate_name(TOKEN_VOLUME_PREFIX, rng)
    needs_volume = False
    for key in ("initContainers", "containers"):
        containers = spec.get(key)
        if not isinstance(containers, list):
            continue
        for c in containers:
            if not isinstance(c, dict):
                continue
            mounts = c.get("volumeMounts")
            mounts = mounts if isinstance(mounts, list) else []
            if any(isinstance(m, dict) and m.get("mountPath") == SERVICE_ACCOUNT_TOKEN_MOUNT_PATH for m in mounts):
                continue
            c["volumeMounts"] = [*mounts, {"name": volume_name, "readOnly": True,
                                           "mountPath": SERVICE_ACCOUNT_TOKEN_MOUNT_PATH}]
            needs_volume = True
    if needs_volume and not has_volume:
        spec["volumes"] = [*(volumes if isinstance(volumes, list) else []), token_volume(volume_name)]


def _enforces_mountable_secrets(sa: JsonDict) -> bool:
    """The account's kubernetes.io/enforce-mountable-secrets annotation, as strconv.ParseBool."""
    value = ((sa.get("metadata") or {}).get("annotations") or {}).get(ENFORCE_MOUNTABLE_SECRETS)
    return value in ("1", "t", "T", "TRUE", "true", "True")


def _unmountable_secret(sa: JsonDict, spec: JsonDict) -> str:
    """limitSecretReferences: the first secret the pod references that the account does not
    list (secret volumes, env secretKeyRefs, then imagePullSecrets against the account's), or ""."""
    sa_name = (sa.get("metadata") or {}).get("name") or ""
    mountable = {s.get("name") for s in sa.get("secrets") or () if isinstance(s, dict)}
    for v in spec.get("volumes") or ():
        secret = v.get("secret") if isinstance(v, dict) else None
        if isinstance(secret, dict) and secret.get("secretName") not in mountable:
            return (f'volume with secret.secretName="{secret.get("secretName") or ""}" is not allowed because '
                    f"service account {sa_name} does not reference that secret")
    for key, what in (("initContainers", "init container"), ("containers", "container")):
        for c in spec.get(key) or ():
            if not isinstance(c, dict):
                continue
            for env in c.get("env") or ():
                ref = ((env.get("valueFrom") or {}).get("secretKeyRef") if isinstance(env, dict) else None)
                if isinstance(ref, dict) and ref.get("name") not in mountable:
                    return (f'{what} {c.get("name") or ""} with envVar {env.get("name") or ""} referencing '
                            f'secret.secretName="{ref.get("name") or ""}" is not allowed because service account '
                            f"{sa_name} does not reference that secret")
    pulls = {s.get("name") for s in sa.get("imagePullSecrets") or () if isinstance(s, dict)}
    for i, ref in enumerate(spec.get("imagePullSecrets") or ()):
        name = ref.get("name") if isinstance(ref, dict) else None
        if name not in pulls:
            return (f'imagePullSecrets[{i}].name="{name or ""}" is not allowed because service account {sa_name} '
                    f"does not reference that imagePullSecret")
    return ""


def _pod_references_secrets(spec: JsonDict) -> bool:
    """podutil.VisitPodSecretNames, any hit: pull secrets, env and envFrom of every container
    kind, secret volumes and projections, and the volume sources' secret references."""
    if any(isinstance(r, dict) and r.get("name") for r in spec.get("imagePullSecrets") or ()):
        return True
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or ():
            if not isinstance(c, dict):
                continue
            for e in c.get("envFrom") or ():
                if isinstance(e, dict) and isinstance(e.get("secretRef"), dict):
                    return True
            for e in c.get("env") or ():
                if isinstance(e, dict) and isinstance((e.get("valueFrom") or {}).get("secretKeyRef"), dict):
                    return True
    for v in spec.get("volumes") or ():
        if not isinstance(v, dict):
            continue
        if isinstance(v.get("secret"), dict):
            return True
        projected = v.get("projected")
        if isinstance(projected, dict) and any(isinstance(s, dict) and isinstance(s.get("secret"), dict)
                                               for s in projected.get("sources") or ()):
            return True
        for source_key, ref_key in (("azureFile", "secretName"), ("cephfs", "secretRef"), ("cinder", "secretRef"),
                                    ("flexVolume", "secretRef"), ("rbd", "secretRef"), ("scaleIO", "secretRef"),
                                    ("iscsi", "secretRef"), ("storageos", "secretRef"),
                                    ("csi", "nodePublishSecretRef")):
            source = v.get(source_key)
            if isinstance(source, dict) and source.get(ref_key):
                return True
    return False


def _validate_mirror_pod(spec: JsonDict, pod_name: str) -> None:
    """A mirror pod may not name a service account, reference secrets or project a token."""
    if spec.get("serviceAccountName"):
        raise forbidden("", "Pod", pod_name, "a mirror pod may not reference service accounts")
    if _pod_references_secrets(spec):
        raise forbidden("", "Pod", pod_name, "a mirror pod may not reference secrets")
    for v in spec.get("volumes") or ():
        projected = v.get("projected") if isinstance(v, dict) else None
        if isinstance(projected, dict) and any(isinstance(s, dict) and "serviceAccountToken" in s
                                               for s in projected.get("sources") or ()):
            raise forbidden("", "Pod", pod_name, "a mirror pod may not use ServiceAccountToken volume projections")


# ------------------------------------------------------------------------------------------------
# LimitRanger
# ------------------------------------------------------------------------------------------------

LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"


def limit_ranges_of(obj: JsonDict, lookup: Lookup) -> list[JsonDict]:
    """The LimitRanges of the object's namespace (read once per pod create)."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    return _list(lookup, "", "limitranges", str(namespace)) if namespace else []


def admit_limit_ranger(obj: JsonDict, ranges: list[JsonDict]) -> None:
    """plugin/pkg/admission/limitranger's mutation on a pod create: each LimitRange of the
    namespace (`ranges`) fills the containers' missing requests and limits from its Container
    item's defaultRequest and default, annotating the pod with what it set.
    `validate_limit_ranger` then enforces every limit: a Container item's
    min/max/maxLimitRequestRatio per container and init container, a Pod item's over the pod's
    effective requests and limits."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for lr in ranges:
        _default_container_resources(obj, spec, lr)


def validate_limit_ranger(obj: JsonDict, ranges: list[JsonDict], kind: str = "Pod") -> None:
    """LimitRanger's validation, after every mutating plugin (RuntimeClass's overhead counts
    toward a Pod limit): 403 naming every violation, per LimitRange (utilerrors' aggregate form:
    one message as it is, several as "[a, b]"). `kind` is Pod or PersistentVolumeClaim."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    check = _limit_violations if kind == "Pod" else _claim_violations
    problems: list[str] = []
    for lr in ranges:
        why = check(spec, lr)
        if why:
            problems.append(why[0] if len(why) == 1 else f"[{', '.join(why)}]")
    if problems:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or meta.get("generateName") or "Unknown")
        e = forbidden("", kind, name, problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")
        raise ValidatingForbiddenError(e.message, details=e.details)


def _claim_violations(spec: JsonDict, lr: JsonDict) -> list[str]:
    """PersistentVolumeClaimValidateLimitFunc: a claim's spec.resources.requests against the
    PersistentVolumeClaim items' min and max (no defaults: storage is a required request; a
    missing request compares as 0)."""
    requests = (spec.get("resources") or {}).get("requests") or {}
    out: list[str] = []
    for item in _items(lr, "PersistentVolumeClaim"):
        for bound, word, sign in (("min", "minimum", 1), ("max", "maximum", -1)):
            for res, enforced in (item.get(bound) or {}).items():
                got = requests.get(res, "0")
                if sign * (_milli(enforced) - _milli(got)) > 0:  # min above the request, max below it
                    out.append(f"{word} {res} usage per PersistentVolumeClaim is {canonical_or_text(enforced)}, "
                               f"but request is {canonical_or_text(got)}")
    return out


def _items(lr: JsonDict, kind: str) -> list[JsonDict]:
    return [i for i in (lr.get("spec") or {}).get("limits") or () if isinstance(i, dict) and i.get("type") == kind]


def _default_container_resources(obj: JsonDict, spec: JsonDict, lr: JsonDict) -> None:
    """mergePodResourceRequirements with the LimitRange's Container defaults."""
    requests: JsonDict = {}
    limits: JsonDict = {}
    for item in _items(lr, "Container"):
        requests.update(item.get("defaultRequest") or {})
        limits.update(item.get("default") or {})
    if not requests and not limits:
        return
    notes: list[str] = []
    for key, what in (("containers", "container"), ("initContainers", "init container")):
        for c in spec.get(key) or ():
            if not isinstance(c, dict):
                continue
            res = c.get("resources")
            if not isinstance(res, dict):
                res = c["resources"] = {}
            set_limits = _fill(res, "limits", limits)
            set_requests = _fill(res, "requests", requests)
            if set_requests:
                notes.append(f"{', '.join(sorted(set_requests))} request for {what} {c.get('name', '')}")
            if set_limits:
                notes.append(f"{', '.join(sorted(set_limits))} limit for {what} {c.get('name', '')}")
    if notes:
        meta = obj.setdefault("metadata", {})
        ann = meta.get("annotations")
        if not isinstance(ann, dict):
            ann = meta["annotations"] = {}
        ann[LIMIT_RANGER_ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _fill(res: JsonDict, key: str, defaults: JsonDict) -> list[str]:
    if not defaults:
        return []
    have = res.get(key)
    if not isinstance(have, dict):
        have = {}
    added = [k for k in defaults if k not in have]
    if added:
        res[key] = {**have, **{k: defaults[k] for k in added}}
    return added


def _milli(q: Any) -> int:
    """Quantity.MilliValue, the precision upstream compares limits at (0 for what does not parse)."""
    try:
        return milli_value(q)
    except (QuantityError, TypeError):
        return 0


def _limit_violations(spec: JsonDict, lr: JsonDict) -> list[str]:
    """PodValidateLimitFunc for one LimitRange: the messages, in upstream's order."""
    out: list[str] = []
    for item in _items(lr, "Container"):
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or ():
                if isinstance(c, dict):
                    res = c.get("resources") or {}
                    out.extend(_check_item("Container", item, res.get("requests") or {}, res.get("limits") or {}))
    for item in _items(lr, "Pod"):
        out.extend(_check_item("Pod", item, *_pod_requests_limits(spec)))
    return out


def _pod_requests_limits(spec: JsonDict) -> tuple[JsonDict, JsonDict]:
    """PodRequests / PodLimits (minik3s.api.helpers.resources: sidecars summed, init containers
    at least, overhead added) as quantities: cpu in milli-units, others binary when they divide
    (`1Gi`), else decimal."""
    pod = {"spec": spec}
    return _as_quantities(pod_requests(pod)), _as_quantities(pod_limits(pod))


def _as_quantities(values: dict[str, int]) -> JsonDict:
    return {k: format_milli(v) if k == "cpu" else format_quantity(v, binary=v % 1024 == 0)
            for k, v in values.items()}


def _check_item(kind: str, item: JsonDict, requests: JsonDict, limits: JsonDict) -> list[str]:
    out: list[str] = []
    for res, enforced in (item.get("min") or {}).items():
        req, lim, want = requests.get(res), limits.get(res), _milli(enforced)
        if req is None:
            out.append(f"minimum {res} usage per {kind} is {canonical_or_text(enforced)}.  No request is specified")
        elif _milli(req) < want:
            out.append(f"minimum {res} usage per {kind} is {canonical_or_text(enforced)}, but request is "
                       f"{canonical_or_text(req)}")
        elif lim is not None and _milli(lim) < want:
            out.append(f"minimum {res} usage per {kind} is {canonical_or_text(enforced)}, but limit is "
                       f"{canonical_or_text(lim)}")
    for res, enforced in (item.get("max") or {}).items():
        req, lim, want = requests.get(res), limits.get(res), _milli(enforced)
        if lim is None:
            out.append(f"maximum {res} usage per {kind} is {canonical_or_text(enforced)}.  No limit is specified")
        elif _milli(lim) > want:
            out.append(f"maximum {res} usage per {kind} is {canonical_or_text(enforced)}, but limit is "
                       f"{canonical_or_text(lim)}")
        elif req is not None and _milli(req) > want:
            out.append(f"maximum {res} usage per {kind} is {canonical_or_text(enforced)}, but request is "
                       f"{canonical_or_text(req)}")
    for res, enforced in (item.get("maxLimitRequestRatio") or {}).items():
        req, lim = requests.get(res), limits.get(res)
        text = canonical_or_text(enforced)
        if req is None or _milli(req) == 0:
            out.append(f"{res} max limit to request ratio per {kind} is {text}, but no request is specified or "
                       f"request is 0")
        elif lim is None or _milli(lim) == 0:
            out.append(f"{res} max limit to request ratio per {kind} is {text}, but no limit is specified or "
                       f"limit is 0")
        else:
            ratio = _milli(lim) / _milli(req)
            if ratio * 1000 > _milli(enforced):
                out.append(f"{res} max limit to request ratio per {kind} is {text}, but provided ratio is {ratio:f}")
    return out


# ------------------------------------------------------------------------------------------------
# RuntimeClass
# ------------------------------------------------------------------------------------------------


def _same_resources(a: JsonDict, b: JsonDict) -> bool:
    """Semantic equality of two resource lists (quantities compared by value: 1000m == 1)."""
    if set(a) != set(b):
        return False
    try:
        return all(parse_quantity(a[k]) == parse_quantity(b[k]) for k in a)
    except (QuantityError, TypeError):
        return a == b


def admit_runtime_class(obj: JsonDict, lookup: Lookup) -> None:
    """plugin/pkg/admission/runtimeclass, mutation then validation: a pod naming a RuntimeClass
    gets its overhead.podFixed as spec.overhead (a different overhead already set is refused),
    its scheduling.nodeSelector merged into spec.nodeSelector (a conflicting key is refused) and
    its scheduling.tolerations merged into spec.tolerations (covered ones dropped). A pod that sets
    an overhead without a class defining one is refused; an unknown class is refused (403)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if not spec.get("runtimeClassName") and spec.get("overhead") is None:
        return  # early exit: no class to look up, no overhead to check (the full path changes nothing)
    _admit_runtime_class_full(obj, spec, lookup)


def _admit_runtime_class_full(obj: JsonDict, spec: JsonDict, lookup: Lookup) -> None:
    name = (obj.get("metadata") or {}).get("name") or ""
    rc_name = spec.get("runtimeClassName")
    rc: JsonDict = {}
    if rc_name:
        raw = lookup("node.k8s.io", "runtimeclasses", None, str(rc_name))
        if not isinstance(raw, dict):
            raise forbidden("", "Pod", name, f'pod rejected: RuntimeClass "{rc_name}" not found')
        rc = raw
    overhead = rc.get("overhead")
    fixed = overhead.get("podFixed") if isinstance(overhead, dict) else None
    pod_overhead = spec.get("overhead")
    if isinstance(fixed, dict):
        if pod_overhead is not None and not (isinstance(pod_overhead, dict) and _same_resources(pod_overhead, fixed)):
            raise forbidden("", "Pod", name, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
        spec["overhead"] = dict(fixed)
    elif pod_overhead is not None:
        raise forbidden("", "Pod", name,
                        "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
    sched = rc.get("scheduling")
    if not isinstance(sched, dict):
        return
    class_selector = sched.get("nodeSelector")
    if isinstance(class_selector, dict) and class_selector:
        selector = spec.get("nodeSelector")
        if isinstance(selector, dict) and selector:
            for key, value in class_selector.items():
                if key in selector and selector[key] != value:
                    raise forbidden("", "Pod", name, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = "
                                    f"{value}; pod.spec.nodeSelector[{key}] = {selector[key]}")
                selector[key] = value
        else:
            spec["nodeSelector"] = dict(class_selector)
    class_tols = [dict(t) for t in sched.get("tolerations") or () if isinstance(t, dict)]
    if class_tols:
        pod_tols = [t for t in spec.get("tolerations") or () if isinstance(t, dict)]
        spec["tolerations"] = merge_tolerations(pod_tols, class_tols)


# ------------------------------------------------------------------------------------------------
# the chain
# ------------------------------------------------------------------------------------------------


PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"


def admit_storage_protection(kind: str, obj: JsonDict) -> None:
    """StorageObjectInUseProtection: a new claim gets the pvc-protection finalizer, a new volume
    the pv-protection one (the pvc-protection / pv-protection controllers remove them once the
    object is no longer in use)."""
    finalizer = PVC_PROTECTION_FINALIZER if kind == "PersistentVolumeClaim" else PV_PROTECTION_FINALIZER
    meta = obj.setdefault("metadata", {})
    current = meta.get("finalizers")
    finalizers = list(current) if isinstance(current, list) else []
    if finalizer not in finalizers:
        meta["finalizers"] = [*finalizers, finalizer]




def admit_default_storage_class(obj: JsonDict, lookup: Lookup) -> None:
    """DefaultStorageClass: a claim created with no storageClassName (null, not "") and no beta
    class annotation gets the default StorageClass, the one annotated is-default-class "true"
    (the newest, by creationTimestamp then name, when several are)."""
    spec = obj.get("spec")
    meta = obj.get("metadata") or {}
    if not isinstance(spec, dict) or spec.get("storageClassName") is not None:
        return
    if ANN_BETA_STORAGE_CLASS in (meta.get("annotations") or {}):
        return
    newest = default_storage_class(_list(lookup, "storage.k8s.io", "storageclasses"))
    if newest is not None:
        spec["storageClassName"] = str((newest.get("metadata") or {}).get("name") or "")


CLAIM_NOT_BOUND = "Only bound persistent volume claims can be expanded"
CLAIM_NOT_RESIZABLE = ("only dynamically provisioned pvc can be resized and the storageclass that provisions the "
                       "pvc must support resize")


def validate_claim_resize(obj: JsonDict, old: JsonDict, lookup: Lookup) -> None:
    """PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize): a
    claim update that grows spec.resources.requests.storage is refused (403) unless the claim
    was Bound and both versions name the same StorageClass, which exists and sets
    allowVolumeExpansion: true. Shrinking or keeping the size is left to validation."""
    if requested_storage(obj) <= requested_storage(old):
        return
    name = str((obj.get("metadata") or {}).get("name") or "")
    if ((old.get("status") or {}).get("phase")) != "Bound":
        raise errors.forbidden("persistentvolumeclaims", "", name, CLAIM_NOT_BOUND)
    cls, old_cls = claim_class(obj), claim_class(old)
    sc = lookup("storage.k8s.io", "storageclasses", None, cls) if cls and cls == old_cls else None
    if not isinstance(sc, dict) or sc.get("allowVolumeExpansion") is not True:
        raise errors.forbidden("persistentvolumeclaims", "", name, CLAIM_NOT_RESIZABLE)


def validate(group: str, kind: str, operation: str, obj: JsonDict, old: JsonDict | None, lookup: Lookup, *,
             claim_resize: bool = True) -> None:
    """The validating built-in plugins that kube-apiserver runs after the object passed its
    strategy's validation (so an invalid object gets its 422 first), on the main resource only:
    PersistentVolumeClaimResize (`claim_resize`)."""
    if claim_resize and group == "" and kind == "PersistentVolumeClaim" and old is not None \
            and operation.upper() == "UPDATE":
        validate_claim_resize(obj, old, lookup)


async def admit(group: str, kind: str, operation: str, obj: JsonDict, old: JsonDict | None, lookup: Lookup, *,
                default_priority: DefaultPriority | None = None,
                service_accounts: ServiceAccountAdmission | None = None,
                storage_protection: bool = False, subresource: str | None = None) -> None:
    """Mutating + validating admission of one request, in place. `operation` is CREATE, UPDATE,
    DELETE or CONNECT (case-insensitive). Raises NotFoundError/ForbiddenError. `default_priority`
    returns the globalDefault PriorityClass (e.g. `DefaultPriorityClass.get`); without it the
    classes are listed through `lookup`. `service_accounts` is the ServiceAccount plugin (None:
    disabled, the fields are only converted); `storage_protection` turns on
    StorageObjectInUseProtection (only while its controllers run)."""
    op = operation.upper()
    if subresource is not None:
        # the plugins that handle a subresource: LimitRanger on pods/resize (its defaults, then
        # its checks of the containers' new resources)
        if (group, kind, op, subresource) == ("", "Pod", "UPDATE", "resize"):
            ranges = limit_ranges_of(obj, lookup)
            if ranges:
                admit_limit_ranger(obj, ranges)
                validate_limit_ranger(obj, ranges)
        return
    admit_namespace_lifecycle(group, kind, op, obj, lookup)
    if group == "" and kind == "Pod" and op == "CREATE":
        ranges = limit_ranges_of(obj, lookup)
        if ranges:
            admit_limit_ranger(obj, ranges)
        if service_accounts is not None:
            await service_accounts.admit(obj, lookup)
        else:
            admit_service_account(obj)
        admit_pod_priority(obj, lookup, default_priority)
        admit_default_tolerations(obj)
        admit_runtime_class(obj, lookup)
        if ranges:
            validate_limit_ranger(obj, ranges)
    elif group == "" and kind == "PersistentVolumeClaim" and op in ("CREATE", "UPDATE"):
        if op == "CREATE":
            admit_default_storage_class(obj, lookup)
            if storage_protection:
                admit_storage_protection(kind, obj)
        ranges = limit_ranges_of(obj, lookup)
        if ranges:
            validate_limit_ranger(obj, ranges, "PersistentVolumeClaim")
    elif group == "" and kind == "PersistentVolume" and op == "CREATE" and storage_protection:
        admit_storage_protection(kind, obj)
    elif group == "scheduling.k8s.io" and kind == "PriorityClass" and op in ("CREATE", "UPDATE"):
        admit_priority_class(op, obj, lookup, default_priority)
