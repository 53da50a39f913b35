"""RuntimeClass strategy (layer L4, apiserver): pkg/apis/node/validation.

Cluster-scoped, no status. `handler` must be a DNS label (RFC 1123) and is immutable;
`overhead.podFixed` holds resource names with non-negative quantities; `scheduling.nodeSelector`
must be valid labels and `scheduling.tolerations` valid tolerations, unique by (key, effect).
Data flow: core create/update -> default (nothing) -> validate / validate_update -> storage.
"""

from __future__ import annotations

from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    invalid,
    is_dns1123_label,
    type_invalid,
    validate_labels,
)

from .base import Strategy
from .podspec import validate_resource_list_values, validate_tolerations


class RuntimeClassStrategy(Strategy):
    kind = "RuntimeClass"
    group = "node.k8s.io"
    tracks_generation = False

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        handler = obj.get("handler")
        if handler is None:
            handler = ""  # a plain string on the wire: missing is "", which is not a DNS label
        if not isinstance(handler, str):
            errs.append(type_invalid("handler", handler, "must be a string"))
        else:
            errs.extend(invalid("handler", handler, m) for m in is_dns1123_label(handler))
        overhead = obj.get("overhead")
        if overhead is not None:
            if not isinstance(overhead, dict):
                errs.append(type_invalid("overhead", overhead, "must be an object"))
            else:
                oerrs, _ = validate_resource_list_values(
                    overhead.get("podFixed"), "overhead.podFixed", container=False
                )
                errs.extend(oerrs)
        sched = obj.get("scheduling")
        if sched is not None:
            if not isinstance(sched, dict):
                errs.append(type_invalid("scheduling", sched, "must be an object"))
            else:
                errs.extend(_validate_scheduling(sched))
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        if new.get("handler") != old.get("handler"):
            return [invalid("handler", new.get("handler"), "field is immutable")]
        return []


def _validate_scheduling(sched: JsonDict) -> list[JsonDict]:
    errs: list[JsonDict] = []
    sel = sched.get("nodeSelector")
    if sel is not None:
        errs.extend(validate_labels(sel, "scheduling.nodeSelector"))
    tols = sched.get("tolerations")
    errs.extend(validate_tolerations(tols, "scheduling.tolerations"))
    if isinstance(tols, list):
        seen: set[tuple[str, str]] = set()  # the list keys: key + effect
        for i, t in enumerate(tols):
            if not isinstance(t, dict):
                continue
            key = (str(t.get("key") or ""), str(t.get("effect") or ""))
            if key in seen:
                errs.append(duplicate(f"scheduling.tolerations[{i}]", t))
            seen.add(key)
    return errs
