"""The request core of the API server (layer L4): every verb's semantics, transport-free.

Both the HTTP handlers (`apiserver.handlers`) and the in-process client transport call this
object, so admission, validation, resourceVersion and errors are identical on both paths.

Data flow of a write: decoded dict -> metadata rules -> strategy defaults / prepare ->
admission -> the kind's begin hook -> validation -> `Store` (single writer, group commit) ->
the kind's after hook -> watch fan-out.
Semantics follow kube-apiserver's generic registry (staging/src/k8s.io/apiserver/pkg/registry/
generic/registry/store.go): optimistic concurrency on resourceVersion, graceful deletion with
deletionTimestamp/deletionGracePeriodSeconds, finalizers, propagationPolicy finalizers.

This module is generic: nothing here names a resource. Per-kind behaviour (what DELETE returns,
graceful deletion, Service IP allocation, the CRD life cycle, subresources such as pods/binding)
is a hook or attribute of the kind's Strategy (`apiserver.strategies.base.Strategy`), which
reaches back only through `RegistryOps` (`apiserver.strategies.rest`), a protocol this class
satisfies. Layering: handlers -> core -> strategies -> storage.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import contextlib
import copy
import dataclasses
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType
from typing import Any, TypeVar, cast

import orjson

from apiserver.crd import register_crd
from apiserver.patch import PatchError
from apiserver.patch.apply import field_path_to_smd, typed_patch_error
from apiserver.patch.json_patch import apply_json_patch
from apiserver.patch.managed import record_managed_fields, records_managed_fields, server_side_apply
from apiserver.patch.merge_patch import apply_merge_patch
from apiserver.patch.strategic_merge import (
    apply_strategic_merge_patch,
    builtin_patch_meta,
    patch_meta_for,
    patched_top_level_fields,
)
from apiserver.storage.interface import (
    UNENCODABLE_MESSAGE,
    KeyExistsError,
    KeyNotFoundError,
    RevisionMismatchError,
    Store,
    TooOldError,
    WatchOverflowError,
    check_object_levels,
)
from apiserver.strategies import (
    DefaultPriorityClass,
    ResourceQuotaAdmission,
    ServiceAccountAdmission,
    Strategy,
    admit,
    decode_fields_for,
    decoded_as,
    strategy_for_resource,
    type_error_for,
)
from apiserver.strategies.admission import ValidatingForbiddenError
from apiserver.strategies.admission import validate as validate_admission
from apiserver.strategies.admissionregistration import WebhookConfigurationGeneration
from apiserver.strategies.rest import STATUS, Subresource, meta_of, rv_int
from apiserver.strategies.scale import SCALE
from apiserver.webhooks import Attributes, WebhookAdmission
from minik3s.api import errors
from minik3s.api.errors import BadRequestError
from minik3s.api.helpers.names import generate_name
from minik3s.api.options import DeleteOptions, ListOptions, WatchOptions, WriteOptions
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.selectors import parse_field_selector, parse_label_selector
from minik3s.api.types import JsonDict
from minik3s.api.user import APISERVER, UserInfo
from minik3s.utils.clock import Clock, rfc3339

logger = logging.getLogger(__name__)

# upstream's GuaranteedUpdate retries without bound; each round here lets at least one contender
# commit, so this bound is only reached by a livelock (then a 409)
MAX_UPDATE_RETRIES = 1000
# create attempts in all when the name is generated from generateName and taken (upstream
# store.go maxNameGenerationCreateAttempts)
GENERATE_NAME_ATTEMPTS = 8
# how long a list at a resourceVersion not yet reached waits for it (the watch cache's blockTimeout)
FRESH_WAIT = 3.0
BOOKMARK_INTERVAL = 30.0

Selector = Callable[[JsonDict], bool]
S = TypeVar("S")
WriteGuard = Callable[[ResourceInfo, JsonDict, "JsonDict | None", WriteOptions], None]
# subresources any kind serves when the resources table lists them
GENERIC_SUBRESOURCES: Mapping[str, Subresource] = MappingProxyType({"status": STATUS, "scale": SCALE})

__all__ = ["ApiCore", "deep_copy", "meta_of"]


def _meta(obj: JsonDict) -> JsonDict:
    m = obj.get("metadata")
    if m is None:
        m = obj["metadata"] = {}
    elif not isinstance(m, dict):
        raise BadRequestError("metadata must be an object")
    return m


def _label_predicate(sel: Any) -> Selector:
    def match(o: JsonDict) -> bool:
        return bool(sel.matches((o.get("metadata") or {}).get("labels") or {}))

    return match


def _field_predicate(getter: Callable[[JsonDict], str], value: str, *, equal: bool) -> Selector:
    if equal:
        return lambda o: getter(o) == value
    return lambda o: getter(o) != value


OMIT_EMPTY_META = ("finalizers", "ownerReferences", "labels", "annotations", "managedFields")


def _drop_empty_meta(meta: JsonDict) -> None:
    """ObjectMeta's list/map fields are `omitempty` upstream: an emptied list (e.g. the last
    finalizer removed by a patch) is not stored as `[]`."""
    for k in OMIT_EMPTY_META:
        if k in meta and meta[k] in ([], {}, None):
            del meta[k]


def deep_copy(obj: JsonDict) -> JsonDict:
    """Fast deep copy of a JSON dict (orjson round trip beats copy.deepcopy several times)."""
    try:
        return cast(JsonDict, orjson.loads(orjson.dumps(obj)))
    except TypeError:
        return copy.deepcopy(obj)


def go_map_repr(v: Any) -> str:
    """Go's `%+v` of a decoded JSON value, as upstream quotes an SMP body in errors.
    Example: {"data": {"a": 1}} -> `map[data:map[a:1]]`."""
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_map_repr(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_map_repr(x) for x in v) + "]"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _admission_namespace(info: ResourceInfo, meta: JsonDict) -> str:
    """admission.Attributes' namespace: the object's, or a namespace's own name (as upstream)."""
    if info.group == "" and info.resource == "namespaces":
        return str(meta.get("name") or "")
    return str(meta.get("namespace") or "") if info.namespaced else ""


def uuid4_string(bits: int) -> str:
    """`str(uuid.UUID(int=bits, version=4))` without building the UUID object (every create
    stamps one): the version-4 and RFC 4122 variant bits set in `bits`, then the 8-4-4-4-12 hex
    form. Example: `uuid4_string(0)` -> "00000000-0000-4000-8000-000000000000"."""
    n = (bits & ~(0xC000 << 48) | (0x8000 << 48)) & ~(0xF000 << 64) | (4 << 76)
    h = f"{n:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _named_by_prefix(e: errors.ForbiddenError, name: str, prefix: str) -> errors.ForbiddenError:
    """A mutating admission plugin's 403 for a generateName create names the object by its
    prefix, as upstream's admission.NewForbidden does (its name is generated after mutating
    admission, before validating admission)."""
    message = e.message.replace(f"\"{name}\"", f"\"{prefix}\"", 1)
    details = dict(e.details or {})
    if details.get("name") == name:
        details["name"] = prefix
    return errors.ForbiddenError(message, details=details)


class _Lookup:
    """Read access to current objects for admission (sync, from the store's memory)."""

    __slots__ = ("_core",)

    def __init__(self, core: ApiCore) -> None:
        self._core = core

    def _info(self, group: str, resource: str) -> ResourceInfo | None:
        return self._core.registry.get_resource(group, resource)

    def __call__(self, group: str, resource: str, namespace: str | None, name: str | None) -> Any:
        info = self._info(group, resource)
        if info is None:
            return None
        if name is None:
            return self.list(group, resource, namespace)
        return self._core.store.get(info.key(namespace if info.namespaced else None, name))

    def list(self, group: str, resource: str, namespace: str | None = None) -> list[JsonDict]:
        info = self._info(group, resource)
        if info is None:
            return []
        return self._core.store.list(info.list_prefix(namespace))[0]


@dataclasses.dataclass(slots=True)
class ListPage:
    """A LIST's answer before rendering. `keys` are the items' storage keys when the items are
    the stored objects themselves (None for a converted view such as autoscaling/v1 HPAs): the
    store's committed encoding of each key is then byte for byte the item's JSON, so a JSON
    response can be written from those bytes (apiserver.handlers.verbs) instead of encoding the
    objects again. Items are shared with the store: never mutate them."""

    kind: str
    api_version: str
    metadata: JsonDict
    items: list[JsonDict]
    keys: list[str] | None

    def to_dict(self) -> JsonDict:
        return {"kind": self.kind, "apiVersion": self.api_version, "metadata": self.metadata, "items": self.items}


def _check_patched_depth(obj: JsonDict) -> None:
    """A patch can build an object deeper than any body may be (a JSON patch `copy` of a deep
    subtree into itself): once decoded (a deep unknown field of a built-in kind is dropped, as
    upstream's decoding drops it), one deeper than a body may be is refused."""
    try:
        check_object_levels(obj)
    except orjson.JSONEncodeError:
        raise BadRequestError(UNENCODABLE_MESSAGE) from None


def _check_create_resource_version(obj: JsonDict) -> None:
    """The storage layer's check on a create, after validation and admission: a resourceVersion
    that parses as a non-zero unsigned integer is refused with its plain error, which the API
    renders as a 500 with no reason, as kube-apiserver does; anything else there ("0", "-1",
    "v1") is dropped and the object is created (PrepareObjectForStorage)."""
    meta = obj["metadata"]
    rv = meta.get("resourceVersion")
    if rv is None:
        return
    if isinstance(rv, str) and rv.isdigit() and rv.isascii() and int(rv) != 0 and int(rv) < 1 << 64:
        raise errors.ApiError("resourceVersion should not be set on objects to be created", code=500, reason="")
    del meta["resourceVersion"]


class ApiCore:
    """Transport-independent implementation of the REST verbs over a `Store`."""

    def __init__(self, store: Store, registry: ResourceRegistry, *, clock: Clock | None = None,
                 rng: random.Random | None = None) -> None:
        self.store = store
        self.registry = registry
        self.clock = clock or Clock()
        self.rng = rng or random.Random()
        self._now_sec = -1
        self.bookmark_interval = BOOKMARK_INTERVAL  # idle seconds before a BOOKMARK (when allowed)
        self._now_str = ""
        self.crd_listeners: list[Callable[[], None]] = []
        # checks on every create/update of the main resource before validation: (info, new, old
        # or None, opts) -> raise an ApiError to refuse (create_app adds RBAC's escalation check)
        self.write_guards: list[WriteGuard] = []
        # per-registry state of the kinds' hooks (RegistryOps.hook_state), keyed by its type
        self._hook_states: dict[type, object] = {}
        # dynamic admission: the stored Mutating/ValidatingWebhookConfigurations, called per write
        self.webhooks = WebhookAdmission(store, registry, rng=self.rng,
                                         generation=lambda: self.hook_state(WebhookConfigurationGeneration).value)
        # priority admission's globalDefault PriorityClass, re-read only after a class changed
        pcs = registry.get_resource("scheduling.k8s.io", "priorityclasses")
        self.default_priority = DefaultPriorityClass(store, pcs.list_prefix(None)) if pcs is not None else None
        # the ServiceAccount admission plugin: off unless set (`minik3s server` sets it while its
        # controllers run, as kube-apiserver enables it by default)
        self.service_accounts: ServiceAccountAdmission | None = None
        # the ResourceQuota admission plugin: on, as kube-apiserver's default chain has it (a quota
        # constrains only once the resourcequota controller wrote its status.hard)
        self.resource_quota: ResourceQuotaAdmission | None = ResourceQuotaAdmission(self.clock.now)
        # StorageObjectInUseProtection (pvc-/pv-protection finalizers): off unless set, as the
        # ServiceAccount plugin, since only the controllers remove the finalizers
        self.storage_protection = False
        # PersistentVolumeClaimResize: on, as in kube-apiserver's default chain
        self.claim_resize = True
        rqs = registry.get_resource("", "resourcequotas")
        self._quotas_info = rqs
        self._all_quotas_prefix = rqs.list_prefix(None) if rqs is not None else ""

    # ------------------------------------------------------------------ helpers
    def now(self) -> str:
        """RFC 3339 seconds; formatted once per second (every write stamps a time)."""
        dt = self.clock.now()
        sec = int(dt.timestamp())
        if sec != self._now_sec:
            self._now_sec, self._now_str = sec, rfc3339(dt)
        return self._now_str

    @property
    def _default_priority(self) -> Callable[[], JsonDict | None] | None:
        return self.default_priority.get if self.default_priority is not None else None

    # ------------------------------------------------------------------ RegistryOps for the hooks
    def strategy(self, info: ResourceInfo) -> Strategy:
        return strategy_for_resource(info)

    def stored(self, info: ResourceInfo, namespace: str | None = None) -> list[JsonDict]:
        return self.store.list(info.list_prefix(namespace if info.namespaced else None))[0]

    def count_stored(self, info: ResourceInfo, namespace: str | None = None) -> int:
        return self.store.count_after(info.list_prefix(namespace if info.namespaced else None))

    async def purge(self, info: ResourceInfo) -> int:
        n = 0
        for key in [k for k, _ in self.store.iter_after(info.key_prefix)]:
            try:
                await self.store.delete(key)
                n += 1
            except KeyNotFoundError:
                continue
        return n

    def hook_state(self, cls: type[S]) -> S:
        state = self._hook_states.get(cls)
        if state is None:
            state = self._hook_states[cls] = cls()
        return cast(S, state)

    def provide_hook_state(self, state: object) -> None:
        """Install a hook's state made by the composition root (e.g. the persisted
        service-account key) before `hook_state(type(state))` would make a default one."""
        self._hook_states[type(state)] = state

    def resources_changed(self) -> None:
        for cb in list(self.crd_listeners):
            cb()

    def subresource(self, info: ResourceInfo, name: str) -> Subresource:
        """The storage serving `<resource>/<name>`: the kind's own (pods/binding, ...), or the
        generic status / scale one when the resources table lists it; 404 otherwise."""
        rest = self.strategy(info).subresources.get(name)
        if rest is not None:
            return rest
        if name in info.subresources and name in GENERIC_SUBRESOURCES:
            return GENERIC_SUBRESOURCES[name]
        raise errors.PathNotFoundError()

    def subresource_names(self, info: ResourceInfo) -> list[str]:
        """The subresources a resource serves: the resources table's, then its kind's own."""
        names = list(info.subresources)
        names += [n for n in self.strategy(info).subresources if n not in names]
        return names

    def serves_subresource(self, info: ResourceInfo, name: str) -> bool:
        return name in info.subresources or name in self.strategy(info).subresources

    @property
    def lookup(self) -> _Lookup:
        """Synchronous reads for admission plugins: `lookup(g, r, ns, name)` and `lookup.list(g, r, ns)`."""
        return _Lookup(self)

    def _get_current(self, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict:
        obj = self.store.get(info.key(namespace if info.namespaced else None, name))
        if obj is None:
            raise errors.not_found(info.resource, info.group, name)
        return obj

    def _check_namespace_for_create(self, info: ResourceInfo, namespace: str | None, name: str = "") -> None:
        if not info.namespaced:
            return
        if not namespace:
            raise BadRequestError("the server could not find the requested resource: namespace is required")
        ns = self.store.get(f"core/namespaces//{namespace}")
        if ns is None:
            raise errors.not_found("namespaces", "", namespace)
        if (ns.get("metadata") or {}).get("deletionTimestamp"):
            # as NamespaceLifecycle admission: no kind is exempt (events included)
            what = f'{info.qualified} "{name}"' if name else info.qualified
            raise errors.ForbiddenError(
                f"{what} is forbidden: unable to create new content in namespace "
                f"{namespace} because it is being terminated",
                details={**errors.status_details(info.resource, info.group, name),
                         "causes": [{"reason": "NamespaceTerminating",
                                     "message": f"namespace {namespace} is being terminated",
                                     "field": "metadata.namespace"}]},
            )

    def _check_type(self, info: ResourceInfo, obj: Any) -> JsonDict:
        if not isinstance(obj, dict):
            raise BadRequestError("the object provided is not a JSON object")
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if api_version is not None and api_version != info.api_version:
            raise BadRequestError(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({info.api_version})")
        if kind is not None and kind != info.kind:
            raise BadRequestError(f"the kind in the data ({kind}) does not match the expected kind ({info.kind})")
        if "metadata" in obj and obj["metadata"] is not None and not isinstance(obj["metadata"], dict):
            raise BadRequestError("metadata must be an object")
        obj["apiVersion"] = info.api_version
        obj["kind"] = info.kind
        return obj

    def _decode_fields(self, info: ResourceInfo, obj: JsonDict, opts: WriteOptions, *, body: bool = False,
                       patched: Callable[[], str] | None = None,
                       undeclared: Callable[[list[str]], None] | None = None) -> None:
        """What decoding into upstream's Go types does to a request's object: drop what the
        schema does not specify and write quantities canonically (always); then
        fieldValidation: Ignore says nothing, Warn warns, Strict refuses. Duplicate fields the
        body's decoder found come first, as upstream lists them. `undeclared` sees the dropped
        fields first, whatever fieldValidation says (server-side apply's typed patch)."""
        fields = decode_fields_for(info, obj)
        if fields and undeclared is not None:
            undeclared(fields)
        if opts.field_validation == "Ignore" or not (fields or opts.duplicate_fields):
            return
        dups = opts.duplicate_fields
        if dups and info.builtin and fields:
            # a typed decoder reports a field both unknown and duplicated only as unknown
            unknown_keys = {f.rsplit(".", 1)[-1].split("[", 1)[0] for f in fields}
            dups = [d for d in dups if d[0] not in unknown_keys]
        msgs = [*(m for _, m in dups), *(f'unknown field "{f}"' for f in fields)]
        if opts.field_validation == "Strict":
            err = f"strict decoding error: {', '.join(msgs)}"
            if patched is not None:
                # the patchers' strict decode: 422 on field "patch", shown as the patch shows it
                raise errors.invalid("", "", [errors.cause("patch", f"Invalid value: {orjson.dumps(patched()).decode()}: "
                                                                   f"{err}")])
            # a create's or update's body is decoded by the handler, whose transformDecodeError
            # names the kind
            raise BadRequestError(f"{decoded_as(info, obj)}: {err}" if body else err)
        opts.warn(msgs)

    def _validate(self, info: ResourceInfo, obj: JsonDict, causes: list[JsonDict]) -> None:
        if causes:
            name = (obj.get("metadata") or {}).get("name") or ""
            raise errors.invalid(info.kind, name, causes, info.group)

    # ------------------------------------------------------------------ served versions
    # A ResourceInfo with `storage_version` (autoscaling/v1 HPAs) is a converted view: each verb
    # runs on the stored version's row, with the kind's strategy converting the request body in
    # and every object out. This is the only place the core knows about conversion.
    def _stored_info(self, info: ResourceInfo) -> ResourceInfo | None:
        if not info.converted:
            return None
        stored = self.registry.get(info.stored_group, info.storage_version, info.resource)
        if stored is None:
            raise errors.PathNotFoundError()
        return stored

    def exists(self, info: ResourceInfo, namespace: str | None, name: str) -> bool:
        """Whether the object is stored (a converted view's objects are the stored resource's)."""
        target = self._stored_info(info) or info
        return self.store.get(target.key(namespace if info.namespaced else None, name)) is not None

    def _to_storage(self, info: ResourceInfo, body: Any, opts: WriteOptions, *, creating: bool = False) -> JsonDict:
        obj = self._check_type(info, body)
        if info.stored_group != info.group:
            # decoded as its own group's wire type first (unknown fields warned or refused by the
            # served names), as upstream decodes the request version before converting. A view in
            # the stored resource's own group (autoscaling/v1) shares that group's wire model, so
            # its strategy's conversion alone decides which fields it takes.
            self._decode_fields(info, obj, opts)
        return self.strategy(info).convert_to_storage(info.version, obj, creating=creating)

    def _from_storage(self, info: ResourceInfo, obj: JsonDict) -> JsonDict:
        if obj.get("kind") == "Status":
            return obj
        return self.strategy(info).convert_from_storage(info.version, obj)

    # ------------------------------------------------------------------ reads
    def get(self, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict:
        stored = self._stored_info(info)
        if stored is not None:
            return self._from_storage(info, self._get_current(stored, namespace, name))
        return self._get_current(info, namespace, name)

    def compile_selectors(self, info: ResourceInfo, label_selector: str | None,
                          field_selector: str | None) -> Selector | None:
        preds: list[Selector] = []
        if label_selector:
            try:
                sel = parse_label_selector(label_selector)
            except ValueError as e:  # labels.Parse's own message, as NewBadRequest(err.Error())
                raise BadRequestError(str(e)) from None
            if not sel.empty:
                preds.append(_label_predicate(sel))
        if field_selector:
            try:
                terms = parse_field_selector(field_selector)
            except ValueError as e:  # fields.ParseSelector's own message
                raise BadRequestError(str(e)) from None
            for field, op, value in terms:
                getter = info.field_getter(field)
                if getter is None:
                    raise BadRequestError(f'field label not supported: {field}')
                preds.append(_field_predicate(getter, value, equal=op in ("=", "==")))
        if not preds:
            return None
        if len(preds) == 1:
            return preds[0]
        return lambda o: all(p(o) for p in preds)

    def list(self, info: ResourceInfo, namespace: str | None, opts: ListOptions) -> JsonDict:
        """The `<Kind>List` a LIST answers (see `list_page`)."""
        return self.list_page(info, namespace, opts).to_dict()

    def list_page(self, info: ResourceInfo, namespace: str | None, opts: ListOptions, *,
                  select_with: ResourceInfo | None = None) -> ListPage:
        """A LIST: every object under the prefix (namespace or all) that the selectors match, in
        key order; with `limit` one page of it, a continue token for the rest and the count left
        (`remainingItemCount`, exact: the store counts without skipping from the front)."""
        stored = self._stored_info(info)
        if stored is not None:
            # selectors by the served version's field labels (which read the stored objects)
            page = self.list_page(stored, namespace, opts, select_with=info)
            return ListPage(page.kind, info.api_version, page.metadata,
                            [self._from_storage(info, o) for o in page.items], None)
        pred = self.compile_selectors(select_with or info, opts.label_selector, opts.field_selector)
        prefix = info.list_prefix(namespace)
        rev = self.store.revision
        start_after = ""
        if opts.continue_:
            try:
                tok = orjson.loads(base64.urlsafe_b64decode(opts.continue_.encode() + b"=="))
                start_after = str(tok["start"])
                tok_rv = int(tok["rv"])
                if not 0 < tok_rv < 2**63:  # upstream decodes an int64 and refuses 0
                    raise ValueError(tok_rv)
            except Exception:  # noqa: BLE001 - any malformed token is a 400
                raise BadRequestError("continue key is not valid: incorrect encoded start resourceVersion "
                                      "(version meta.k8s.io/v1)") from None
            if tok_rv < self.store.compacted_revision:
                raise errors.GoneError(
                    "The provided continue parameter is too old to display a consistent list result. You can "
                    "start a new list without the continue parameter, or use the continue token in this "
                    "response to retrieve the remainder of the results. Continuing with the provided token "
                    "results in an inconsistent list - objects that were created, modified, or deleted between "
                    "the time the first chunk was returned and now may show up in the list.")
            rev = tok_rv
        elif opts.resource_version and opts.resource_version_match == "Exact":
            want = rv_int(opts.resource_version)
            if want < self.store.compacted_revision:
                raise errors.too_old(want, self.store.compacted_revision)
        limit = opts.limit if opts.limit and opts.limit > 0 else None
        keys: list[str] = []
        out: list[JsonDict] = []
        cont = ""
        remaining = 0
        # the page starts at the continue key by bisection, never by skipping from the front
        it = self.store.iter_after(prefix, start_after)
        if limit is None and pred is None:
            for k, obj in it:
                keys.append(k)
                out.append(obj)
        else:
            for k, obj in it:
                if pred is not None and not pred(obj):
                    continue
                if limit is not None and len(out) >= limit:
                    remaining = 1
                    break
                out.append(obj)
                keys.append(k)
            if remaining:
                last_key = keys[-1]
                if pred is None:
                    remaining = self.store.count_after(prefix, last_key)
                else:
                    remaining += sum(1 for _k, o in it if pred(o))
                cont = base64.urlsafe_b64encode(orjson.dumps({"rv": rev, "start": last_key})).decode().rstrip("=")
        meta: JsonDict = {"resourceVersion": str(rev)}
        if cont:
            meta["continue"] = cont
            meta["remainingItemCount"] = remaining
        return ListPage(info.list_kind, info.api_version, meta, out, keys)

    async def wait_fresh(self, opts: ListOptions) -> None:
        """A list at a resourceVersion the store has not reached yet (NotOlderThan, or an rv
        without a match) waits for it as upstream's watch cache does, up to FRESH_WAIT seconds,
        then is 504 "Too large resource version". An Exact or continued list, rv "" or "0" does
        not wait."""
        rv = opts.resource_version
        if not rv or rv == "0" or opts.continue_ or opts.resource_version_match == "Exact":
            return
        want = rv_int(rv)
        if want <= self.store.revision:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FRESH_WAIT
        while self.store.revision < want:
            if loop.time() >= deadline:
                raise errors.too_large_resource_version(want, self.store.revision)
            await asyncio.sleep(0.05)

    # ------------------------------------------------------------------ create
    async def create(self, info: ResourceInfo, namespace: str | None, body: Any,
                     opts: WriteOptions | None = None) -> JsonDict:
        opts = opts or WriteOptions()
        stored = self._stored_info(info)
        if stored is not None:
            return await self._create_converted(info, stored, namespace, body, opts)
        strategy = self.strategy(info)
        if strategy.create_via is not None:
            # a resource whose create is another storage's (POST bindings -> pods/binding)
            return await strategy.create_via.create(self, info, namespace, "", body, opts)
        obj = self._check_type(info, body)
        if "create" not in info.verbs:
            raise errors.MethodNotAllowedError(f"create is not supported on resources of kind \"{info.qualified}\"")
        meta = _meta(obj)
        if info.namespaced:
            body_ns = meta.get("namespace")
            if namespace and body_ns and body_ns != namespace:
                raise BadRequestError("the namespace of the provided object does not match the namespace sent "
                                      "on the request")
            namespace = namespace or body_ns
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
            namespace = None
        name = meta.get("name")
        body_named = bool(name)
        if not name:
            gen = meta.get("generateName")
            if gen and isinstance(gen, str):
                name = generate_name(gen, self.rng)
                meta["name"] = name
            else:
                raise errors.invalid(info.kind, "", [errors.cause(
                    "metadata.name", "Required value: name or generateName is required", "FieldValueRequired")],
                    info.group)
        if not isinstance(name, str):
            raise errors.invalid(info.kind, "", [errors.cause("metadata.name", "Invalid value: must be a string")],
                                 info.group)
        self._decode_fields(info, obj, opts, body=True)
        self._check_namespace_for_create(info, namespace, name)
        meta["uid"] = uuid4_string(self.rng.getrandbits(128))
        now = self.now()  # one reading for creationTimestamp and the creator's managedFields time
        meta["creationTimestamp"] = now
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(k, None)
        if "managedFields" in meta:  # sent (or recorded by a converted view): after the system fields, as Go orders them
            meta["managedFields"] = meta.pop("managedFields")
        meta.pop("generation", None)
        _drop_empty_meta(meta)
        strategy.default(obj)
        # the creator's managedFields before admission, as upstream's create handler records them:
        # what admission adds (a pod's service account, token volume, priority, tolerations) and
        # what the strategy sets at PrepareForCreate belong to no manager
        record_managed_fields(info, None, obj, opts, "Update", now)
        try:
            await admit(info.group, info.kind, "CREATE", obj, None, self.lookup,
                        default_priority=self._default_priority, service_accounts=self.service_accounts,
                        storage_protection=self.storage_protection)
        except errors.ForbiddenError as e:
            generated_from = meta.get("generateName")
            if not body_named and isinstance(generated_from, str) and not isinstance(e, ValidatingForbiddenError):
                raise _named_by_prefix(e, name, generated_from) from None
            raise
        strategy.prepare_for_create(obj)
        strategy.record_requester(obj, opts.user or APISERVER)
        finish = strategy.begin_create(self, info, obj)
        committed = False
        try:
            for guard in self.write_guards:
                guard(info, obj, None, opts)
            self._validate(info, obj, strategy.validate(obj))
            obj = await self._admission_webhooks(info, "CREATE", obj, None, opts)
            opts.warn(strategy.warnings_on_create(obj))
            quotas = self._quotas_of(namespace) if info.namespaced and namespace else None
            if quotas and self.resource_quota is not None:
                await self.resource_quota.admit(info.group, info.resource, "CREATE", obj, None, quotas,
                                                self._charge_quota, dry_run=opts.dry_run)
            if not opts.dry_run:
                _check_create_resource_version(obj)
            created = await self._store_create(info, namespace, obj, regenerate=not body_named,
                                               dry_run=opts.dry_run)
            if opts.dry_run:
                return created
            committed = True
        finally:
            if finish is not None:
                finish(committed)
        return await strategy.after_create(self, info, created)

    async def _store_create(self, info: ResourceInfo, namespace: str | None, obj: JsonDict, *,
                            regenerate: bool, dry_run: bool) -> JsonDict:
        """A create's storage step. A name the server generated from `generateName` that is
        taken is generated again, up to GENERATE_NAME_ATTEMPTS in all (kube-apiserver's
        RetryGenerateName, GA since 1.32: with five random characters, a collision is likely
        after a few thousand names of one prefix). A taken name is 409 AlreadyExists, worded as
        the server's failure to pick a name (with retryAfterSeconds 1) whenever the object has a
        `generateName` (rest.CheckGeneratedNameError). A dry run checks the name as well
        (upstream's dry-run storage refuses an existing key), and writes nothing."""
        meta = obj["metadata"]
        for attempt in range(GENERATE_NAME_ATTEMPTS):
            key = info.key(namespace, meta["name"])
            if dry_run:
                if self.store.get(key) is None:
                    return obj
            else:
                try:
                    return await self.store.create(key, obj)
                except KeyExistsError:
                    pass
            if not regenerate or attempt == GENERATE_NAME_ATTEMPTS - 1:
                break
            meta["name"] = generate_name(meta["generateName"], self.rng)
        name = meta["name"]
        generated_from = meta.get("generateName")
        if isinstance(generated_from, str) and generated_from:
            raise errors.generate_name_conflict(info.resource, info.group, name)
        raise errors.already_exists(info.resource, info.group, name)

    async def _create_converted(self, info: ResourceInfo, stored: ResourceInfo, namespace: str | None,
                                body: Any, opts: WriteOptions) -> JsonDict:
        """A create through a converted view. The creator's managedFields entry is recorded in
        the request's version (its apiVersion and field names, as upstream's field manager
        records it) before the object is converted, so the stored create records none of its
        own; a 422 names the kind the client addressed."""
        obj = self._to_storage(info, body, opts, creating=True)
        if records_managed_fields(opts, "Update", None):
            served = self._from_storage(info, obj)
            record_managed_fields(info, None, served, opts, "Update", self.now())
            managed = (served.get("metadata") or {}).get("managedFields")
            if managed:
                _meta(obj)["managedFields"] = managed
            opts = dataclasses.replace(opts, field_manager=None)  # the same warnings list
        with self._as_served(info, stored):
            created = await self.create(stored, namespace, obj, opts)
        return self._from_storage(info, created)

    @contextlib.contextmanager
    def _as_served(self, info: ResourceInfo, stored: ResourceInfo) -> Iterator[None]:
        """A 422 from the stored resource's rules names the kind the client addressed."""
        try:
            yield
        except errors.InvalidError as e:
            if (info.group, info.kind) == (stored.group, stored.kind):
                raise
            raise errors.invalid(info.kind, str(e.details.get("name") or ""), e.causes, info.group) from None

    def _record_served(self, served: ResourceInfo, old: JsonDict, new: JsonDict, opts: WriteOptions,
                       operation: str, subresource: str | None) -> None:
        """record_managed_fields for a write through a converted view: ownership computed on the
        served version's objects (its field names and apiVersion), the entries kept on `new`."""
        new_served = self._from_storage(served, new)
        record_managed_fields(served, self._from_storage(served, old), new_served, opts, operation, self.now(),
                              subresource=subresource)
        managed = (new_served.get("metadata") or {}).get("managedFields")
        if managed is not None:
            _meta(new)["managedFields"] = managed

    # ------------------------------------------------------------------ update
    async def update(self, info: ResourceInfo, namespace: str | None, name: str, obj: Any,
                     opts: WriteOptions | None = None, *, subresource: str | None = None) -> JsonDict:
        opts = opts or WriteOptions()
        stored = self._stored_info(info)
        if stored is not None:
            obj = self._to_storage(info, obj, opts)
            with self._as_served(info, stored):
                updated = await self.update(stored, namespace, name, obj, dataclasses.replace(opts, served=info),
                                            subresource=subresource)
            return self._from_storage(info, updated)
        obj = self._check_type(info, obj)
        meta = _meta(obj)
        if meta.get("name") not in (None, name):
            raise BadRequestError(
                f'the name of the object ({meta.get("name")}) does not match the name on the URL ({name})')
        if info.namespaced and meta.get("namespace") not in (None, "", namespace):
            raise BadRequestError("the namespace of the provided object does not match the namespace sent on the "
                                  "request")
        self._decode_fields(info, obj, opts, body=True)
        rv = meta.get("resourceVersion")
        expected = rv_int(rv) if rv else None
        key = info.key(namespace if info.namespaced else None, name)
        old = self.store.get(key)
        if old is None:
            # PUT creates only for the kinds whose upstream strategy has AllowCreateOnUpdate
            if subresource is None and expected is None and info.builtin and self.strategy(info).allow_create_on_update:
                meta.pop("resourceVersion", None)
                return await self.create(info, namespace, obj, opts)
            raise errors.not_found(info.resource, info.group, name)
        if expected is not None and str(expected) != (old.get("metadata") or {}).get("resourceVersion"):
            raise errors.conflict(info.resource, info.group, name)
        if expected is not None:
            try:
                return await self._write_update(info, key, old, obj, opts, subresource=subresource,
                                                expected=int(old["metadata"]["resourceVersion"]))
            except RevisionMismatchError:
                # another write landed between our read and the commit: optimistic concurrency says 409
                raise errors.conflict(info.resource, info.group, name) from None
        # no resourceVersion: an unconditional update, which upstream's GuaranteedUpdate re-applies
        # on the latest object until it lands
        for _ in range(MAX_UPDATE_RETRIES):
            try:
                return await self._write_update(info, key, old, deep_copy(obj), opts, subresource=subresource,
                                                expected=int(old["metadata"]["resourceVersion"]))
            except RevisionMismatchError:
                latest = self.store.get(key)
                if latest is None:
                    raise errors.not_found(info.resource, info.group, name) from None
                old = latest
        raise errors.conflict(info.resource, info.group, name)

    async def _write_update(self, info: ResourceInfo, key: str, old: JsonDict, new: JsonDict,
                            opts: WriteOptions, *, subresource: str | None, expected: int,
                            operation: str = "Update") -> JsonDict:
        """Apply the strategy to `new` (owned by the caller), validate, CAS-write. Raises
        RevisionMismatchError (internal) when the store moved on, which callers retry."""
        name = old["metadata"]["name"]
        strategy = self.strategy(info)
        meta = _meta(new)
        old_meta = old.get("metadata") or {}
        meta["name"] = name
        if info.namespaced:
            meta["namespace"] = old_meta.get("namespace")
        else:
            meta.pop("namespace", None)
        meta["resourceVersion"] = old_meta.get("resourceVersion")
        sub_admits = False
        if subresource is not None:
            # the subresource's own update rules (status, finalize, the trusted binding write)
            rest = self.subresource(info, subresource)
            causes = rest.prepare_update(strategy, new, old)
            sub_admits = rest.update_admission
            if sub_admits and not causes:
                await admit(info.group, info.kind, "UPDATE", new, old, self.lookup,
                            default_priority=self._default_priority, subresource=subresource)
        else:
            new_uid = meta.get("uid")
            if new_uid and new_uid != old_meta.get("uid"):
                raise errors.conflict(info.resource, info.group, name,
                                      f"Precondition failed: UID in precondition: {new_uid}, UID in object meta: "
                                      f"{old_meta.get('uid')}")
            strategy.default(new)
            strategy.prepare_for_update(new, old)
            await admit(info.group, info.kind, "UPDATE", new, old, self.lookup,
                        default_priority=self._default_priority)
            causes = strategy.validate_update(new, old)
            if opts.served is not None:  # the rules of the version the client wrote through
                causes = [*causes, *self.strategy(opts.served).validate_served_update(new, old)]
            if not causes:
                strategy.begin_update(self, info, new, old)
        # immutable metadata, whatever the client sent
        nm = _meta(new)
        _drop_empty_meta(nm)
        for k in ("uid", "creationTimestamp"):
            if k in old_meta:
                nm[k] = old_meta[k]
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            if k in old_meta:
                nm[k] = old_meta[k]
            else:
                nm.pop(k, None)
        if old_meta.get("deletionTimestamp"):
            # ValidateNoNewFinalizers: once deletion started, finalizers may only be removed
            extra = sorted(set(nm.get("finalizers") or []) - set(old_meta.get("finalizers") or []))
            if extra:
                listed = ", ".join(orjson.dumps(f).decode() for f in extra)
                causes = [*causes, errors.cause(
                    "metadata.finalizers", "Forbidden: no new finalizers can be added if the object is being "
                    f"deleted, found new finalizers []string{{{listed}}}", "FieldValueForbidden")]
        if subresource is None:
            for guard in self.write_guards:
                guard(info, new, old, opts)
        self._validate(info, new, causes)
        if subresource is None:
            validate_admission(info.group, info.kind, "UPDATE", new, old, self.lookup, claim_resize=self.claim_resize)
        if records_managed_fields(opts, operation, subresource):  # a binding records none: no clock read
            if opts.served is not None:
                self._record_served(opts.served, old, new, opts, operation, subresource)
            else:
                record_managed_fields(info, old, new, opts, operation, self.now(), subresource=subresource)
        new = await self._admission_webhooks(info, "UPDATE", new, old, opts, subresource=subresource)
        if subresource is None:
            opts.warn(strategy.warnings_on_update(new, old))
        quota_ns = old_meta.get("namespace") if (subresource is None or sub_admits) and info.namespaced else None
        quotas = self._quotas_of(quota_ns) if quota_ns else None
        if quotas and self.resource_quota is not None:
            await self.resource_quota.admit(info.group, info.resource, "UPDATE", new, old, quotas,
                                            self._charge_quota, dry_run=opts.dry_run, subresource=subresource)
        if self._should_delete_during_update(strategy, new):
            if opts.dry_run:
                return new
            try:
                deleted = await self.store.delete(key, expected_rv=expected)
            except KeyNotFoundError:
                raise errors.not_found(info.resource, info.group, name) from None
            await strategy.after_delete(self, info, deleted)
            return deleted
        if opts.dry_run:
            return new
        if new == old:
            return old  # no-op update: upstream does not bump resourceVersion
        try:
            updated = await self.store.update(key, new, expected_rv=expected)
        except KeyNotFoundError:
            raise errors.not_found(info.resource, info.group, name) from None
        await strategy.after_update(self, info, updated)
        return updated

    def _should_delete_during_update(self, strategy: Strategy, obj: JsonDict) -> bool:
        """Upstream's generic-store ShouldDeleteDuringUpdate: an update that leaves an object being
        deleted with no finalizers and a zero deletion grace period removes it."""
        meta = obj.get("metadata") or {}
        if not meta.get("deletionTimestamp") or meta.get("finalizers"):
            return False
        if meta.get("deletionGracePeriodSeconds") != 0:
            return False
        return not strategy.finalization_pending(obj)

    def _quotas_of(self, namespace: str) -> builtins.list[JsonDict]:
        """The ResourceQuotas of a namespace for the quota admission plugin; with no quota in
        the cluster (the common case) two bisections of the key index, no list."""
        info = self._quotas_info
        if info is None or not self.store.count_after(self._all_quotas_prefix):
            return []
        return self.store.list(info.list_prefix(namespace))[0]

    async def _charge_quota(self, namespace: str, name: str, mutate: Callable[[JsonDict], None]) -> None:
        """ResourceQuota admission's status write of one quota (kube-apiserver's own client),
        `mutate` re-checking the charge against the current quota on each attempt."""
        info = self._quotas_info
        if info is None:
            return
        try:
            await self.guaranteed_update(info, namespace, name, mutate,
                                         WriteOptions(field_manager="kube-apiserver", user=APISERVER),
                                         subresource="status")
        except errors.NotFoundError:
            pass  # deleted meanwhile: nothing left to charge

    async def guaranteed_update(self, info: ResourceInfo, namespace: str | None, name: str,
                                mutate: Callable[[JsonDict], JsonDict | None], opts: WriteOptions | None = None,
                                *, subresource: str | None = None, operation: str = "Update",
                                precondition_rv: int | None = None,
                                private_copy: Callable[[JsonDict], JsonDict] = deep_copy) -> JsonDict:
        """Read-modify-write with retries on concurrent modification (upstream GuaranteedUpdate).
        `mutate` gets a private copy of the current object and returns the new one (or mutates it
        in place and returns None). The copy is deep unless the caller's `private_copy` copies
        exactly the parts its `mutate` changes (the rest stays shared with the stored object,
        which is never changed in place)."""
        opts = opts or WriteOptions()
        key = info.key(namespace if info.namespaced else None, name)
        for _ in range(MAX_UPDATE_RETRIES):
            old = self.store.get(key)
            if old is None:
                raise errors.not_found(info.resource, info.group, name)
            old_rv = int(old["metadata"]["resourceVersion"])
            if precondition_rv is not None and precondition_rv != old_rv:
                raise errors.conflict(info.resource, info.group, name)
            work = private_copy(old)
            res = mutate(work)
            new = work if res is None else res
            try:
                return await self._write_update(info, key, old, new, opts, subresource=subresource,
                                                expected=old_rv, operation=operation)
            except RevisionMismatchError:
                continue
        raise errors.conflict(info.resource, info.group, name)

    # ------------------------------------------------------------------ patch
    async def patch(self, info: ResourceInfo, namespace: str | None, name: str, patch_type: str, body: Any,
                    opts: WriteOptions | None = None, *, subresource: str | None = None) -> JsonDict:
        opts = opts or WriteOptions()
        if subresource is not None:
            owner = self._stored_info(info) or info
            rest = self.subresource(owner, subresource)
            if not rest.body_is_parent:
                # a subresource of another kind (scale): its own storage patches and applies it
                return await rest.patch(self, owner, namespace, name, patch_type, body, opts)
        if patch_type == "apply":
            return await self._apply(info, namespace, name, body, opts, subresource=subresource)
        stored = self._stored_info(info)
        target = stored or info  # the row whose objects are stored (and written)
        schema = None
        if patch_type == "strategic":
            if not info.builtin:
                raise errors.UnsupportedMediaTypeError(
                    'the body of the request was in an unknown format - accepted media types include: '
                    'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml')
            schema = builtin_patch_meta(info.api_version, info.kind)
        if patch_type == "json":
            if not isinstance(body, list):
                raise BadRequestError("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        elif not isinstance(body, dict):
            raise BadRequestError("the body of the request was in an unknown format: patch must be a JSON object")
        precondition_rv: int | None = None
        if isinstance(body, dict):
            prv = (body.get("metadata") or {}).get("resourceVersion") if isinstance(body.get("metadata"), dict) \
                else None
            if prv:
                precondition_rv = rv_int(prv)

        def mutate(cur: JsonDict) -> JsonDict:
            if stored is not None:
                cur = self._from_storage(info, cur)  # the patch applies to the served version
            try:
                if patch_type == "json":
                    out = apply_json_patch(cur, body)
                elif patch_type == "merge":
                    out = apply_merge_patch(cur, body)
                else:
                    assert schema is not None
                    out = apply_strategic_merge_patch(cur, body, schema)
            except PatchError as e:
                raise e.to_api_error() from None
            if not isinstance(out, dict):
                raise errors.invalid(info.kind, name, [errors.cause("", "patched object is not an object")], info.group)
            if stored is not None:
                out = self._to_storage(info, out, opts)
            self._check_type(target, out)
            # fields the patch cannot have changed are the stored object's, checked when written
            only = patched_top_level_fields(body) if stored is None and isinstance(body, dict) else None
            bad = type_error_for(target, out, only=only)

            def shown() -> str:
                """How the patchers print the value of their 422 on field "patch": the patch as Go
                prints a map (strategic); the patched object's JSON as json-patch v4 writes it, a
                merge patch's re-encoded map with every key sorted, a JSON patch's document with
                its top-level keys sorted (json)."""
                if patch_type == "strategic":
                    return go_map_repr(body)
                if patch_type == "merge":
                    return orjson.dumps(out, option=orjson.OPT_SORT_KEYS).decode()
                return orjson.dumps(dict(sorted(out.items()))).decode()

            if bad:
                # upstream decodes the patched object into the Go type: 422 on field "patch"
                raise errors.invalid("", "", [errors.cause("patch", f"Invalid value: {orjson.dumps(shown()).decode()}: "
                                                                   f"{bad}")])
            self._decode_fields(target, out, opts, patched=shown)
            if patch_type == "json":
                # only a JSON patch's copy/move can nest deeper than its body or the live object
                # (both bounded already); after decoding, which drops a deep unknown field
                _check_patched_depth(out)
            return out

        if stored is None:
            return await self.guaranteed_update(target, namespace, name, mutate, opts, subresource=subresource,
                                                operation="Update", precondition_rv=precondition_rv)
        with self._as_served(info, stored):
            patched = await self.guaranteed_update(target, namespace, name, mutate,
                                                   dataclasses.replace(opts, served=info), subresource=subresource,
                                                   operation="Update", precondition_rv=precondition_rv)
        return self._from_storage(info, patched)

    async def _apply(self, info: ResourceInfo, namespace: str | None, name: str, body: Any, opts: WriteOptions,
                     *, subresource: str | None) -> JsonDict:
        if not isinstance(body, dict):
            raise BadRequestError("the body of the request was in an unknown format: apply configuration must be "
                                  "an object")
        if not opts.field_manager:
            raise BadRequestError("PATCH, application/apply-patch+yaml requires fieldManager to be set")
        self._check_type(info, body)
        bmeta = body.get("metadata") or {}
        if bmeta.get("name") not in (None, name):
            raise BadRequestError(
                f'the name of the object ({bmeta.get("name")}) does not match the name on the URL ({name})')
        stored = self._stored_info(info)
        target = stored or info  # the row whose objects are stored (and written)
        schema = patch_meta_for(info.api_version, info.kind) if info.builtin else None
        if info.builtin:
            # a wrongly typed value (a string for a bool, 2^64 for an int32) cannot become the typed
            # object: refused as a create's body would be, never merged and stored
            bad = type_error_for(info, body)
            if bad:
                raise BadRequestError(f"{decoded_as(info, body)}: {bad}")
        if stored is None:
            # the apply configuration is decoded as upstream decodes it into the typed object
            # before merging: unknown fields never reach the merge or managedFields
            def undeclared(fields: list[str]) -> None:
                # a built-in kind's schema has no place for them: the typed patch object cannot be
                # built, whatever fieldValidation says (a custom resource's are pruned instead)
                gvk = f"{info.api_version if info.group else '/v1'}, Kind={info.kind}"
                raise typed_patch_error(f"{namespace or ''}/{name}", gvk, sorted(
                    f"{field_path_to_smd(body, f, schema)}: field not declared in schema" for f in fields)
                ).to_api_error()

            self._decode_fields(info, body, opts, undeclared=undeclared if info.builtin else None)
        key = target.key(namespace if info.namespaced else None, name)
        for _ in range(MAX_UPDATE_RETRIES):
            live = self.store.get(key)
            if live is None and subresource is None:
                new = server_side_apply(None, body, manager=opts.field_manager, force=opts.force,
                                               schema=schema, now=self.now(), info=info)
                nm = _meta(new)
                nm["name"] = name
                if info.namespaced:
                    nm["namespace"] = namespace
                opts2 = WriteOptions(dry_run=opts.dry_run, field_manager=None, field_validation=opts.field_validation,
                                     warnings=opts.warnings, user=opts.user,
                                     authorize=opts.authorize)
                try:
                    return await self.create(info, namespace, new, opts2)
                except errors.AlreadyExistsError:
                    continue
            if live is None:
                raise errors.not_found(info.resource, info.group, name)
            base = deep_copy(live) if stored is None else self._from_storage(info, live)
            new = server_side_apply(base, body, manager=opts.field_manager, force=opts.force,
                                           schema=schema, now=self.now(), info=info, subresource=subresource)
            if stored is not None:
                new = self._to_storage(info, new, opts)
            self._decode_fields(target, new, opts)
            try:
                written = await self._write_update(target, key, live, new, WriteOptions(
                    dry_run=opts.dry_run, field_manager=None, warnings=opts.warnings, user=opts.user,
                    authorize=opts.authorize),
                    subresource=subresource, expected=int(live["metadata"]["resourceVersion"]), operation="Apply")
            except RevisionMismatchError:
                continue
            return written if stored is None else self._from_storage(info, written)
        raise errors.conflict(info.resource, info.group, name)

    # ------------------------------------------------------------------ delete
    async def delete(self, info: ResourceInfo, namespace: str | None, name: str,
                     options: DeleteOptions | None = None) -> tuple[JsonDict, bool]:
        """Returns (object or Status, finished). `finished` False means the object still exists
        (graceful deletion or finalizers pending). The kind's REST.Delete override refuses
        first (`Strategy.refuse_delete`: system PriorityClasses), before any lookup."""
        self.strategy(info).refuse_delete(name)
        return await self._store_delete(info, namespace, name, options)

    async def _store_delete(self, info: ResourceInfo, namespace: str | None, name: str,
                            options: DeleteOptions | None = None) -> tuple[JsonDict, bool]:
        """The generic Store.Delete (what DeleteCollection calls per item, past the kind's
        REST.Delete override)."""
        options = options or DeleteOptions()
        stored = self._stored_info(info)
        if stored is not None:
            res, finished = await self._store_delete(stored, namespace, name, options)
            return self._from_storage(info, res), finished
        key = info.key(namespace if info.namespaced else None, name)
        for _ in range(MAX_UPDATE_RETRIES):
            cur = self.store.get(key)
            if cur is None:
                raise errors.not_found(info.resource, info.group, name)
            # admission on DELETE: NamespaceLifecycle refuses to delete default/kube-system/kube-public
            await admit(info.group, info.kind, "DELETE", cur, None, self.lookup)
            await self._delete_webhooks(info, cur, options)
            try:
                return await self._delete_once(info, key, cur, options)
            except RevisionMismatchError:
                continue
            except KeyNotFoundError:
                # a concurrent delete won: this one is a 404, as upstream answers the loser
                raise errors.not_found(info.resource, info.group, name) from None
        raise errors.conflict(info.resource, info.group, name)

    def _check_preconditions(self, info: ResourceInfo, cur: JsonDict, pre: JsonDict | None) -> None:
        if not pre:
            return
        meta = cur.get("metadata") or {}
        uid = pre.get("uid")
        if uid and uid != meta.get("uid"):
            raise errors.conflict(info.resource, info.group, meta.get("name", ""),
                                  f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                                  f"{meta.get('uid')}")
        rv = pre.get("resourceVersion")
        if rv and str(rv) != meta.get("resourceVersion"):
            raise errors.conflict(info.resource, info.group, meta.get("name", ""),
                                  f"Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in "
                                  f"object meta: {meta.get('resourceVersion')}")

    def _deleted_status(self, info: ResourceInfo, obj: JsonDict) -> JsonDict:
        meta = obj.get("metadata") or {}
        details: JsonDict = {"name": meta.get("name"), "kind": info.resource, "uid": meta.get("uid")}
        if info.group:
            details["group"] = info.group
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}

    async def _delete_once(self, info: ResourceInfo, key: str, cur: JsonDict,
                           options: DeleteOptions) -> tuple[JsonDict, bool]:
        self._check_preconditions(info, cur, options.preconditions)
        strategy = self.strategy(info)
        meta = cur.get("metadata") or {}
        rv = int(meta["resourceVersion"])
        grace = strategy.graceful_delete_seconds(cur, options)
        policy = options.propagation_policy
        if policy is None and options.orphan_dependents is not None:
            policy = "Orphan" if options.orphan_dependents else "Background"
        if policy not in (None, "Background", "Foreground", "Orphan"):
            raise errors.invalid("DeleteOptions", "", [errors.cause(
                "propagationPolicy", f'Unsupported value: "{policy}": supported values: "Foreground", '
                '"Background", "Orphan", "nil"', "FieldValueNotSupported")], "meta.k8s.io")
        already = bool(meta.get("deletionTimestamp"))
        finalizers = list(meta.get("finalizers") or [])
        add_fin: str | None = None
        if policy == "Foreground":
            add_fin = "foregroundDeletion"
        elif policy == "Orphan":
            add_fin = "orphan"
        if add_fin and add_fin not in finalizers:
            # upstream only adds them when deletion is just starting, and replaces the other one
            other = "orphan" if add_fin == "foregroundDeletion" else "foregroundDeletion"
            finalizers = [f for f in finalizers if f != other] + [add_fin]
        if not already:
            finalizers += [f for f in strategy.delete_finalizers(cur) if f not in finalizers]
        pending = strategy.finalization_pending(cur)
        if options.dry_run:
            gone = not (finalizers or pending or (grace or 0) > 0)
            return (self._deleted_result(strategy, info, cur) if gone else cur), False
        if not finalizers and not pending and not grace:
            deleted = await self.store.delete(key, expected_rv=rv)
            await strategy.after_delete(self, info, deleted)
            return self._deleted_result(strategy, info, deleted), True
        # graceful: set or shorten deletionTimestamp / deletionGracePeriodSeconds
        new = deep_copy(cur)
        nm = new["metadata"]
        now = self.clock.now()
        changed = False
        if finalizers != list(meta.get("finalizers") or []):
            nm["finalizers"] = finalizers
            changed = True
        cur_grace = meta.get("deletionGracePeriodSeconds")
        eff_grace = grace if grace is not None else 0
        if not already:
            nm["deletionTimestamp"] = rfc3339(now + timedelta(seconds=eff_grace))
            nm["deletionGracePeriodSeconds"] = eff_grace
            changed = True
        elif cur_grace is not None and eff_grace < int(cur_grace):
            # a later delete may only shorten the grace period
            nm["deletionTimestamp"] = rfc3339(now + timedelta(seconds=eff_grace))
            nm["deletionGracePeriodSeconds"] = eff_grace
            changed = True
        if strategy.prepare_for_delete(new, self.now()):
            changed = True
        if not changed:
            return cur, False
        if nm.get("deletionGracePeriodSeconds") == 0 and not nm.get("finalizers") and not pending:
            deleted = await self.store.delete(key, expected_rv=rv)
            await strategy.after_delete(self, info, deleted)
            return self._deleted_result(strategy, info, deleted), True
        updated = await self.store.update(key, new, expected_rv=rv)
        if not already:
            await strategy.deletion_started(self, info, updated)
        return updated, False

    def _deleted_result(self, strategy: Strategy, info: ResourceInfo, obj: JsonDict) -> JsonDict:
        """ReturnDeletedObject: the object itself for the kinds that say so, else a Status."""
        return obj if strategy.return_deleted_object else self._deleted_status(info, obj)

    async def delete_collection(self, info: ResourceInfo, namespace: str | None, list_opts: ListOptions,
                                options: DeleteOptions | None = None) -> JsonDict:
        lst = self.list(info, namespace, ListOptions(label_selector=list_opts.label_selector,
                                                     field_selector=list_opts.field_selector))
        items = []
        for obj in lst["items"]:
            m = obj["metadata"]
            try:
                res, _ = await self._store_delete(info, m.get("namespace"), m["name"], options)
            except errors.NotFoundError:
                continue
            items.append(res if res.get("kind") != "Status" else obj)
        return {"kind": info.list_kind, "apiVersion": info.api_version,
                "metadata": {"resourceVersion": str(self.store.revision)}, "items": items}

    # ------------------------------------------------------------------ admission webhooks
    # Called after the kind's defaulting, built-in admission, validation and managedFields (so,
    # as upstream, fields a mutating webhook sets are owned by no manager); the kind's
    # validation runs again on an object a webhook changed. `apiserver.webhooks` has the rules.
    async def _admission_webhooks(self, info: ResourceInfo, operation: str, obj: JsonDict, old: JsonDict | None,
                                  opts: WriteOptions, *, subresource: str | None = None) -> JsonDict:
        if not self.webhooks.active():
            return obj
        if subresource is not None and not self.subresource(info, subresource).body_is_parent:
            return obj  # the storage's own write of the parent (pods/binding): admitted as its CREATE
        meta = obj.get("metadata") or {}
        wire: JsonDict = {"kind": "CreateOptions" if operation == "CREATE" else "UpdateOptions",
                          "apiVersion": "meta.k8s.io/v1"}
        if opts.dry_run:
            wire["dryRun"] = ["All"]
        if opts.field_manager:
            wire["fieldManager"] = opts.field_manager
        attrs = Attributes(info, operation, str(meta.get("name") or ""), _admission_namespace(info, meta), obj, old,
                           wire, dry_run=opts.dry_run, subresource=subresource or "", user=opts.user,
                           warnings=opts.warnings)
        if await self.webhooks.mutate(attrs) and attrs.obj is not None:
            obj = self._after_mutation(info, obj, attrs.obj, old, subresource)
            attrs.obj = obj
        await self.webhooks.validate(attrs)
        return obj

    def _after_mutation(self, info: ResourceInfo, before: JsonDict, obj: JsonDict, old: JsonDict | None,
                        subresource: str | None) -> JsonDict:
        """What upstream's storage does after mutating admission (BeforeCreate / BeforeUpdate):
        system metadata and managedFields as they were, the kind's prepare step (status reset on
        create, generation from the spec) and validation, on the object the webhooks changed."""
        bm, nm = before.get("metadata") or {}, _meta(obj)
        for k in ("name", "namespace", "uid", "creationTimestamp", "resourceVersion", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "managedFields"):
            if k in bm:
                nm[k] = bm[k]
            else:
                nm.pop(k, None)
        strategy = self.strategy(info)
        if old is None:
            strategy.prepare_for_create(obj)
            causes = strategy.validate(obj)
        elif subresource is None:
            strategy.prepare_for_update(obj, old)
            causes = strategy.validate_update(obj, old)
        else:
            causes = self.subresource(info, subresource).prepare_update(strategy, obj, old)
        _drop_empty_meta(nm)
        self._validate(info, obj, causes)
        return obj

    async def _subresource_webhooks(self, info: ResourceInfo, namespace: str | None, name: str, sub: str,
                                    body: JsonDict, opts: WriteOptions, *, operation: str = "CREATE",
                                    old: JsonDict | None = None) -> JsonDict:
        group, _, version = str(body["apiVersion"]).rpartition("/")
        wire: JsonDict = {"kind": "CreateOptions" if operation == "CREATE" else "UpdateOptions",
                          "apiVersion": "meta.k8s.io/v1"}
        if opts.dry_run:
            wire["dryRun"] = ["All"]
        if opts.field_manager and operation != "CREATE":
            wire["fieldManager"] = opts.field_manager
        attrs = Attributes(info, operation, name, (namespace or "") if info.namespaced else "", body, old, wire,
                           dry_run=opts.dry_run, subresource=sub, user=opts.user, warnings=opts.warnings,
                           object_kind={"group": group, "version": version, "kind": str(body["kind"])})
        await self.webhooks.mutate(attrs)
        await self.webhooks.validate(attrs)
        return attrs.obj if attrs.obj is not None else body

    async def admit_connect(self, info: ResourceInfo, namespace: str | None, name: str, sub: str, obj: JsonDict,
                            user: UserInfo | None) -> None:
        """CONNECT admission (pods/exec): webhooks and policies see the connect options object
        (a v1 PodExecOptions) with operation CONNECT and null options, as upstream's
        ConnectResource admits before proxying; a denial is the request's answer."""
        if not self.webhooks.active():
            return
        group, _, version = str(obj["apiVersion"]).rpartition("/")
        attrs = Attributes(info, "CONNECT", name, namespace or "", obj, None, None, subresource=sub, user=user,
                           object_kind={"group": group, "version": version, "kind": str(obj["kind"])})
        await self.webhooks.mutate(attrs)
        await self.webhooks.validate(attrs)

    async def admit_subresource_update(self, info: ResourceInfo, namespace: str | None, name: str, sub: str,
                                       obj: JsonDict, old: JsonDict, opts: WriteOptions) -> JsonDict:
        """Admission webhooks and policies for an UPDATE of a subresource of another kind
        (deployments/scale): they see the subresource's own objects (an autoscaling/v1 Scale)
        and may mutate the new one, which is returned."""
        if not self.webhooks.active():
            return obj
        return await self._subresource_webhooks(info, namespace, name, sub, obj, opts, operation="UPDATE", old=old)

    async def _delete_webhooks(self, info: ResourceInfo, cur: JsonDict, options: DeleteOptions) -> None:
        if not self.webhooks.active():
            return
        meta = cur.get("metadata") or {}
        wire: JsonDict = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}
        for k, v in (("gracePeriodSeconds", options.grace_period_seconds), ("preconditions", options.preconditions),
                     ("orphanDependents", options.orphan_dependents),
                     ("propagationPolicy", options.propagation_policy)):
            if v is not None:
                wire[k] = v
        if options.dry_run:
            wire["dryRun"] = ["All"]
        attrs = Attributes(info, "DELETE", str(meta.get("name") or ""), _admission_namespace(info, meta), None, cur,
                           wire, dry_run=options.dry_run, user=options.user)
        await self.webhooks.mutate(attrs)
        await self.webhooks.validate(attrs)

    # ------------------------------------------------------------------ watch
    async def watch(self, info: ResourceInfo, namespace: str | None, opts: WatchOptions, *,
                    select_with: ResourceInfo | None = None) -> AsyncGenerator[tuple[str, JsonDict], None]:
        """Yields (type, object). A too-old resourceVersion yields one ERROR with a 410 Status."""
        stored = self._stored_info(info)
        if stored is not None:
            # converted on the way out: every event must pass through here
            opts = dataclasses.replace(opts, direct_probe=None)
            async for typ, obj in self.watch(stored, namespace, opts, select_with=info):
                yield typ, (obj if typ in ("ERROR", "BOOKMARK") else self._from_storage(info, obj))
            return
        pred = self.compile_selectors(select_with or info, opts.label_selector, opts.field_selector)
        prefix = info.list_prefix(namespace)
        rv = opts.resource_version
        initial: list[JsonDict] = []
        if rv in (None, "", "0") or opts.send_initial_events:
            items, from_rev = self.store.list(prefix)
            initial = [o for o in items if pred is None or pred(o)]
        else:
            from_rev = rv_int(rv)
        try:
            watcher = self.store.watch(prefix, from_rev)
        except TooOldError as e:
            yield "ERROR", errors.too_old(e.requested, e.oldest).to_status()
            return
        if pred is None and opts.ready_probe is not None:
            opts.ready_probe(watcher.ready)
        return_gen = self._watch_events(watcher, initial, pred, opts, from_rev)
        async for ev in return_gen:
            yield ev

    async def _watch_events(self, watcher: Any, initial: Sequence[JsonDict], pred: Selector | None,
                            opts: WatchOptions, from_rev: int) -> AsyncIterator[tuple[str, JsonDict]]:
        try:
            for o in initial:
                yield "ADDED", o
            if opts.send_initial_events and opts.allow_bookmarks:
                yield "BOOKMARK", self._bookmark(from_rev, initial_end=True)
            if pred is None and not opts.allow_bookmarks and opts.direct_probe is not None:
                # past the initial events: from here on every event is the watcher's, as stored
                opts.direct_probe(watcher)
            last_rev = from_rev
            it = watcher.__aiter__()
            while True:
                if opts.allow_bookmarks and not watcher.ready():
                    if not await watcher.wait(self.bookmark_interval):
                        yield "BOOKMARK", self._bookmark(max(last_rev, self.store.revision))
                        continue
                try:
                    ev = await it.__anext__()
                except StopAsyncIteration:
                    return
                last_rev = ev.revision
                if pred is None:
                    yield ev.type, ev.object
                    continue
                cur_m = pred(ev.object)
                if ev.type == "ADDED":
                    if cur_m:
                        yield "ADDED", ev.object
                elif ev.type == "DELETED":
                    if cur_m:
                        yield "DELETED", ev.object
                else:
                    prev_m = ev.prev is not None and pred(ev.prev)
                    if cur_m and prev_m:
                        yield "MODIFIED", ev.object
                    elif cur_m:
                        yield "ADDED", ev.object
                    elif prev_m:
                        yield "DELETED", ev.object
        except WatchOverflowError:
            logger.info("watch closed: watcher fell behind")
            return
        finally:
            watcher.close()

    def _bookmark(self, rev: int, initial_end: bool = False) -> JsonDict:
        meta: JsonDict = {"resourceVersion": str(rev)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return {"metadata": meta}

    # ------------------------------------------------------------------ subresources
    # Typed entry points for the in-process client; HTTP reaches the same storages through
    # `subresource(info, name)`.
    async def bind(self, namespace: str, name: str, binding: Any, opts: WriteOptions | None = None) -> JsonDict:
        """pods/binding: set spec.nodeName once."""
        pods = self._builtin_info("", "pods")
        if isinstance(binding, dict):
            binding = {"apiVersion": "v1", "kind": "Binding", **binding}
        return await self.subresource_create(pods, namespace, name, "binding", binding, opts or WriteOptions())

    async def evict(self, namespace: str, name: str, eviction: Any) -> JsonDict:
        """pods/eviction with PodDisruptionBudget checks (pkg/registry/core/pod/storage/eviction.go)."""
        pods = self._builtin_info("", "pods")
        if isinstance(eviction, dict):
            eviction = {"apiVersion": "policy/v1", "kind": "Eviction", **eviction}
        return await self.subresource_create(pods, namespace, name, "eviction", eviction, WriteOptions())

    async def subresource_create(self, info: ResourceInfo, namespace: str | None, name: str, sub: str, body: Any,
                                 opts: WriteOptions) -> JsonDict:
        """POST <resource>/<name>/<sub> (pods/binding, pods/eviction): admission webhooks see a
        CREATE of the subresource with the posted object (its own kind), then its storage runs."""
        rest = self.subresource(info, sub)
        if (self.webhooks.active() and isinstance(body, dict) and not rest.body_is_parent and body.get("kind")
                and body.get("apiVersion")):
            body = await self._subresource_webhooks(info, namespace, name, sub, body, opts)
        return await rest.create(self, info, namespace, name, body, opts)

    def get_scale(self, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict:
        out = self.subresource(info, "scale").get(self, info, namespace, name)
        assert isinstance(out, dict)
        return out

    async def update_scale(self, info: ResourceInfo, namespace: str | None, name: str, scale: Any,
                           opts: WriteOptions | None = None) -> JsonDict:
        return await self.subresource(info, "scale").update(self, info, namespace, name, scale,
                                                            opts or WriteOptions())

    def _builtin_info(self, group: str, resource: str) -> ResourceInfo:
        info = self.registry.get(group, "v1", resource)
        if info is None:
            raise errors.InternalError(f"the {resource} resource is not registered")
        return info

    # ------------------------------------------------------------------ CRDs
    def load_crds(self) -> None:
        """Serve the stored CRDs again (server start)."""
        for crd in self.stored(self._builtin_info("apiextensions.k8s.io", "customresourcedefinitions")):
            register_crd(self.registry, crd)
