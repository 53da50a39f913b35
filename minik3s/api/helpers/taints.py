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
