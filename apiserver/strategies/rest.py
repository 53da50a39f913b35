"""The registry contract that per-kind hooks and subresources see (layer L4, apiserver/strategies).

Why: kube-apiserver's generic registry (staging/src/k8s.io/apiserver/pkg/registry/generic/
registry/store.go) runs a kind's hooks (BeginCreate/AfterCreate, BeginUpdate/AfterUpdate,
AfterDelete, ShouldDeleteDuringUpdate) and serves its subresources (pods/binding, pods/eviction,
deployments/scale, namespaces/finalize) as REST storages registered by the kind. Those hooks
need the registry itself (read other objects, write through the same admission and
validation). They get it through `RegistryOps`, a protocol that `apiserver.core.ApiCore`
satisfies structurally, so the strategies never import the core (the dependency rule:
core -> strategies, not back).

Data flow: a verb in the core -> `strategy.<hook>(ops, info, obj)` -> the hook reads or writes
through `ops` -> storage. A subresource request: handler -> `core.subresource(info, name)` ->
the kind's `Subresource` object -> `ops` verbs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from minik3s.api import errors
from minik3s.api.options import DeleteOptions, WriteOptions
from minik3s.api.resources import ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict

S = TypeVar("S")

# upstream's FinishFunc: called once the create/update is committed (True) or failed (False)
FinishFunc = Callable[[bool], None]
Mutator = Callable[[JsonDict], JsonDict | None]


class RegistryOps(Protocol):
    """What a kind's hooks may ask of the registry. Every write goes through the full verb
    (strategy, admission, validation, hooks), exactly as a client's request would."""

    registry: ResourceRegistry
    rng: random.Random

    def now(self) -> str:
        """The server's current time, RFC 3339 seconds."""
        ...

    def get(self, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict:
        """The stored object (shared: never mutate) or NotFoundError."""
        ...

    def stored(self, info: ResourceInfo, namespace: str | None = None) -> list[JsonDict]:
        """Every stored object of a resource (in `namespace`, or all), sorted by key; shared."""
        ...

    def count_stored(self, info: ResourceInfo, namespace: str | None = None) -> int:
        """How many objects of a resource are stored, O(log n)."""
        ...

    async def create(self, info: ResourceInfo, namespace: str | None, body: Any,
                     opts: WriteOptions | None = None) -> JsonDict:
        """POST semantics."""
        ...

    async def update(self, info: ResourceInfo, namespace: str | None, name: str, obj: object,
                     opts: WriteOptions | None = None, *, subresource: str | None = None) -> JsonDict:
        """PUT semantics (optimistic concurrency on metadata.resourceVersion)."""
        ...

    async def patch(self, info: ResourceInfo, namespace: str | None, name: str, patch_type: str, body: object,
                    opts: WriteOptions | None = None, *, subresource: str | None = None) -> JsonDict:
        """PATCH semantics (json, merge, strategic, apply)."""
        ...

    async def admit_subresource_update(self, info: ResourceInfo, namespace: str | None, name: str, sub: str,
                                       obj: JsonDict, old: JsonDict, opts: WriteOptions) -> JsonDict:
        """Admission (webhooks, policies) of an UPDATE of a subresource of another kind, with its
        own objects (deployments/scale: autoscaling/v1 Scales); the admitted new object."""
        ...

    async def guaranteed_update(self, info: ResourceInfo, namespace: str | None, name: str, mutate: Mutator,
                                opts: WriteOptions | None = None, *, subresource: str | None = None,
                                operation: str = "Update", precondition_rv: int | None = None,
                                private_copy: Callable[[JsonDict], JsonDict] = ...) -> JsonDict:
        """Read-modify-write with retries on conflict; `mutate` gets a private copy (deep, or
        made by `private_copy` when the caller knows which parts it changes)."""
        ...

    async def delete(self, info: ResourceInfo, namespace: str | None, name: str,
                     options: DeleteOptions | None = None) -> tuple[JsonDict, bool]:
        """DELETE semantics: (object or Status, finished)."""
        ...

    async def purge(self, info: ResourceInfo) -> int:
        """Remove every stored object of a resource without hooks or finalizers (what is left
        under a removed CRD); returns how many."""
        ...

    def hook_state(self, cls: type[S]) -> S:
        """Per-registry state of a hook (e.g. the Service IPs reserved by creates in flight),
        created as `cls()` on first use; strategies themselves stay stateless."""
        ...

    def resources_changed(self) -> None:
        """The set of served resources changed (a CRD came or went): drop derived caches."""
        ...


class UpdateRules(Protocol):
    """The parts of a kind's Strategy a subresource update applies (Strategy satisfies it)."""

    def prepare_for_status_update(self, new: JsonDict, old: JsonDict) -> None: ...

    def prepare_for_update(self, new: JsonDict, old: JsonDict) -> None: ...

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]: ...

    def validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]: ...


class Subresource:
    """One subresource's REST storage (upstream: the storage registered at `<resource>/<name>`).

    `verbs`: the HTTP methods it serves (others answer 405, as upstream's router does for a
    storage without that interface). `body_is_parent`: the request body and the answer are the
    parent kind (status, finalize), so the generic update/patch path runs with `subresource`
    set; `decode_check`: the handler first checks the body decodes as the parent kind.
    `get` returning a str answers text/plain (pods/log). `takes_body`: False for a POST whose
    request carries no object (pods/exec's stream upgrade), so `create` gets `None`."""

    name = ""
    verbs: frozenset[str] = frozenset()
    # the kind's built-in admission plugins see an UPDATE of this subresource (upstream: plugins
    # whose Handles accept it, e.g. LimitRanger and ResourceQuota for pods/resize)
    update_admission = False
    takes_body = True
    body_is_parent = False
    decode_check = False
    create_status = 201

    def prepare_update(self, rules: UpdateRules, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        """Upstream's per-subresource update strategy: restrict `new` (the parent object, a
        private copy) to what this subresource may change and return validation causes. Only
        reached through a write with `subresource` set to this name."""
        raise errors.MethodNotAllowedError(f"the {self.name} subresource does not update its parent")

    def _not_allowed(self, info: ResourceInfo, name: str) -> errors.MethodNotAllowedError:
        return errors.MethodNotAllowedError(
            "the server does not allow this method on the requested resource",
            details=errors.status_details(info.resource, info.group, name))

    def get(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict | str:
        raise self._not_allowed(info, name)

    async def create(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        raise self._not_allowed(info, name)

    async def update(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        raise self._not_allowed(info, name)

    async def patch(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str,
                    patch_type: str, body: object, opts: WriteOptions) -> JsonDict:
        raise self._not_allowed(info, name)


class UpdateSubresource(Subresource):
    """A subresource that is the parent object under another update strategy (status,
    finalize): GET returns the parent, PUT/PATCH run the parent's update with `subresource`
    set, and `prepare_update` applies this subresource's rules (here: the kind's status rules;
    namespaces/finalize overrides it)."""

    body_is_parent = True

    def __init__(self, name: str, *, verbs: frozenset[str] = frozenset({"GET", "PUT", "PATCH"}),
                 decode_check: bool = True) -> None:
        self.name = name
        self.verbs = verbs
        self.decode_check = decode_check

    def get(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str) -> JsonDict | str:
        return ops.get(info, namespace, name)

    def prepare_update(self, rules: UpdateRules, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        rules.prepare_for_status_update(new, old)
        return rules.validate_status_update(new, old)

    async def update(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        return await ops.update(info, namespace, name, body, opts, subresource=self.name)

    async def patch(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str,
                    patch_type: str, body: object, opts: WriteOptions) -> JsonDict:
        return await ops.patch(info, namespace, name, patch_type, body, opts, subresource=self.name)


STATUS = UpdateSubresource("status")


def meta_of(obj: object) -> JsonDict:
    """`obj.metadata` of a request body, or 400 when the body or its metadata is not an object."""
    if not isinstance(obj, dict):
        raise errors.BadRequestError("the object provided is not a JSON object")
    m = obj.get("metadata")
    if m is None:
        return {}
    if not isinstance(m, dict):
        raise errors.BadRequestError("metadata must be an object")
    return m


def rv_int(rv: object, what: str = "resourceVersion") -> int:
    """A resourceVersion as an int, or 400 as upstream for a malformed one: ASCII decimal digits
    within uint64, as Go's strconv.ParseUint reads it (Python's int() would also take a sign,
    `1_0`, surrounding blanks and other scripts' digits)."""
    text = str(rv)
    if not (text.isascii() and text.isdigit()) or len(text) > 20 or int(text) >= 2**64:
        raise errors.BadRequestError(f'Invalid value for {what}: "{rv}"')
    return int(text)
