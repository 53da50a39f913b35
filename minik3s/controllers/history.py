"""ControllerRevision history shared by the StatefulSet and DaemonSet controllers (layer L4).

After upstream `pkg/controller/history`: a revision stores a patch of the owner's pod template,
is named `<owner>-<hash>` where the hash is FNV-32a of that data (plus the owner's
`status.collisionCount`) rendered through the safe alphabet of `rand.SafeEncodeString`, and
carries a monotonically increasing `revision` number. Old revisions beyond
`revisionHistoryLimit` that no live pod uses are deleted.

Revisions carry the owner's pod-template labels plus `controller-revision-hash`, and the
owner's annotations (upstream newRevision / the DaemonSet snapshot copy them). Orphaned
revisions (and pods) are claimed as upstream's ControllerRefManager does: an object the owner
controls but no longer selects is released, a matching orphan is adopted after a fresh read
shows the owner is not being deleted (`claim_objects`).

Data flow: controller sync -> `revision_data`/`revision_hash` (pure) -> `ensure_revision`
creates or renumbers a ControllerRevision through the Client; `claim_objects` patches
ownerReferences.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterable

import orjson

from minik3s.api.errors import AlreadyExistsError, ApiError, ConflictError, NotFoundError
from minik3s.api.resources import CONTROLLERREVISIONS, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.controllers.common import controller_ref, is_deleting, make_controller_ref, meta

logger = logging.getLogger(__name__)

CONTROLLER_REVISION_HASH = "controller-revision-hash"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """rand.SafeEncodeString: each character mapped into a vowel-free alphabet."""
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in s)


def revision_data(owner: JsonDict) -> JsonDict:
    """The patch a revision stores: the pod template with `$patch: replace`."""
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def revision_hash(data: JsonDict, collision_count: int | None) -> str:
    raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    if collision_count:
        raw += str(collision_count).encode()
    return safe_encode(str(fnv32a(raw)))


def owned_revisions(revisions: Iterable[JsonDict], owner: JsonDict) -> list[JsonDict]:
    uid = meta(owner).get("uid")
    out = [r for r in revisions
           if any(ref.get("uid") == uid and ref.get("controller") for ref in meta(r).get("ownerReferences") or [])]
    out.sort(key=lambda r: (int(r.get("revision") or 0), meta(r).get("name") or ""))
    return out


async def ensure_revision(client: Client, owner: JsonDict, revisions: list[JsonDict], *, kind: str,
                          labels: dict[str, str] | None = None) -> tuple[JsonDict, int]:
    """The revision for the owner's current template: reuse an equal one (renumbering it to the
    newest, as upstream does on rollback) or create it with the template's labels (or `labels`)
    and the owner's annotations. Returns (revision, collisionCount)."""
    m = meta(owner)
    if labels is None:
        labels = dict((((owner.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})
    data = revision_data(owner)
    collisions = int((owner.get("status") or {}).get("collisionCount") or 0)
    newest = max((int(r.get("revision") or 0) for r in revisions), default=0)
    for r in revisions:
        if r.get("data") == data:
            if int(r.get("revision") or 0) != newest:
                renumbered = copy.deepcopy(r)
                renumbered["revision"] = newest + 1
                try:
                    return await client.update(CONTROLLERREVISIONS, renumbered), collisions
                except ApiError as e:
                    logger.info("controllerrevision renumber failed name=%s err=%r", meta(r).get("name"), e)
            return r, collisions
    while True:
        h = revision_hash(data, collisions)
        body: JsonDict = {
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": f"{m.get('name')}-{h}", "namespace": m.get("namespace"),
                         "labels": {**labels, CONTROLLER_REVISION_HASH: h},
                         "ownerReferences": [make_controller_ref(owner, api_version="apps/v1", kind=kind)]},
            "data": data, "revision": newest + 1,
        }
        if m.get("annotations"):
            body["metadata"]["annotations"] = dict(m["annotations"])
        try:
            return await client.create(CONTROLLERREVISIONS, body, m.get("namespace")), collisions
        except AlreadyExistsError:
            existing = await client.get(CONTROLLERREVISIONS, body["metadata"]["name"], m.get("namespace"))
            if existing.get("data") == data:
                return existing, collisions
            collisions += 1  # a hash collision with a different template: probe the next name


async def trim_history(client: Client, revisions: list[JsonDict], *, keep: int, live: set[str]) -> None:
    """StatefulSet truncateHistory: delete the oldest revisions not in `live` (the current and
    update revisions and those of the set's pods) until `keep` such revisions remain."""
    old = [r for r in revisions if meta(r).get("name") not in live]
    for r in old[:max(0, len(old) - keep)]:
        try:
            await client.delete(CONTROLLERREVISIONS, meta(r)["name"], meta(r).get("namespace"))
        except NotFoundError:
            pass


async def cleanup_history(client: Client, old: list[JsonDict], *, keep: int, live_hashes: set[str]) -> None:
    """DaemonSet cleanupHistory: `old` (every revision but the current one) may hold `keep`
    entries; the surplus is deleted oldest first, skipping revisions whose hash a pod still
    carries (they count towards the surplus all the same).

    Example: old [A(live), B, C], keep 1 -> 2 to remove -> B and C go, A stays."""
    to_kill = len(old) - keep
    if to_kill <= 0:
        return
    for r in sorted(old, key=lambda r: int(r.get("revision") or 0)):
        if to_kill <= 0:
            break
        if str((meta(r).get("labels") or {}).get(CONTROLLER_REVISION_HASH) or "") in live_hashes:
            continue
        try:
            await client.delete(CONTROLLERREVISIONS, meta(r)["name"], meta(r).get("namespace"))
        except NotFoundError:
            pass
        to_kill -= 1


async def claim_objects(client: Client, res: ResourceInfo, owner: JsonDict, owner_res: ResourceInfo,
                        objs: Iterable[JsonDict], *, match: Callable[[JsonDict], bool], kind: str,
                        adopt: bool = True, release: bool = True) -> list[JsonDict]:
    """ControllerRefManager.ClaimObject over `objs` (objects of `res` in the owner's namespace):
    returns those the owner controls and `match`es. An object it controls but no longer matches
    is released (unless the owner is being deleted); a matching, live orphan is adopted after an
    uncached read confirms the owner still exists under the same uid and is not being deleted
    (RecheckDeletionTimestamp). Objects controlled by someone else are left alone."""
    m = meta(owner)
    uid = m.get("uid")
    out: list[JsonDict] = []
    can_adopt: bool | None = None
    for obj in objs:
        ref = controller_ref(obj)
        om = meta(obj)
        if ref is not None:
            if ref.get("uid") != uid:
                continue
            if match(obj):
                out.append(obj)
            elif release and not is_deleting(owner):
                refs = [r for r in om.get("ownerReferences") or [] if r.get("uid") != uid]
                patch = {"metadata": {"ownerReferences": refs or None, "uid": om.get("uid")}}
                try:
                    await client.patch(res, om["name"], patch, om.get("namespace"), read_only=True)
                except (NotFoundError, ConflictError):
                    pass
            continue
        if not adopt or is_deleting(owner) or is_deleting(obj) or not match(obj):
            continue
        if om.get("namespace") != m.get("namespace"):
            continue
        if can_adopt is None:
            try:
                fresh = await client.get(owner_res, str(m.get("name")), m.get("namespace"))
                can_adopt = meta(fresh).get("uid") == uid and not is_deleting(fresh)
            except NotFoundError:
                can_adopt = False
        if not can_adopt:
            continue
        refs = [dict(r) for r in om.get("ownerReferences") or []]
        refs.append(make_controller_ref(owner, api_version="apps/v1", kind=kind))
        patch = {"metadata": {"ownerReferences": refs, "uid": om.get("uid")}}
        try:
            out.append(await client.patch(res, om["name"], patch, om.get("namespace")))
        except NotFoundError:
            pass
    return out
