"""apiregistration.k8s.io/v1 APIService strategy (layer L4, apiserver): kube-aggregator's
pkg/apis/apiregistration/validation.

The name is `<version>.<group>` (`v1.` for the core group); spec.version is required;
versionPriority is 1-1000 and groupPriorityMinimum 1-20000; insecureSkipTLSVerify excludes
caBundle; a spec.service needs namespace and name. The status subresource carries the
Available condition. minik3s stores APIServices but proxies to no aggregated server.
Data flow: core create/update -> validate / validate_update -> storage.
"""

from __future__ import annotations

from minik3s.api.types import JsonDict
from minik3s.api.validation import invalid, required

from .base import Strategy, as_dict


class APIServiceStrategy(Strategy):
    kind = "APIService"
    group = "apiregistration.k8s.io"
    has_status = True
    name_format = "path"

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        name = str(as_dict(obj.get("metadata")).get("name") or "")
        group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
        errs: list[JsonDict] = []
        if name and name != f"{version}.{group}":
            errs.append(invalid("metadata.name", name, 'must be `spec.version+"."+spec.group`'))
        if not version:
            errs.append(required("spec.version"))
        vp = spec.get("versionPriority")
        if not isinstance(vp, int) or isinstance(vp, bool) or not 0 < vp <= 1000:
            errs.append(invalid("spec.versionPriority", vp, "must be positive and less than 1000"))
        gp = spec.get("groupPriorityMinimum")
        if not isinstance(gp, int) or isinstance(gp, bool) or not 0 < gp <= 20000:
            errs.append(invalid("spec.groupPriorityMinimum", gp, "must be positive and less than 20000"))
        if spec.get("insecureSkipTLSVerify") and spec.get("caBundle"):
            errs.append(invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
        svc = spec.get("service")
        if isinstance(svc, dict):
            if not svc.get("namespace"):
                errs.append(required("spec.service.namespace"))
            if not svc.get("name"):
                errs.append(required("spec.service.name"))
        return errs
