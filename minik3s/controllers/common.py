"""Helpers every embedded controller shares (layer L4, inside `minik3s.controllers`).

Mirrors the small pieces of kube-controller-manager's `pkg/controller` (controller_utils.go),
`pkg/api/v1/pod` (IsPodReady, IsPodAvailable) and apimachinery's intstr scaling that several
controllers need: owner references, pod readiness, int-or-percent arithmetic, condition
upserts. (Their event recorder is minik3s.client.record's.)

Data flow: controllers read informer objects (shared, read-only) -> these pure functions ->
controllers write through the `Client`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from minik3s.api.errors import ApiError, ConflictError
from minik3s.api.helpers.pods import pod_condition
from minik3s.api.types import JsonDict
from minik3s.client.informer import Informer
from minik3s.client.workqueue import ShutDownError
from minik3s.utils.clock import Clock, parse_time, rfc3339

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- metadata


def meta(obj: JsonDict) -> JsonDict:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def controller_ref(obj: JsonDict) -> JsonDict | None:
    """The ownerReference with `controller: true` (metav1.GetControllerOf)."""
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict_or_none(ref)
    return None


# --------------------------------------------------------------------------- pods by owner

# controller.PodControllerUIDIndex: every pod under its controller's uid, or under its
# namespace's orphan key when no ownerReference has `controller: true`. A controller reads its
# own pods and the adoptable orphans from the index (controller.FilterPodsByOwner) instead of
# walking every pod of the namespace on each sync.
POD_CONTROLLER_UID_INDEX = "controllerUID"
_ORPHAN_PREFIX = "orphan/"  # uids carry no "/", so an orphan key never equals a uid


def orphan_pod_index_key(namespace: str) -> str:
    return _ORPHAN_PREFIX + namespace


def pod_controller_uid_index(pod: JsonDict) -> list[str]:
    ref = controller_ref(pod)
    if ref is not None:
        return [str(ref.get("uid") or "")]
    return [orphan_pod_index_key(str(meta(pod).get("namespace") or ""))]


def pods_by_owner(pod_informer: Informer, owner: JsonDict, *, include_orphans: bool) -> list[JsonDict]:
    """controller.FilterPodsByOwner: the pods whose controller is `owner` (by uid) and, with
    `include_orphans`, the namespace's pods that have no controller. The informer must carry
    `POD_CONTROLLER_UID_INDEX` (see `pod_controller_uid_index`)."""
    owned, orphans = owned_and_orphan_pods(pod_informer, owner, orphans=include_orphans)
    return owned + orphans


def owned_and_orphan_pods(pod_informer: Informer, owner: JsonDict, *, orphans: bool = True
                          ) -> tuple[list[JsonDict], list[JsonDict]]:
    """`pods_by_owner` as its two halves: every pod of the first list has `owner` as its
    controller; no pod of the second has a controller (empty unless `orphans`)."""
    m = meta(owner)
    owned = pod_informer.by_index(POD_CONTROLLER_UID_INDEX, str(m.get("uid") or ""))
    if not orphans:
        return owned, []
    return owned, pod_informer.by_index(POD_CONTROLLER_UID_INDEX, orphan_pod_index_key(str(m.get("namespace") or "")))


def dict_or_none(v: Any) -> JsonDict | None:
    return v if isinstance(v, dict) else None


def make_controller_ref(owner: JsonDict, *, api_version: str, kind: str) -> JsonDict:
    """metav1.NewControllerRef: controller and blockOwnerDeletion both true."""
    m = meta(owner)
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": m.get("name"),
        "uid": m.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_deleting(obj: JsonDict) -> bool:
    return bool(meta(obj).get("deletionTimestamp"))


def creation_time(obj: JsonDict) -> datetime | None:
    return parse_time(meta(obj).get("creationTimestamp"))


# --------------------------------------------------------------------------- pods


def is_pod_available(pod: JsonDict, min_ready_seconds: int, now: datetime) -> bool:
    """podutil.IsPodAvailable: Ready, and Ready since at least minReadySeconds.

    Example: minReadySeconds 10, Ready since 12:00:00: not yet available at 12:00:10, available
    at 12:00:10.5."""
    c = pod_condition(pod, "Ready")
    if not c or c.get("status") != "True":
        return False
    return ready_long_enough(parse_time(c.get("lastTransitionTime")) if min_ready_seconds > 0 else None,
                             min_ready_seconds, now)


def ready_long_enough(since: datetime | None, min_ready_seconds: int, now: datetime) -> bool:
    """The time half of IsPodAvailable for a Ready pod: no minReadySeconds, or Ready since a
    known time that lies strictly more than minReadySeconds before `now` (upstream's
    `LastTransitionTime.Add(minReadySeconds).Before(now)`)."""
    return ready_before(since, available_cutoff(min_ready_seconds, now))


def available_cutoff(min_ready_seconds: int, now: datetime) -> datetime | None:
    """The instant a Ready pod's lastTransitionTime must lie strictly before for the pod to be
    available (`now - minReadySeconds`); None without minReadySeconds (Ready is enough). A
    controller counting many pods computes it once (see `ready_before`)."""
    return now - timedelta(seconds=min_ready_seconds) if min_ready_seconds > 0 else None


def ready_before(since: datetime | None, cutoff: datetime | None) -> bool:
    """Whether a Ready pod, Ready since `since`, is available given `available_cutoff`."""
    return cutoff is None or (since is not None and since < cutoff)


def is_pod_active(pod: JsonDict) -> bool:
    """controller.IsPodActive: not Succeeded/Failed and not being deleted."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not is_deleting(pod)


def is_pod_terminal(pod: JsonDict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


# --------------------------------------------------------------------------- int or percent


def scaled_value(value: int | str | None, total: int, *, round_up: bool, default: int = 0) -> int:
    """intstr.GetScaledValueFromIntOrPercent.

    `"25%"` of 10 is 2.5 -> 3 rounding up (maxSurge), 2 rounding down (maxUnavailable).
    Raises ValueError on a malformed string, as upstream returns an error."""
    if value is None:
        return default
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    s = str(value)
    if not s.endswith("%"):
        try:
            return int(s)
        except ValueError:
            raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage: {s!r}") from None
    try:
        pct = int(s[:-1])
    except ValueError:
        raise ValueError(f"invalid value for IntOrString: invalid value {s!r}") from None
    # integer arithmetic avoids float error: ceil(pct*total/100) or floor(pct*total/100)
    return -((-pct * total) // 100) if round_up else (pct * total) // 100


# --------------------------------------------------------------------------- conditions


def set_condition(conditions: list[JsonDict], new: JsonDict, *, now: str, update_time_field: str | None = None) -> bool:
    """Upsert a condition by type. Keeps lastTransitionTime when the status is unchanged.

    Returns True when something changed (status, reason or message)."""
    for i, cur in enumerate(conditions):
        if cur.get("type") != new.get("type"):
            continue
        if (cur.get("status"), cur.get("reason"), cur.get("message")) == (
            new.get("status"), new.get("reason"), new.get("message")):
            return False
        merged = dict(new)
        merged["lastTransitionTime"] = cur.get("lastTransitionTime", now) if cur.get("status") == new.get("status") else now
        if update_time_field:
            merged[update_time_field] = now
        conditions[i] = merged
        return True
    merged = dict(new)
    merged.setdefault("lastTransitionTime", now)
    if update_time_field:
        merged.setdefault(update_time_field, now)
    conditions.append(merged)
    return True


def now_str(clock: Clock) -> str:
    return rfc3339(clock.now())


def get_int(d: JsonDict | None, key: str, default: int = 0) -> int:
    if not d:
        return default
    v: Any = d.get(key)
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else default


# --------------------------------------------------------------------------- workers


SyncFn = Callable[[str], Awaitable[None]]


async def run_workers(queue: Any, sync: SyncFn, *, workers: int, name: str) -> None:
    """Run `workers` tasks popping keys from a client-go style WorkQueue until cancelled.

    A sync that raises is retried with the queue's rate limiter (5 ms doubling, as
    client-go's default controller rate limiter); a clean sync forgets the key's backoff. A
    worker lets the event loop run between keys: a sync that never suspends (it reads caches,
    the in-process API answers at once) re-queueing keys would otherwise hold the loop, and with
    it the whole server, for as long as the queue is not empty."""

    async def worker() -> None:
        while True:
            await asyncio.sleep(0)
            try:
                key = await queue.get()
            except ShutDownError:
                return
            try:
                await sync(key)
            except asyncio.CancelledError:
                raise
            except ConflictError as e:  # a stale cache; the next sync reads the newer object
                logger.debug("%s: conflict key=%s err=%r; requeued", name, key, e)
                queue.add_rate_limited(key)
            except ApiError as e:
                logger.info("%s: sync failed key=%s err=%r; requeued", name, key, e)
                queue.add_rate_limited(key)
            except Exception:
                logger.exception("%s: sync crashed key=%s; requeued", name, key)
                queue.add_rate_limited(key)
            else:
                queue.forget(key)
            finally:
                queue.done(key)

    async with asyncio.TaskGroup() as tg:
        for i in range(max(1, workers)):
            tg.create_task(worker(), name=f"{name}-worker-{i}")


# --------------------------------------------------------------------------- taints


def toleration_tolerates(tol: JsonDict, taint: JsonDict) -> bool:
    """v1.Toleration.ToleratesTaint: effect (empty = all), key (empty + Exists = all keys),
    operator Exists or Equal (the default) on the value."""
    effect = tol.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = tol.get("key") or ""
    op = tol.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if not key and op != "Exists":
        return False
    if op == "Exists":
        return True
    return (tol.get("value") or "") == (taint.get("value") or "")


def matching_tolerations(taints: list[JsonDict], tolerations: list[JsonDict]) -> tuple[bool, list[JsonDict]]:
    """GetMatchingTolerations: (all taints tolerated, the tolerations used)."""
    used: list[JsonDict] = []
    for taint in taints:
        found = False
        for tol in tolerations:
            if toleration_tolerates(tol, taint):
                used.append(tol)
                found = True
                break
        if not found:
            return False, []
    return True, used


def min_toleration_seconds(tolerations: list[JsonDict]) -> float:
    """getMinTolerationTime: 0 = evict now, -1 = tolerated forever, else the minimum
    tolerationSeconds. Example: [300, unset] -> 300; [] -> 0; [unset] -> -1; [-5] -> 0."""
    if not tolerations:
        return 0.0
    best: float | None = None
    for tol in tolerations:
        ts = tol.get("tolerationSeconds")
        if ts is None:
            continue
        if ts <= 0:
            return 0.0
        if best is None or ts < best:
            best = float(ts)
    return -1.0 if best is None else best
