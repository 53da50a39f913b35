"""Pure Deployment arithmetic (layer L4), after `pkg/controller/deployment/util/deployment_util.go`.

Kept apart from the controller so the rolling-update numbers, the pod-template hash, the
revision bookkeeping and the status/condition rules can be tested as tables. Everything here
takes and returns plain JSON dicts and never calls the API.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime, timedelta

import orjson

from minik3s.api.types import JsonDict
from minik3s.controllers.common import get_int, meta, scaled_value
from minik3s.utils.clock import parse_time

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_NOT_COPIED = {REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO, LAST_APPLIED}

DEFAULT_PROGRESS_DEADLINE = 600
DEFAULT_REVISION_HISTORY_LIMIT = 10
MAX_INT32 = 2**31 - 1
# maxRevHistoryLengthInChars (sync.go): the revision-history annotation is kept under this length
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000

# Reasons (deployment_util.go)
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"

# --------------------------------------------------------------------------- hash

_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode_string(s: str) -> str:
    """apimachinery rand.SafeEncodeString: each byte mapped into a vowel-free alphabet.

    Example: ord("1") = 49, 49 % 27 = 22 -> "5"; so "1234" -> "5678"."""
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in s)


def fnv32a(data: bytes, h: int = 0x811C9DC5) -> int:
    """FNV-1a, 32 bit; pass the previous value as `h` to continue hashing."""
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def compute_hash(template: JsonDict, collision_count: int | None = None) -> str:
    """The pod-template-hash, as controller.ComputeHash: fnv32a over the template, then the
    collision count as 8 little-endian bytes, rendered as decimal and SafeEncodeString'd.

    Upstream hashes Go's spew dump of the typed struct; we hash the canonical JSON (sorted
    keys, the template's own pod-template-hash label removed), so values differ from a real
    cluster's but are stable, change exactly when the template changes, and use the same
    alphabet and length range (up to 10 characters)."""
    t = copy.deepcopy(template or {})
    meta = t.get("metadata")
    if isinstance(meta, dict):
        _drop_zero_creation_timestamp(meta)
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
    h = fnv32a(orjson.dumps(t, option=orjson.OPT_SORT_KEYS))
    if collision_count is not None:
        h = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + b"\x00" * 4, h)
    return safe_encode_string(str(h))


def _drop_zero_creation_timestamp(meta: JsonDict) -> None:
    """A template's `creationTimestamp: null` is Go's zero time, the same as none. Decoding drops
    it from what is written now (apiserver.strategies.schema); this keeps a template stored
    before that (kubectl rollout undo sent it) equal to and hashed as the one without it."""
    if "creationTimestamp" in meta and meta["creationTimestamp"] is None:
        del meta["creationTimestamp"]


def template_equal_ignore_hash(a: JsonDict | None, b: JsonDict | None) -> bool:
    """EqualIgnoreHash: templates semantically equal once the pod-template-hash label is dropped
    (a null creationTimestamp is no creationTimestamp)."""

    def strip(t: JsonDict | None) -> JsonDict:
        # only metadata changes: copy that path, share the rest (compared, never edited)
        t = dict(t or {})
        m = t["metadata"] = dict(t.get("metadata") or {})
        _drop_zero_creation_timestamp(m)
        labels = dict(m.get("labels") or {})
        labels.pop(POD_TEMPLATE_HASH, None)
        m["labels"] = labels
        if not m["labels"]:
            m.pop("labels")
        if not m:
            t.pop("metadata")
        return t

    return strip(a) == strip(b)


# --------------------------------------------------------------------------- spec helpers


def replicas_of(obj: JsonDict | None, default: int = 1) -> int:
    return get_int((obj or {}).get("spec"), "replicas", default)


def is_rolling_update(d: JsonDict) -> bool:
    return bool(((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate")


def resolve_fenceposts(max_surge: int | str | None, max_unavailable: int | str | None, desired: int) -> tuple[int, int]:
    """ResolveFenceposts: surge rounds up, unavailable rounds down, an unset value counts as 0
    (the API defaults both to 25%), and both zero means unavailable 1.
    Example: 25%/25% of 10 -> (3, 2); 0/0 -> (0, 1); unset/39% of 10 -> (0, 3).
    Raises ValueError on a malformed value, as upstream returns an error."""
    surge = scaled_value(0 if max_surge is None else max_surge, desired, round_up=True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling_params(d: JsonDict) -> tuple[int | str | None, int | str | None]:
    ru = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    return ru.get("maxSurge"), ru.get("maxUnavailable")


def max_surge(d: JsonDict) -> int:
    if not is_rolling_update(d):
        return 0
    surge, _ = resolve_fenceposts(*_rolling_params(d), replicas_of(d))
    return surge


def max_unavailable(d: JsonDict) -> int:
    """MaxUnavailable: 0 for Recreate or zero replicas, capped at spec.replicas."""
    replicas = replicas_of(d)
    if not is_rolling_update(d) or replicas == 0:
        return 0
    _, unavailable = resolve_fenceposts(*_rolling_params(d), replicas)
    return min(unavailable, replicas)


def min_available(d: JsonDict) -> int:
    """MinAvailable: spec.replicas - MaxUnavailable for RollingUpdate, 0 for Recreate."""
    if not is_rolling_update(d):
        return 0
    return replicas_of(d) - max_unavailable(d)


def sum_spec_replicas(rses: Sequence[JsonDict | None]) -> int:
    return sum(replicas_of(rs, 0) for rs in rses if rs is not None)


def sum_status(rses: Sequence[JsonDict | None], field: str) -> int:
    return sum(get_int(rs.get("status"), field) for rs in rses if rs is not None)


def new_rs_new_replicas(d: JsonDict, all_rses: Sequence[JsonDict | None], new_rs: JsonDict) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may scale up now.

    Example: replicas 10, maxSurge 3, all ReplicaSets at 10 with the new one at 0 ->
    13 - 10 = 3 more, so 3."""
    if not is_rolling_update(d):
        return replicas_of(d)
    current = sum_spec_replicas(all_rses)
    max_total = replicas_of(d) + max_surge(d)
    new_replicas = replicas_of(new_rs, 0)
    if current >= max_total:
        return new_replicas
    scale_up = min(max_total - current, replicas_of(d) - new_replicas)
    return new_replicas + scale_up


def revision_of(rs: JsonDict | None) -> int:
    try:
        return int((meta(rs or {}).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def max_revision(rses: Sequence[JsonDict]) -> int:
    return max((revision_of(rs) for rs in rses), default=0)


def creation_key(rs: JsonDict) -> tuple[str, str]:
    m = meta(rs)
    return (str(m.get("creationTimestamp") or ""), str(m.get("name") or ""))


def find_new_rs(d: JsonDict, rses: Sequence[JsonDict]) -> JsonDict | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's."""
    template = (d.get("spec") or {}).get("template")
    for rs in sorted(rses, key=creation_key):
        if template_equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            return rs
    return None


def filter_active(rses: Sequence[JsonDict | None]) -> list[JsonDict]:
    return [rs for rs in rses if rs is not None and replicas_of(rs, 0) > 0]


def set_new_rs_annotations(d: JsonDict, rs: JsonDict, new_revision: str, *, exists: bool,
                           rev_history_limit_in_chars: int = MAX_REV_HISTORY_LENGTH_IN_CHARS) -> bool:
    """SetNewReplicaSetAnnotations: copy the Deployment's annotations, raise the revision, and
    when an existing revision is raised (a rollback to this ReplicaSet) append the old one to
    `deployment.kubernetes.io/revision-history`, dropping the oldest entries to stay within
    `rev_history_limit_in_chars`. Mutates `rs` (a private copy); returns whether anything
    changed. Example: revision "11", history "" -> raised to "12" gives history "11"; then to
    "13" gives "11,12" (limit 5), then to "14" gives "12,13"."""
    m = rs.setdefault("metadata", {})
    ann = m.setdefault("annotations", {})
    changed = False
    for k, v in (meta(d).get("annotations") or {}).items():
        if k in _NOT_COPIED or ann.get(k) == v:
            continue
        ann[k] = v
        changed = True
    had_revision = REVISION in ann
    old = str(ann.get(REVISION, ""))
    old_i = _parse_int64(old)
    if old_i is None:
        if old != "":
            return False  # upstream logs and leaves the revision alone
        old_i = 0
    new_i = _parse_int64(new_revision)
    if new_i is None:
        return False
    if old_i < new_i:
        ann[REVISION] = new_revision
        changed = True
        if had_revision:
            _append_revision_history(ann, old, rev_history_limit_in_chars)
    if not exists:
        changed = set_replicas_annotations(rs, replicas_of(d), replicas_of(d) + max_surge(d)) or changed
    return changed


def _append_revision_history(ann: JsonDict, old_revision: str, limit: int) -> None:
    history = str(ann.get(REVISION_HISTORY, ""))
    old_revisions = history.split(",")
    if not old_revisions[0]:
        ann[REVISION_HISTORY] = old_revision
        return
    total = len(history) + len(old_revision) + 1
    start = 0
    while total > limit and start < len(old_revisions):
        total -= len(old_revisions[start]) + 1
        start += 1
    if total <= limit:
        ann[REVISION_HISTORY] = ",".join([*old_revisions[start:], old_revision])


def _parse_int64(s: str) -> int | None:
    """strconv.ParseInt(s, 10, 64): optional sign, ASCII digits only."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not body.isascii() or not body.isdigit():
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


def replicas_annotations_need_update(rs: JsonDict, desired: int, max_replicas: int) -> bool:
    """ReplicasAnnotationsNeedUpdate: either annotation missing or not the given number."""
    ann = meta(rs).get("annotations")
    if not ann:
        return True
    return bool(ann.get(DESIRED_REPLICAS) != str(desired) or ann.get(MAX_REPLICAS) != str(max_replicas))


def set_replicas_annotations(rs: JsonDict, desired: int, max_replicas: int) -> bool:
    ann = rs.setdefault("metadata", {}).setdefault("annotations", {})
    changed = False
    for k, v in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(max_replicas))):
        if ann.get(k) != v:
            ann[k] = v
            changed = True
    return changed


def _non_negative_int32_annotation(rs: JsonDict, key: str) -> int | None:
    """getNonNegativeInt32FromAnnotation: an unsigned decimal within int32, else invalid (None)."""
    raw = (meta(rs).get("annotations") or {}).get(key)
    if not isinstance(raw, str) or not raw.isascii() or not raw.isdigit():
        return None
    v = int(raw)
    return v if v <= MAX_INT32 else None


def desired_annotation(rs: JsonDict) -> int | None:
    return _non_negative_int32_annotation(rs, DESIRED_REPLICAS)


def max_replicas_annotation(rs: JsonDict) -> int | None:
    return _non_negative_int32_annotation(rs, MAX_REPLICAS)


def is_saturated(d: JsonDict, new_rs: JsonDict | None) -> bool:
    if new_rs is None:
        return False
    want = replicas_of(d)
    return (desired_annotation(new_rs) == want and replicas_of(new_rs, 0) == want
            and get_int(new_rs.get("status"), "availableReplicas") == want)


def find_active_or_latest(new_rs: JsonDict | None, old_rses: Sequence[JsonDict]) -> JsonDict | None:
    if new_rs is None and not old_rses:
        return None
    everything = list(old_rses) + ([new_rs] if new_rs is not None else [])
    active = sorted(filter_active(everything), key=creation_key, reverse=True)
    if not active:
        if new_rs is not None:
            return new_rs
        return sorted(old_rses, key=creation_key, reverse=True)[0]
    if len(active) == 1:
        return active[0]
    return None


def proportion(rs: JsonDict, d: JsonDict, to_add: int, added: int) -> int:
    """GetProportion: this ReplicaSet's share of `to_add`, never beyond what is left to add."""
    if replicas_of(rs, 0) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def replica_set_fraction(rs: JsonDict, d: JsonDict) -> int:
    """getReplicaSetFraction: how many replicas `rs` gains (or loses) when the Deployment goes
    from the size in its max-replicas annotation to spec.replicas + maxSurge. A missing, invalid
    or zero annotation falls back to status.replicas; with that 0 too, nothing.
    Example: 50 replicas, annotation 110, Deployment 120 + surge 10 -> 50*130/110 = 59.09 -> +9."""
    want = replicas_of(d)
    if want == 0:
        return -replicas_of(rs, 0)
    deployment_max = want + max_surge(d)
    before = max_replicas_annotation(rs)
    if not before:
        before = get_int(d.get("status"), "replicas")
        if before == 0:
            return 0
    size = replicas_of(rs, 0) * deployment_max / before
    return int(_round_half_away(size)) - replicas_of(rs, 0)


def _round_half_away(x: float) -> float:
    """Go's math.Round (half away from zero), unlike Python's banker's rounding."""
    return float(int(x + 0.5)) if x >= 0 else -float(int(-x + 0.5))


# --------------------------------------------------------------------------- status


def set_deployment_condition(conditions: list[JsonDict], cond: JsonDict) -> bool:
    """SetDeploymentCondition: no-op when status and reason are unchanged; keeps the
    transition time when only the reason changed; the condition moves to the end."""
    cur = next((c for c in conditions if c.get("type") == cond.get("type")), None)
    if cur is not None and cur.get("status") == cond.get("status") and cur.get("reason") == cond.get("reason"):
        return False
    new = dict(cond)
    if cur is not None and cur.get("status") == cond.get("status"):
        new["lastTransitionTime"] = cur.get("lastTransitionTime", new.get("lastTransitionTime"))
    conditions[:] = [c for c in conditions if c.get("type") != cond.get("type")] + [new]
    return True


def replica_failure(all_rses: Sequence[JsonDict | None], new_rs: JsonDict | None) -> JsonDict | None:
    """getReplicaFailures + ReplicaSetToDeploymentCondition: the new ReplicaSet's ReplicaFailure
    condition, else an old one's, as a Deployment condition (lastUpdateTime = its transition)."""
    for group in ([new_rs], all_rses):
        for rs in group:
            for c in ((rs or {}).get("status") or {}).get("conditions") or ():
                if isinstance(c, dict) and c.get("type") == "ReplicaFailure":
                    return {"type": "ReplicaFailure", "status": c.get("status"),
                            "lastUpdateTime": c.get("lastTransitionTime"),
                            "lastTransitionTime": c.get("lastTransitionTime"),
                            "reason": c.get("reason"), "message": c.get("message")}
    return None


def new_condition(ctype: str, status: str, reason: str, message: str, now: str) -> JsonDict:
    return {"type": ctype, "status": status, "lastUpdateTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message}


def condition(status: JsonDict, ctype: str) -> JsonDict | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == ctype), None)


def calculate_status(d: JsonDict, all_rses: Sequence[JsonDict | None], new_rs: JsonDict | None, now: str) -> JsonDict:
    """deployment sync.go calculateStatus (zero counts omitted, as the omitempty JSON)."""
    available = sum_status(all_rses, "availableReplicas")
    total = sum_spec_replicas(all_rses)
    old = d.get("status") or {}
    status: JsonDict = {
        "observedGeneration": get_int(meta(d), "generation"),
        "replicas": sum_status(all_rses, "replicas"),
        "updatedReplicas": sum_status([new_rs], "replicas"),
        "readyReplicas": sum_status(all_rses, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": max(0, total - available),
    }
    if "collisionCount" in old:
        status["collisionCount"] = old["collisionCount"]
    status = {k: v for k, v in status.items() if v}
    conditions = [dict(c) for c in old.get("conditions") or []]
    if available >= replicas_of(d) - max_unavailable(d):
        set_deployment_condition(conditions, new_condition(
            "Available", "True", MIN_AVAILABLE, "Deployment has minimum availability.", now))
    else:
        set_deployment_condition(conditions, new_condition(
            "Available", "False", MIN_UNAVAILABLE, "Deployment does not have minimum availability.", now))
    status["conditions"] = conditions
    return status


def deployment_complete(d: JsonDict, status: JsonDict) -> bool:
    want = replicas_of(d)
    return (get_int(status, "updatedReplicas") == want and get_int(status, "replicas") == want
            and get_int(status, "availableReplicas") == want
            and get_int(status, "observedGeneration") >= get_int(meta(d), "generation"))


def deployment_progressing(d: JsonDict, new_status: JsonDict) -> bool:
    """DeploymentProgressing: more updated pods, fewer old pods (replicas - updated), more
    ready or more available pods than the Deployment's current status."""
    old = d.get("status") or {}
    old_old = get_int(old, "replicas") - get_int(old, "updatedReplicas")
    new_old = get_int(new_status, "replicas") - get_int(new_status, "updatedReplicas")
    return (get_int(new_status, "updatedReplicas") > get_int(old, "updatedReplicas")
            or new_old < old_old
            or get_int(new_status, "readyReplicas") > get_int(old, "readyReplicas")
            or get_int(new_status, "availableReplicas") > get_int(old, "availableReplicas"))


def progress_deadline(d: JsonDict) -> int | None:
    """spec.progressDeadlineSeconds, or None when the Deployment has none (HasProgressDeadline:
    unset or MaxInt32; the API defaults it to 600)."""
    v = (d.get("spec") or {}).get("progressDeadlineSeconds")
    if v is None or v == MAX_INT32:
        return None
    return int(v)


def deployment_timed_out(d: JsonDict, status: JsonDict, now: datetime) -> bool:
    deadline = progress_deadline(d)
    if deadline is None:
        return False
    cond = condition(status, "Progressing")
    if cond is None:
        return False
    if cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    since = parse_time(cond.get("lastUpdateTime"))
    return since is not None and since + timedelta(seconds=deadline) < now


def rs_by_revision_key(rs: JsonDict) -> tuple[int, str, str]:
    return (revision_of(rs), *creation_key(rs))
