"""Taint/toleration matching (layer L2; upstream k8s.io/api/core/v1 toleration.go + component-helpers
scheduling/corev1 FindMatchingUntoleratedTaint).

Used by the scheduler (TaintToleration, NodeUnschedulable, PodTopologySpread nodeTaintsPolicy), the
descheduler (RemovePodsViolatingNodeTaints) and the node lifecycle controller (NoExecute eviction).

A toleration tolerates a taint when (1) its effect is empty or equal to the taint's, (2) its key is
empty or equal to the taint's, and (3) its operator is Exists, or Equal/empty with equal values.
Example: {operator: Exists} (empty key, empty effect) tolerates every taint;
{key: "gpu", operator: Equal, value: "true", effect: NoSchedule} tolerates gpu=true:NoSchedule only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from minik3s.api.types import JsonDict

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"


def tolerates(toleration: JsonDict, taint: JsonDict) -> bool:
    """Whether one toleration tolerates one taint (upstream Toleration.ToleratesTaint)."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    op = toleration.get("operator") or ""
    if op == "Exists":
        return True
    if op in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerations_tolerate_taint(tolerations: Iterable[JsonDict], taint: JsonDict) -> bool:
    """True if any toleration tolerates `taint`."""
    for t in tolerations:
        if tolerates(t, taint):
            return True
    return False


def find_untolerated_taint(
    taints: Sequence[JsonDict] | None,
    tolerations: Sequence[JsonDict] | None,
    filter_fn: Callable[[JsonDict], bool] | None = None,
) -> JsonDict | None:
    """The first taint (passing `filter_fn`, when given) that no toleration tolerates, else None.
    Example: taints [a=1:NoSchedule, b=2:PreferNoSchedule], no tolerations, filter NoSchedule/NoExecute
    -> {a=1:NoSchedule}."""
    if not taints:
        return None
    tols = tolerations or ()
    for taint in taints:
        if filter_fn is not None and not filter_fn(taint):
            continue
        if not tolerations_tolerate_taint(tols, taint):
            return taint
    return None


def is_no_schedule_or_no_execute(taint: JsonDict) -> bool:
    e = taint.get("effect")
    return e == NO_SCHEDULE or e == NO_EXECUTE


def pod_tolerations(pod: JsonDict) -> list[JsonDict]:
    return (pod.get("spec") or {}).get("tolerations") or []


def taint_message(taint: JsonDict) -> str:
    """`node(s) had untolerated taint {key: value}` as upstream TaintToleration's reason."""
    return f"node(s) had untolerated taint {{{taint.get('key') or ''}: {taint.get('value') or ''}}}"


def _norm_toleration(t: JsonDict) -> tuple[str, str, str, str, object]:
    op = t.get("operator") or "Equal"  # an empty operator means Equal
    return (t.get("key") or "", op, t.get("value") or "", t.get("effect") or "", t.get("tolerationSeconds"))


def toleration_is_superset(ss: JsonDict, t: JsonDict) -> bool:
    """Whether toleration `ss` tolerates every taint `t` tolerates (upstream pkg/util/tolerations
    isSuperset). Example: {operator: Exists} covers everything; {key: k, operator: Exists,
    effect: NoExecute, tolerationSeconds: 60} covers {key: k, value: v, effect: NoExecute,
    tolerationSeconds: 30} (it tolerates for less long) but not the same with 120."""
    ss_key, ss_op, ss_value, ss_effect, ss_secs = _norm_toleration(ss)
    t_key, t_op, t_value, t_effect, t_secs = _norm_toleration(t)
    if (ss_key, ss_op, ss_value, ss_effect, ss_secs) == (t_key, t_op, t_value, t_effect, t_secs):
        return True
    if t_key != ss_key and (ss_key != "" or ss_op != "Exists"):
        return False
    if t_effect != ss_effect and ss_effect != "":
        return False
    if ss_effect == NO_EXECUTE and ss_secs is not None:
        if t_secs is None or not isinstance(t_secs, int) or not isinstance(ss_secs, int) or t_secs > ss_secs:
            return False
    if ss_op == "Exists":
        return True
    return ss_op == "Equal" and t_op == "Equal" and t_value == ss_value


def merge_tolerations(first: Sequence[JsonDict], second: Sequence[JsonDict]) -> list[JsonDict]:
    """`first` then `second`, dropping every toleration another one already covers (upstream
    MergeTolerations; of two equal tolerations the first is kept). Example: merging
    [{key: a, operator: Exists}] with [{key: a, value: x}, {key: b, operator: Exists}] gives
    [{key: a, operator: Exists}, {key: b, operator: Exists}]."""
    everything = [*first, *second]
    merged: list[JsonDict] = []
    for i, t in enumerate(everything):
        if any(toleration_is_superset(m, t) for m in merged):
            continue
        nt = _norm_toleration(t)
        if any(_norm_toleration(o) != nt and toleration_is_superset(o, t) for o in everything[i + 1:]):
            continue
        merged.append(t)
    return merged
