"""The request core of the API server (layer L4): every verb's semantics, transport-free.

Both the HTTP handlers (`apiserver.handlers`) and the in-process client transport call this
object, so admission, validation, resourceVersion and errors are identical on both paths.

Data flow of a write: decoded dict -> metadata rules -> strategy defaults / prepare ->
admission -> validation -> `Store` (single writer, group commit) -> watch fan-out.
Semantics follow kube-apiserver's generic registry (staging/src/k8s.io/apiserver/pkg/registry/
generic/registry/store.go): optimistic concurrency on resourceVersion, graceful deletion with
deletionTimestamp/deletionGracePeriodSeconds, finalizers, propagationPolicy finalizers.
"""

from __future__ import annotations

import base64
import copy
import logging
import random
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import timedelta
from typing import Any, cast

import orjson

from apiserver import compat
from apiserver.storage.interface import (
    KeyExistsError,
    KeyNotFoundError,
    RevisionMismatchError,
    Store,
    TooOldError,
    WatchOverflowError,
)
from apiserver.strategies import service_alloc
from minik3s.api import errors
from minik3s.api.errors import ApiError, BadRequestError
from minik3s.api.options import DeleteOptions, ListOptions, WatchOptions, WriteOptions
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.selectors import label_selector_string
from minik3s.api.types import JsonDict
from minik3s.utils.clock import Clock, rfc3339

logger = logging.getLogger(__name__)

GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
MAX_UPDATE_RETRIES = 16
BOOKMARK_INTERVAL = 30.0
POD_DEFAULT_GRACE = 30
# kinds whose upstream REST strategy allows create-on-update (a PUT of a missing object creates it)
CREATE_ON_UPDATE = frozenset({"leases", "events", "endpoints", "limitranges"})

Selector = Callable[[JsonDict], bool]


def _meta(obj: JsonDict) -> JsonDict:
    m = obj.get("metadata")
    if m is None:
        m = obj["metadata"] = {}
    elif not isinstance(m, dict):
        raise BadRequestError("metadata must be an object")
    return m


def meta_of(obj: Any) -> JsonDict:
    """`obj.metadata` of a request body, or 400 when the body or its metadata is not an object."""
    if not isinstance(obj, dict):
        raise BadRequestError("the object provided is not a JSON object")
    m = obj.get("metadata")
    if m is None:
        return {}
    if not isinstance(m, dict):
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


def _rv_int(rv: Any, what: str = "resourceVersion") -> int:
    try:
        n = int(rv)
    except (TypeError, ValueError):
        raise BadRequestError(f'Invalid value for {what}: "{rv}"') from None
    if n < 0:
        raise BadRequestError(f'Invalid value for {what}: "{rv}"')
    return n


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
        # cluster IPs / node ports handed out to Service creates that are not committed yet
        self._svc_reserved = service_alloc.Used()

    # ------------------------------------------------------------------ helpers
    def now(self) -> str:
        """RFC 3339 seconds; formatted once per second (every write stamps a time)."""
        dt = self.clock.now()
        sec = int(dt.timestamp())
        if sec != self._now_sec:
            self._now_sec, self._now_str = sec, rfc3339(dt)
        return self._now_str

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
        if (ns.get("metadata") or {}).get("deletionTimestamp") and info.resource != "events":
            what = f'{info.qualified} "{name}"' if name else info.qualified
            raise errors.ForbiddenError(
                f"{what} is forbidden: unable to create new content in namespace "
                f"{namespace} because it is being terminated",
                details={**({"name": name} if name else {}), "kind": info.resource,
                         **({"group": info.group} if info.group else {}),
                         "causes": [{"reason": "NamespaceTerminating",
                                     "message": f"namespace {namespace} is being terminated",
                                     "field": "metadata.namespace"}]},
            )

    def _allocate_service(self, info: ResourceInfo, obj: JsonDict) -> service_alloc.Used | None:
        """The service registry's allocation step: cluster IP and node ports for a new Service.
        Returns what was reserved (released by the caller once the create is committed or failed);
        422 when a requested IP/port is taken or out of range."""
        if info.group != "" or info.resource != "services" or not isinstance(obj.get("spec"), dict):
            return None
        stored = self.store.list(info.list_prefix(None))[0]
        used = service_alloc.used_from_services(stored)
        used.ips |= self._svc_reserved.ips
        used.node_ports |= self._svc_reserved.node_ports
        before = service_alloc.Used(set(used.ips), set(used.node_ports))
        causes = service_alloc.allocate(obj["spec"], used, self.rng)
        if causes:
            raise errors.invalid(info.kind, (obj.get("metadata") or {}).get("name") or "", causes, info.group)
        mine = service_alloc.Used(used.ips - before.ips, used.node_ports - before.node_ports)
        self._svc_reserved.ips |= mine.ips
        self._svc_reserved.node_ports |= mine.node_ports
        return mine

    def _allocate_service_update(self, info: ResourceInfo, new: JsonDict, old: JsonDict) -> None:
        """Keep/allocate node ports and the cluster IP when a Service changes type or ports.
        (The write that follows is a compare-and-swap on this object, so no reservation is held.)"""
        if info.group != "" or info.resource != "services":
            return
        nspec, ospec = new.get("spec"), old.get("spec")
        if not isinstance(nspec, dict) or not isinstance(ospec, dict):
            return
        uid = (old.get("metadata") or {}).get("uid")
        others = [s for s in self.store.list(info.list_prefix(None))[0] if (s.get("metadata") or {}).get("uid") != uid]
        used = service_alloc.used_from_services(others)
        used.ips |= self._svc_reserved.ips
        used.node_ports |= self._svc_reserved.node_ports
        causes = service_alloc.allocate_update(nspec, ospec, used, self.rng)
        if causes:
            raise errors.invalid(info.kind, (new.get("metadata") or {}).get("name") or "", causes, info.group)

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

    def _unknown_fields(self, info: ResourceInfo, obj: JsonDict, opts: WriteOptions) -> None:
        if opts.field_validation == "Ignore":
            return
        fields = compat.unknown_fields(info, obj)
        if not fields:
            return
        if opts.field_validation == "Strict":
            msg = ", ".join(f'unknown field "{f}"' for f in fields)
            raise BadRequestError(f"strict decoding error: {msg}")
        for f in fields:
            opts.warnings.append(f'unknown field "{f}"')

    def _validate(self, info: ResourceInfo, obj: JsonDict, causes: list[JsonDict]) -> None:
        if causes:
            name = (obj.get("metadata") or {}).get("name") or ""
            raise errors.invalid(info.kind, name, causes, info.group)

    # ------------------------------------------------------------------ reads
    def get(self, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict:
        return self._get_current(info, namespace, name)

    def compile_selectors(self, info: ResourceInfo, label_selector: str | None,
                          field_selector: str | None) -> Selector | None:
        preds: list[Selector] = []
        if label_selector:
            try:
                sel = compat.parse_label_selector(label_selector)
            except ValueError as e:
                raise BadRequestError(f"unable to parse requirement: {e}") from None
            if not sel.empty:
                preds.append(_label_predicate(sel))
        if field_selector:
            try:
                terms = compat.parse_field_selector(field_selector)
            except ValueError as e:
                raise BadRequestError(f"invalid field selector: {e}") from None
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
        pred = self.compile_selectors(info, opts.label_selector, opts.field_selector)
        prefix = info.list_prefix(namespace)
        rev = self.store.revision
        start_after = ""
        if opts.continue_:
            try:
                tok = orjson.loads(base64.urlsafe_b64decode(opts.continue_.encode() + b"=="))
                start_after = str(tok["start"])
                tok_rv = int(tok["rv"])
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
            want = _rv_int(opts.resource_version)
            if want < self.store.compacted_revision:
                raise errors.too_old(want, self.store.compacted_revision)
        limit = opts.limit if opts.limit and opts.limit > 0 else None
        out: list[JsonDict] = []
        cont = ""
        remaining = 0
        if limit is None and not start_after:
            items, rev = self.store.list(prefix)
            out = items if pred is None else [o for o in items if pred(o)]
        else:
            # the page starts at the continue key by bisection, never by skipping from the front
            last_key = ""
            it = self.store.iter_after(prefix, start_after)
            for k, obj in it:
                if pred is not None and not pred(obj):
                    continue
                if limit is not None and len(out) >= limit:
                    remaining = 1
                    break
                out.append(obj)
                last_key = k
            if remaining:
                if pred is None:
                    remaining = self.store.count_after(prefix, last_key)
                else:
                    remaining += sum(1 for _k, o in it if pred(o))
                cont = base64.urlsafe_b64encode(orjson.dumps({"rv": rev, "start": last_key})).decode().rstrip("=")
        meta: JsonDict = {"resourceVersion": str(rev)}
        if cont:
            meta["continue"] = cont
            meta["remainingItemCount"] = remaining
        return {"kind": info.list_kind, "apiVersion": info.api_version, "metadata": meta, "items": out}

    # ------------------------------------------------------------------ create
    async def create(self, info: ResourceInfo, namespace: str | None, body: Any,
                     opts: WriteOptions | None = None) -> JsonDict:
        opts = opts or WriteOptions()
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
        if not name:
            gen = meta.get("generateName")
            if gen and isinstance(gen, str):
                name = gen + "".join(self.rng.choice(GENERATE_ALPHABET) for _ in range(5))
                meta["name"] = name
            else:
                raise errors.invalid(info.kind, "", [errors.cause(
                    "metadata.name", "Required value: name or generateName is required", "FieldValueRequired")],
                    info.group)
        if not isinstance(name, str):
            raise errors.invalid(info.kind, "", [errors.cause("metadata.name", "Invalid value: must be a string")],
                                 info.group)
        self._unknown_fields(info, obj, opts)
        if meta.get("resourceVersion"):
            # upstream: "resourceVersion should not be set on objects to be created"
            raise BadRequestError("resourceVersion should not be set on objects to be created")
        self._check_namespace_for_create(info, namespace, name)
        meta["uid"] = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        meta["creationTimestamp"] = self.now()
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(k, None)
        meta.pop("generation", None)
        _drop_empty_meta(meta)
        strategy = compat.strategy_for(info)
        strategy.default(obj)
        await compat.admit(info, "CREATE", obj, None, self.lookup)
        strategy.prepare_for_create(obj)
        reserved = self._allocate_service(info, obj)
        try:
            self._validate(info, obj, strategy.validate(obj))
            compat.record_managed_fields(info, None, obj, opts, "Update", self.now())
            if opts.dry_run:
                return obj
            try:
                created = await self.store.create(info.key(namespace, name), obj)
            except KeyExistsError:
                raise errors.already_exists(info.resource, info.group, name) from None
        finally:
            if reserved is not None:
                self._svc_reserved.ips.difference_update(reserved.ips)
                self._svc_reserved.node_ports.difference_update(reserved.node_ports)
        if info.resource == "customresourcedefinitions":
            created = await self._crd_established(created)
        return created

    # ------------------------------------------------------------------ update
    async def update(self, info: ResourceInfo, namespace: str | None, name: str, obj: Any,
                     opts: WriteOptions | None = None, *, subresource: str | None = None) -> JsonDict:
        opts = opts or WriteOptions()
        obj = self._check_type(info, obj)
        meta = _meta(obj)
        if meta.get("name") not in (None, name):
            raise BadRequestError(
                f'the name of the object ({meta.get("name")}) does not match the name on the URL ({name})')
        if info.namespaced and meta.get("namespace") not in (None, "", namespace):
            raise BadRequestError("the namespace of the provided object does not match the namespace sent on the "
                                  "request")
        self._unknown_fields(info, obj, opts)
        rv = meta.get("resourceVersion")
        expected = _rv_int(rv) if rv else None
        key = info.key(namespace if info.namespaced else None, name)
        old = self.store.get(key)
        if old is None:
            # PUT creates only for the kinds whose upstream strategy has AllowCreateOnUpdate
            if subresource is None and expected is None and info.builtin and info.resource in CREATE_ON_UPDATE:
                meta.pop("resourceVersion", None)
                return await self.create(info, namespace, obj, opts)
            raise errors.not_found(info.resource, info.group, name)
        if expected is not None and str(expected) != (old.get("metadata") or {}).get("resourceVersion"):
            raise errors.conflict(info.resource, info.group, name)
        try:
            return await self._write_update(info, key, old, obj, opts, subresource=subresource,
                                            expected=int(old["metadata"]["resourceVersion"]))
        except RevisionMismatchError:
            # another write landed between our read and the commit: optimistic concurrency says 409
            raise errors.conflict(info.resource, info.group, name) from None

    async def _write_update(self, info: ResourceInfo, key: str, old: JsonDict, new: JsonDict,
                            opts: WriteOptions, *, subresource: str | None, expected: int,
                            operation: str = "Update") -> JsonDict:
        """Apply the strategy to `new` (owned by the caller), validate, CAS-write. Raises
        RevisionMismatchError (internal) when the store moved on, which callers retry."""
        name = old["metadata"]["name"]
        strategy = compat.strategy_for(info)
        meta = _meta(new)
        old_meta = old.get("metadata") or {}
        meta["name"] = name
        if info.namespaced:
            meta["namespace"] = old_meta.get("namespace")
        else:
            meta.pop("namespace", None)
        meta["resourceVersion"] = old_meta.get("resourceVersion")
        if subresource == "status":
            strategy.prepare_for_status_update(new, old)
            causes = strategy.validate_status_update(new, old)
        elif subresource == "binding":
            # pods/binding: the server's own, trusted mutation (spec.nodeName, PodScheduled)
            causes = []
        elif subresource == "finalize":
            # namespaces/finalize: only spec.finalizers may change
            strategy.prepare_for_finalize(new, old)
            causes = strategy.validate_update(new, old)
        else:
            new_uid = meta.get("uid")
            if new_uid and new_uid != old_meta.get("uid"):
                raise errors.conflict(info.resource, info.group, name,
                                      f"Precondition failed: UID in precondition: {new_uid}, UID in object meta: "
                                      f"{old_meta.get('uid')}")
            strategy.default(new)
            strategy.prepare_for_update(new, old)
            await compat.admit(info, "UPDATE", new, old, self.lookup)
            causes = strategy.validate_update(new, old)
            if not causes:
                self._allocate_service_update(info, new, old)
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
        self._validate(info, new, causes)
        compat.record_managed_fields(info, old, new, opts, operation, self.now(), subresource=subresource)
        if self._should_delete_during_update(info, new):
            if opts.dry_run:
                return new
            try:
                return await self.store.delete(key, expected_rv=expected)
            except KeyNotFoundError:
                raise errors.not_found(info.resource, info.group, name) from None
        if opts.dry_run:
            return new
        if new == old:
            return old  # no-op update: upstream does not bump resourceVersion
        try:
            updated = await self.store.update(key, new, expected_rv=expected)
        except KeyNotFoundError:
            raise errors.not_found(info.resource, info.group, name) from None
        if info.resource == "customresourcedefinitions":
            compat.register_crd(self.registry, updated)
            self._notify_crd()
        return updated

    def _should_delete_during_update(self, info: ResourceInfo, obj: JsonDict) -> bool:
        """Upstream's generic-store ShouldDeleteDuringUpdate: an update that leaves an object being
        deleted with no finalizers and a zero deletion grace period removes it."""
        meta = obj.get("metadata") or {}
        if not meta.get("deletionTimestamp") or meta.get("finalizers"):
            return False
        if meta.get("deletionGracePeriodSeconds") != 0:
            return False
        if info.resource == "namespaces":
            return not (obj.get("spec") or {}).get("finalizers")
        return True

    @staticmethod
    def _pod_deletes_at_once(pod: JsonDict) -> bool:
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        return not spec.get("nodeName") or phase in ("Succeeded", "Failed")

    async def guaranteed_update(self, info: ResourceInfo, namespace: str | None, name: str,
                                mutate: Callable[[JsonDict], JsonDict | None], opts: WriteOptions | None = None,
                                *, subresource: str | None = None, operation: str = "Update",
                                precondition_rv: int | None = None) -> JsonDict:
        """Read-modify-write with retries on concurrent modification (upstream GuaranteedUpdate).
        `mutate` gets a private deep copy of the current object and returns the new one (or
        mutates it in place and returns None)."""
        opts = opts or WriteOptions()
        key = info.key(namespace if info.namespaced else None, name)
        for _ in range(MAX_UPDATE_RETRIES):
            old = self.store.get(key)
            if old is None:
                raise errors.not_found(info.resource, info.group, name)
            old_rv = int(old["metadata"]["resourceVersion"])
            if precondition_rv is not None and precondition_rv != old_rv:
                raise errors.conflict(info.resource, info.group, name)
            work = deep_copy(old)
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
        if patch_type == "apply":
            return await self._apply(info, namespace, name, body, opts, subresource=subresource)
        schema = None
        if patch_type == "strategic":
            if not info.builtin:
                raise errors.UnsupportedMediaTypeError(
                    'the body of the request was in an unknown format - accepted media types include: '
                    'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml')
            schema = compat.patch_meta_for(info)
            if schema is None:
                raise errors.UnsupportedMediaTypeError(
                    f"strategic merge patch is not supported for {info.kind}: use application/merge-patch+json")
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
                precondition_rv = _rv_int(prv)

        def mutate(cur: JsonDict) -> JsonDict:
            try:
                if patch_type == "json":
                    out = compat.apply_json_patch(cur, body)
                elif patch_type == "merge":
                    out = compat.apply_merge_patch(cur, body)
                else:
                    assert schema is not None
                    out = compat.apply_strategic_merge_patch(cur, body, schema)
            except compat.PatchError as e:
                raise e.to_api_error() from None
            if not isinstance(out, dict):
                raise errors.invalid(info.kind, name, [errors.cause("", "patched object is not an object")], info.group)
            self._check_type(info, out)
            bad = compat.type_error(info, out)
            if bad:
                # upstream decodes the patched object into the Go type: 422 on field "patch"
                shown = compat.go_map_repr(body) if patch_type == "strategic" else orjson.dumps(out).decode()
                raise errors.invalid("", "", [errors.cause("patch", f"Invalid value: {orjson.dumps(shown).decode()}: "
                                                                   f"{bad}")])
            self._unknown_fields(info, out, opts)
            return out

        if subresource == "scale":
            return await self.patch_scale(info, namespace, name, patch_type, body, opts, schema)
        return await self.guaranteed_update(info, namespace, name, mutate, opts, subresource=subresource,
                                            operation="Update", precondition_rv=precondition_rv)

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
        key = info.key(namespace if info.namespaced else None, name)
        schema = compat.patch_meta_for(info) if info.builtin else None
        for _ in range(MAX_UPDATE_RETRIES):
            live = self.store.get(key)
            if live is None and subresource is None:
                new = compat.server_side_apply(None, body, manager=opts.field_manager, force=opts.force,
                                               schema=schema, now=self.now(), info=info)
                nm = _meta(new)
                nm["name"] = name
                if info.namespaced:
                    nm["namespace"] = namespace
                opts2 = WriteOptions(dry_run=opts.dry_run, field_manager=None, field_validation=opts.field_validation,
                                     warnings=opts.warnings)
                try:
                    return await self.create(info, namespace, new, opts2)
                except errors.AlreadyExistsError:
                    continue
            if live is None:
                raise errors.not_found(info.resource, info.group, name)
            new = compat.server_side_apply(deep_copy(live), body, manager=opts.field_manager, force=opts.force,
                                           schema=schema, now=self.now(), info=info, subresource=subresource)
            self._unknown_fields(info, new, opts)
            try:
                return await self._write_update(info, key, live, new, WriteOptions(
                    dry_run=opts.dry_run, field_manager=None, warnings=opts.warnings),
                    subresource=subresource, expected=int(live["metadata"]["resourceVersion"]), operation="Apply")
            except RevisionMismatchError:
                continue
        raise errors.conflict(info.resource, info.group, name)

    # ------------------------------------------------------------------ delete
    async def delete(self, info: ResourceInfo, namespace: str | None, name: str,
                     options: DeleteOptions | None = None) -> tuple[JsonDict, bool]:
        """Returns (object or Status, finished). `finished` False means the object still exists
        (graceful deletion or finalizers pending)."""
        options = options or DeleteOptions()
        key = info.key(namespace if info.namespaced else None, name)
        for _ in range(MAX_UPDATE_RETRIES):
            cur = self.store.get(key)
            if cur is None:
                raise errors.not_found(info.resource, info.group, name)
            # admission on DELETE: NamespaceLifecycle refuses to delete default/kube-system/kube-public
            await compat.admit(info, "DELETE", cur, None, self.lookup)
            try:
                return await self._delete_once(info, key, cur, options)
            except RevisionMismatchError:
                continue
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
        meta = cur.get("metadata") or {}
        rv = int(meta["resourceVersion"])
        grace: int | None = None
        if info.resource == "pods":
            if options.grace_period_seconds is not None:
                grace = max(0, options.grace_period_seconds)
            else:
                tg = (cur.get("spec") or {}).get("terminationGracePeriodSeconds")
                grace = int(tg) if tg is not None else POD_DEFAULT_GRACE
            if self._pod_deletes_at_once(cur):
                grace = 0
        policy = options.propagation_policy
        if policy is None and options.orphan_dependents is not None:
            policy = "Orphan" if options.orphan_dependents else "Background"
        if policy not in (None, "Background", "Foreground", "Orphan"):
            raise errors.invalid("DeleteOptions", "", [errors.cause(
                "propagationPolicy", f'Unsupported value: "{policy}": supported values: "Foreground", '
                '"Background", "Orphan", "nil"', "FieldValueNotSupported")])
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
        pending_namespace = info.resource == "namespaces" and bool((cur.get("spec") or {}).get("finalizers"))
        already = bool(meta.get("deletionTimestamp"))
        if options.dry_run:
            return (cur if (finalizers or pending_namespace or (grace or 0) > 0) else
                    (cur if info.resource == "pods" else self._deleted_status(info, cur))), False
        if not finalizers and not pending_namespace and not grace:
            if already and info.resource == "pods" and meta.get("deletionGracePeriodSeconds") is None:
                pass
            deleted = await self.store.delete(key, expected_rv=rv)
            if info.resource == "customresourcedefinitions":
                await self._crd_removed(deleted)
            return (deleted if info.resource == "pods" else self._deleted_status(info, deleted)), True
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
        if info.resource == "namespaces":
            st = new.setdefault("status", {})
            if st.get("phase") != "Terminating":
                st["phase"] = "Terminating"
                changed = True
        if not changed:
            return cur, False
        if nm.get("deletionGracePeriodSeconds") == 0 and not nm.get("finalizers") and not pending_namespace:
            deleted = await self.store.delete(key, expected_rv=rv)
            return (deleted if info.resource == "pods" else self._deleted_status(info, deleted)), True
        updated = await self.store.update(key, new, expected_rv=rv)
        return updated, False

    async def delete_collection(self, info: ResourceInfo, namespace: str | None, list_opts: ListOptions,
                                options: DeleteOptions | None = None) -> JsonDict:
        lst = self.list(info, namespace, ListOptions(label_selector=list_opts.label_selector,
                                                     field_selector=list_opts.field_selector))
        items = []
        for obj in lst["items"]:
            m = obj["metadata"]
            try:
                res, _ = await self.delete(info, m.get("namespace"), m["name"], options)
            except errors.NotFoundError:
                continue
            items.append(res if res.get("kind") != "Status" else obj)
        return {"kind": info.list_kind, "apiVersion": info.api_version,
                "metadata": {"resourceVersion": str(self.store.revision)}, "items": items}

    # ------------------------------------------------------------------ watch
    async def watch(self, info: ResourceInfo, namespace: str | None, opts: WatchOptions
                    ) -> AsyncIterator[tuple[str, JsonDict]]:
        """Yields (type, object). A too-old resourceVersion yields one ERROR with a 410 Status."""
        pred = self.compile_selectors(info, opts.label_selector, opts.field_selector)
        prefix = info.list_prefix(namespace)
        rv = opts.resource_version
        initial: list[JsonDict] = []
        if rv in (None, "", "0") or opts.send_initial_events:
            items, from_rev = self.store.list(prefix)
            initial = [o for o in items if pred is None or pred(o)]
        else:
            from_rev = _rv_int(rv)
        try:
            watcher = self.store.watch(prefix, from_rev)
        except TooOldError as e:
            yield "ERROR", errors.too_old(e.requested, e.oldest).to_status()
            return
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
    async def bind(self, namespace: str, name: str, binding: Any, opts: WriteOptions | None = None) -> JsonDict:
        """pods/binding and namespaces/{ns}/bindings: set spec.nodeName once."""
        if not isinstance(binding, dict):
            raise BadRequestError("the object provided is not a JSON object")
        target = binding.get("target") or {}
        node = target.get("name") if isinstance(target, dict) else None
        if not node:
            raise errors.invalid("Binding", name, [errors.cause("target.name", "Required value",
                                                                "FieldValueRequired")])
        if target.get("kind") not in (None, "", "Node"):
            raise errors.invalid("Binding", name, [errors.cause(
                "target.kind", f'Invalid value: "{target.get("kind")}": must be empty or \'Node\'')])
        pods = self.registry.get("", "v1", "pods")
        assert pods is not None
        bmeta = meta_of(binding)
        want_uid = bmeta.get("uid")
        annotations = bmeta.get("annotations") or {}
        if not isinstance(annotations, dict):
            raise BadRequestError("metadata.annotations must be an object")
        now = self.now()

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

        await self.guaranteed_update(pods, namespace, name, mutate, opts, subresource="binding")
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    async def evict(self, namespace: str, name: str, eviction: Any) -> JsonDict:
        """pods/eviction with PodDisruptionBudget checks (pkg/registry/core/pod/storage/eviction.go)."""
        return await compat.evict(self, namespace, name, eviction)

    # scale -------------------------------------------------------------
    def get_scale(self, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict:
        obj = self._get_current(info, namespace, name)
        return self._to_scale(info, obj)

    @staticmethod
    def _to_scale(info: ResourceInfo, obj: JsonDict) -> JsonDict:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        sel = spec.get("selector") or {}
        if isinstance(sel, dict) and ("matchLabels" in sel or "matchExpressions" in sel):
            selector = label_selector_string(sel) or ""
        elif isinstance(sel, dict):
            selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
        else:
            selector = ""
        return {
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid"),
                         "resourceVersion": meta.get("resourceVersion"),
                         "creationTimestamp": meta.get("creationTimestamp")},
            "spec": {"replicas": int(spec.get("replicas") or 0)},
            "status": {"replicas": int(status.get("replicas") or 0), "selector": selector},
        }

    async def update_scale(self, info: ResourceInfo, namespace: str | None, name: str, scale: Any,
                           opts: WriteOptions | None = None) -> JsonDict:
        if not isinstance(scale, dict):
            raise BadRequestError("the object provided is not a JSON object")
        replicas = (scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise errors.invalid("Scale", name, [errors.cause(
                "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0")], "autoscaling")
        rv = meta_of(scale).get("resourceVersion")
        pre = _rv_int(rv) if rv else None

        def mutate(obj: JsonDict) -> None:
            obj.setdefault("spec", {})["replicas"] = replicas

        updated = await self.guaranteed_update(info, namespace, name, mutate, opts, precondition_rv=pre)
        return self._to_scale(info, updated)

    async def patch_scale(self, info: ResourceInfo, namespace: str | None, name: str, patch_type: str, body: Any,
                          opts: WriteOptions, schema: Any) -> JsonDict:
        cur = self.get_scale(info, namespace, name)
        try:
            if patch_type == "json":
                new = compat.apply_json_patch(cur, body)
            else:
                new = compat.apply_merge_patch(cur, body)
        except compat.PatchError as e:
            raise e.to_api_error() from None
        return await self.update_scale(info, namespace, name, new, opts)

    # ------------------------------------------------------------------ CRDs
    def _notify_crd(self) -> None:
        for cb in list(self.crd_listeners):
            cb()

    async def _crd_established(self, crd: JsonDict) -> JsonDict:
        compat.register_crd(self.registry, crd)
        self._notify_crd()
        names = (crd.get("spec") or {}).get("names") or {}
        now = self.now()
        crds = self.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert crds is not None

        def mutate(o: JsonDict) -> None:
            st = o.setdefault("status", {})
            st["acceptedNames"] = names
            st["storedVersions"] = [v.get("name") for v in (o.get("spec") or {}).get("versions") or []
                                    if v.get("storage")] or st.get("storedVersions") or []
            st["conditions"] = [
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": now, "reason": "NoConflicts",
                 "message": "no conflicts found"},
                {"type": "Established", "status": "True", "lastTransitionTime": now, "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted"},
            ]

        try:
            return await self.guaranteed_update(crds, None, crd["metadata"]["name"], mutate, subresource="status")
        except ApiError:
            return crd

    async def _crd_removed(self, crd: JsonDict) -> None:
        """Remove the served resource and its stored objects (upstream's customresourcecleanup)."""
        infos = compat.unregister_crd(self.registry, crd)
        self._notify_crd()
        for info in infos:
            items, _ = self.store.list(info.key_prefix)
            for obj in items:
                m = obj.get("metadata") or {}
                try:
                    await self.store.delete(info.key(m.get("namespace") if info.namespaced else None, m["name"]))
                except KeyNotFoundError:
                    pass

    def load_crds(self) -> None:
        items, _ = self.store.list("apiextensions.k8s.io/customresourcedefinitions/")
        for crd in items:
            compat.register_crd(self.registry, crd)
