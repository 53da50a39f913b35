"""Namespace strategy (layer L4, apiserver): pkg/registry/core/namespace/strategy.go.

Create: status = {phase: Active}, the `kubernetes` finalizer added to spec.finalizers, and the
immutable label `kubernetes.io/metadata.name=<name>` (SetDefaults_Namespace). Update: spec
finalizers and status are kept (they change only through /finalize and /status).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from minik3s.api.types import JsonDict
from minik3s.api.validation import validate_finalizers

from .base import Strategy, as_dict
from .rest import Subresource, UpdateRules, UpdateSubresource

FINALIZER_KUBERNETES = "kubernetes"
NAME_LABEL = "kubernetes.io/metadata.name"


class FinalizeREST(UpdateSubresource):
    """namespaces/finalize (upstream FinalizeREST + finalizeStrategy): PUT only; of the body
    only spec.finalizers is taken, everything else stays as stored."""

    def __init__(self) -> None:
        super().__init__("finalize", verbs=frozenset({"PUT"}), decode_check=False)

    def prepare_update(self, rules: UpdateRules, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        fins = as_dict(new.get("spec")).get("finalizers")
        out = copy.deepcopy(old)
        out.setdefault("spec", {})["finalizers"] = fins or []
        new.clear()
        new.update(out)
        return rules.validate_update(new, old)


class NamespaceStrategy(Strategy):
    kind = "Namespace"
    has_status = True
    name_format = "label"
    return_deleted_object = True
    # namespaces/finalize: PUT only (upstream FinalizeREST), spec.finalizers alone may change
    subresources: ClassVar[Mapping[str, Subresource]] = MappingProxyType(
        {"finalize": FinalizeREST()})

    def finalization_pending(self, obj: JsonDict) -> bool:
        """ShouldDeleteNamespaceDuringUpdate: a deleted namespace stays until the namespace
        controller has emptied spec.finalizers (after removing its content)."""
        return bool(as_dict(obj.get("spec")).get("finalizers"))

    def prepare_for_delete(self, obj: JsonDict, now: str) -> bool:
        """Upstream namespace REST Delete: a namespace being deleted is phase Terminating."""
        st = obj.setdefault("status", {})
        if st.get("phase") == "Terminating":
            return False
        st["phase"] = "Terminating"
        return True

    def _default(self, obj: JsonDict) -> None:
        meta = obj.setdefault("metadata", {})
        name = meta.get("name")
        if isinstance(name, str) and name:
            labels = meta.get("labels")
            if not isinstance(labels, dict):
                labels = {}
                meta["labels"] = labels
            labels[NAME_LABEL] = name
        status = obj.get("status")
        if isinstance(status, dict) and not status.get("phase"):
            status["phase"] = "Active"

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        obj["status"] = {"phase": "Active"}
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = {}
            obj["spec"] = spec
        fins = spec.get("finalizers")
        if not isinstance(fins, list):
            fins = []
        if FINALIZER_KUBERNETES not in fins:
            fins.append(FINALIZER_KUBERNETES)
        spec["finalizers"] = fins

    def _prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        if "spec" in old:
            new["spec"] = copy.deepcopy(old["spec"])
        else:
            new.pop("spec", None)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        return validate_finalizers(as_dict(obj.get("spec")).get("finalizers"), "spec.finalizers")
