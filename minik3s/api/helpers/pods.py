"""Pod status helpers (layer L2) shared by the apiserver (eviction), the controllers and tables:
upstream's podutil.GetPodCondition / IsPodReady."""

from __future__ import annotations

from typing import Any

from minik3s.api.types import JsonDict


def is_sidecar(container: JsonDict) -> bool:
    """A restartable init container (`restartPolicy: Always`): started in order, then kept running."""
    return container.get("restartPolicy") == "Always"


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


def default_pull_policy(image: Any) -> str:
    """A container's default imagePullPolicy (the API server's defaulting; the kubelet reads
    the same rule): `Always` when the tag is `latest` or missing (and no digest), else
    `IfNotPresent`.

    Example: "nginx" -> Always, "nginx:1.27" -> IfNotPresent, "reg:5000/app" -> Always."""
    if not isinstance(image, str) or not image:
        return "IfNotPresent"
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def condition_status_patch(pod: JsonDict, condition: JsonDict) -> JsonDict:
    """The pod status strategic-merge patch that sets `condition` as upstream's PatchPodStatus
    sends it (a two-way patch from the old status): the condition, and when the pod already has
    conditions `$setElementOrder/conditions` listing them in order with a new type last, so the
    API server keeps the order (a bare merge-key patch puts a new item first)."""
    existing = [c.get("type") for c in (pod.get("status") or {}).get("conditions") or () if isinstance(c, dict)]
    patch: JsonDict = {"conditions": [condition]}
    if existing:
        order = existing if condition.get("type") in existing else [*existing, condition.get("type")]
        patch["$setElementOrder/conditions"] = [{"type": t} for t in order]
    return patch
