"""Pod status helpers (layer L2) shared by the apiserver (eviction), the controllers and tables:
upstream's podutil.GetPodCondition / IsPodReady."""

from __future__ import annotations

from minik3s.api.types import JsonDict


def pod_condition(pod: JsonDict, cond_type: str) -> JsonDict | None:
    """The pod's condition of that type, or None."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == cond_type:
            return c
    return None


def is_pod_ready(pod: JsonDict) -> bool:
    """Ready=True (upstream IsPodReady)."""
    c = pod_condition(pod, "Ready")
    return bool(c and c.get("status") == "True")
