"""Node strategy (layer L4, apiserver): taints validated, spec/status split, podCIDR and
providerID immutable once set (pkg/registry/core/node/strategy.go, ValidateNode/ValidateNodeUpdate).

dropDisabledFields: the removed dynamic kubelet configuration is dropped (spec.configSource and
status.config on create; spec.configSource on an update unless the stored node has one).
Warnings (fieldIsDeprecatedWarnings, create and update): a spec.configSource that survived that
drop, and a non-empty spec.externalID."""

from __future__ import annotations

from minik3s.api.field_order import NODE_SYSTEM_INFO
from minik3s.api.types import JsonDict
from minik3s.api.validation import forbidden, invalid, type_invalid

from .base import Strategy, as_dict
from .podspec import validate_resource_list_values, validate_taints

# NodeSystemInfo's string fields, none omitempty: written "" when unset (the store puts them, and
# the status, in Go's order: minik3s.api.field_order)
NODE_INFO_STRINGS = tuple(k for k in NODE_SYSTEM_INFO if k != "swap")


class NodeStrategy(Strategy):
    kind = "Node"
    has_status = True

    def _default(self, obj: JsonDict) -> None:
        """SetDefaults_NodeStatus: allocatable defaults to capacity. And what Go's encoding of a
        Node always writes, its struct fields having no usable omitempty: `spec: {}`, and in
        the status the daemon endpoints and node info with their zero values (a hand-made
        Node without them reads back as kube-apiserver returns it)."""
        if "spec" not in obj:
            obj["spec"] = {}
        status = obj.get("status")
        if status is None:
            status = obj["status"] = {}
        if not isinstance(status, dict):
            return
        if status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
            status["allocatable"] = dict(status["capacity"])
        endpoints = status.setdefault("daemonEndpoints", {})
        if isinstance(endpoints, dict):
            kubelet = endpoints.setdefault("kubeletEndpoint", {})
            if isinstance(kubelet, dict):
                kubelet.setdefault("Port", 0)
        info = status.setdefault("nodeInfo", {})
        if isinstance(info, dict):
            for key in NODE_INFO_STRINGS:
                info.setdefault(key, "")

    def _reset_status_on_create(self, obj: JsonDict) -> None:
        # nodes register with their status (kubelet POSTs a full Node); upstream keeps it
        return None

    def prepare_for_create(self, obj: JsonDict) -> None:
        super().prepare_for_create(obj)
        spec, status = obj.get("spec"), obj.get("status")
        if isinstance(spec, dict):
            spec.pop("configSource", None)
        if isinstance(status, dict):
            status.pop("config", None)

    def _prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        spec = new.get("spec")
        if isinstance(spec, dict) and as_dict(old.get("spec")).get("configSource") is None:
            spec.pop("configSource", None)

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return field_is_deprecated_warnings(obj)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return field_is_deprecated_warnings(new)

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = obj.get("spec")
        if spec is None:
            return []
        if not isinstance(spec, dict):
            return [type_invalid("spec", spec, "must be an object")]
        errs = validate_taints(spec.get("taints"), "spec.taints")
        if "unschedulable" in spec and not isinstance(spec["unschedulable"], bool):
            errs.append(type_invalid("spec.unschedulable", spec["unschedulable"], "must be a boolean"))
        errs.extend(self._validate_status(obj))
        return errs

    def _validate_status(self, obj: JsonDict) -> list[JsonDict]:
        status = as_dict(obj.get("status"))
        errs: list[JsonDict] = []
        for key in ("capacity", "allocatable"):
            if key in status:
                e, _ = validate_resource_list_values(status.get(key), f"status.{key}", container=False)
                errs.extend(e)
        return errs

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs: list[JsonDict] = []
        ns, os_ = as_dict(new.get("spec")), as_dict(old.get("spec"))
        for key in ("podCIDR", "providerID"):
            if os_.get(key) and ns.get(key) != os_.get(key):
                detail = "node updates may not change podCIDR except from \"\" to valid" if key == "podCIDR" \
                    else "node updates may not change providerID except from \"\" to valid"
                errs.append(forbidden(f"spec.{key}", detail))
        if os_.get("podCIDRs") and ns.get("podCIDRs") != os_.get("podCIDRs"):
            errs.append(forbidden("spec.podCIDRs", "node updates may not change podCIDR except from \"\" to valid"))
        return errs

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = super().validate_status_update(new, old)
        errs.extend(self._validate_status(new))
        for i, c in enumerate(as_dict(new.get("status")).get("conditions") or []):
            if isinstance(c, dict) and c.get("status") not in ("True", "False", "Unknown"):
                errs.append(invalid(f"status.conditions[{i}].status", c.get("status"),
                                    "must be one of True, False, Unknown"))
        return errs


def field_is_deprecated_warnings(node: JsonDict) -> list[str]:
    """fieldIsDeprecatedWarnings."""
    spec = as_dict(node.get("spec"))
    warnings: list[str] = []
    if spec.get("configSource") is not None:
        warnings.append("spec.configSource: the feature is removed")
    if spec.get("externalID"):
        warnings.append("spec.externalID: this field is deprecated, and is unused by Kubernetes")
    return warnings
