"""ControllerRevision history shared by the StatefulSet and DaemonSet controllers (layer L4).

After upstream `pkg/controller/history`: a revision stores a patch of the owner's pod template,
is named `<owner>-<hash>` where the hash is FNV-32a of that data (plus the owner's
`status.collisionCount`) rendered through the safe alphabet of `rand.SafeEncodeString`, and
carries a monotonically increasing `revision` number. Old revisions beyond
`revisionHistoryLimit` that no live pod uses are deleted.

Data flow: controller sync -> `revision_data`/`revision_hash` (pure) -> `ensure_revision`
creates or renumbers a ControllerRevision through the Client.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable

import orjson

from minik3s.api.errors import AlreadyExistsError, ApiError, NotFoundError
from minik3s.api.resources import CONTROLLERREVISIONS
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.controllers.common import make_controller_ref, meta

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
                          selector_labels: dict[str, str]) -> tuple[JsonDict, int]:
    """The revision for the owner's current template: reuse an equal one (renumbering it to the
    newest, as upstream does on rollback) or create it. Returns (revision, collisionCount)."""
    m = meta(owner)
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
                         "labels": {**selector_labels, CONTROLLER_REVISION_HASH: h},
                         "ownerReferences": [make_controller_ref(owner, api_version="apps/v1", kind=kind)]},
            "data": data, "revision": newest + 1,
        }
        try:
            return await client.create(CONTROLLERREVISIONS, body, m.get("namespace")), collisions
        except AlreadyExistsError:
            existing = await client.get(CONTROLLERREVISIONS, body["metadata"]["name"], m.get("namespace"))
            if existing.get("data") == data:
                return existing, collisions
            collisions += 1  # a hash collision with a different template: probe the next name


async def trim_history(client: Client, revisions: list[JsonDict], *, keep: int, live: set[str]) -> None:
    """Delete the oldest revisions no live pod uses, keeping `keep` of them."""
    old = [r for r in revisions if meta(r).get("name") not in live]
    for r in old[:max(0, len(old) - keep)]:
        try:
            await client.delete(CONTROLLERREVISIONS, meta(r)["name"], meta(r).get("namespace"))
        except NotFoundError:
            pass
