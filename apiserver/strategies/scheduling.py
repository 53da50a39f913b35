"""PriorityClass strategy (layer L4, apiserver): pkg/apis/scheduling/validation.

Names with the `system-` prefix are reserved for the built-in classes (with their exact value);
user classes may not exceed 1e9; value and preemptionPolicy are immutable; preemptionPolicy
defaults to PreemptLowerPriority. The only-one-globalDefault rule is admission (admission.py).
"""

from __future__ import annotations

from minik3s.api import errors
from minik3s.api.scheduling import (
    HIGHEST_USER_DEFINABLE_PRIORITY,
    SYSTEM_PRIORITY_CLASS_PREFIX,
    SYSTEM_PRIORITY_CLASSES,
)
from minik3s.api.types import JsonDict
from minik3s.api.validation import forbidden, invalid, not_supported, type_invalid

from .base import Strategy

PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def _known_system_class_error(name: str, value: object, global_default: bool) -> str | None:
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    want = SYSTEM_PRIORITY_CLASSES[name]
    if value != want:
        return f"value of {name} PriorityClass must be {want}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


class PriorityClassStrategy(Strategy):
    kind = "PriorityClass"
    group = "scheduling.k8s.io"
    tracks_generation = False

    def refuse_delete(self, name: str) -> None:
        """REST.Delete (pkg/registry/scheduling/priorityclass/storage/storage.go): the system
        classes cannot be deleted, whether or not they exist (a 403 before any lookup)."""
        if name in SYSTEM_PRIORITY_CLASSES:
            raise errors.forbidden("priorityclasses", self.group, name,
                                   "this is a system priority class and cannot be deleted")

    def _default(self, obj: JsonDict) -> None:
        if obj.get("value") is None:
            obj["value"] = 0  # int32 without omitempty: a missing value is 0
        if not obj.get("preemptionPolicy"):
            obj["preemptionPolicy"] = "PreemptLowerPriority"

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        name = str((obj.get("metadata") or {}).get("name") or "")
        value = obj.get("value")
        if value is None:
            value = 0
        elif isinstance(value, bool) or not isinstance(value, int):
            return [type_invalid("value", value, "must be an integer")]
        elif not -(2**31) <= value <= 2**31 - 1:
            return [invalid("value", value, "must be a 32-bit integer")]
        gd = obj.get("globalDefault")
        if gd is not None and not isinstance(gd, bool):
            errs.append(type_invalid("globalDefault", gd, "must be a boolean"))
        if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
            why = _known_system_class_error(name, value, bool(gd))
            if why:
                errs.append(forbidden("metadata.name", f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' "
                                      f"prefix are reserved for system use only. error: {why}"))
        elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
            errs.append(forbidden("value", f"maximum allowed value of a user defined priority is "
                                  f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
        pp = obj.get("preemptionPolicy")
        if pp is not None and pp not in PREEMPTION_POLICIES:
            errs.append(not_supported("preemptionPolicy", pp, PREEMPTION_POLICIES))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        if new.get("value") != old.get("value"):
            errs.append(forbidden("value", "may not be changed in an update."))
        if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
            errs.append(invalid("preemptionPolicy", new.get("preemptionPolicy"), "field is immutable"))
        return errs
