"""certificates.k8s.io/v1 CertificateSigningRequest strategy and its `approval` subresource
(layer L4, apiserver): pkg/apis/certificates/validation and pkg/registry/certificates.

Create: spec.request must be a PEM block of type CERTIFICATE REQUEST, signerName a qualified
name with a domain prefix (`example.com/signer`), usages present and known, expirationSeconds
at least 600; the requesting user's identity is written into spec.username/uid/groups (every
client is the cluster admin in minik3s). The spec is immutable afterwards; the main resource
ignores status. `/status` writes conditions and the certificate; `/approval` writes only
conditions (Approved/Denied/Failed; times are the client's, as kubectl sets them), and refuses Approved together with
Denied or removing an Approved/Denied condition. No signer runs in minik3s.
Data flow: core create/update -> default -> validate / validate_update -> storage.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from minik3s.api.types import JsonDict
from minik3s.api.user import UserInfo
from minik3s.api.validation import (
    duplicate,
    invalid,
    is_qualified_name,
    not_supported,
    required,
)

from .base import Strategy, as_dict, as_list
from .rest import Subresource, UpdateRules, UpdateSubresource

KEY_USAGES = (
    "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment",
    "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system",
    "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc",
    "ocsp signing", "s/mime", "server auth", "signing", "timestamping",
)
CONDITION_TYPES = ("Approved", "Denied", "Failed")


def _pem_errors(request: Any) -> str | None:
    """The parse error of spec.request (base64 of a PEM CERTIFICATE REQUEST), or None."""
    if not isinstance(request, str):
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        pem = base64.b64decode(request, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return "PEM block type must be CERTIFICATE REQUEST"
    begin, end = "-----BEGIN CERTIFICATE REQUEST-----", "-----END CERTIFICATE REQUEST-----"
    start = pem.find(begin)
    stop = pem.find(end)
    if start < 0 or stop < start:
        return "PEM block type must be CERTIFICATE REQUEST"
    body = "".join(pem[start + len(begin):stop].split())
    try:
        der = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return "PEM block type must be CERTIFICATE REQUEST"
    if not der or der[0] != 0x30:  # an ASN.1 SEQUENCE, as every PKCS#10 request is
        return "asn1: structure error: tags don't match"
    return None


def _signer_errors(signer: Any) -> list[JsonDict]:
    path = "spec.signerName"
    if not signer:
        return [required(path)]
    s = str(signer)
    domain, sep, rest = s.partition("/")
    if not sep or not rest:
        return [invalid(path, s, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    msgs = is_qualified_name(s)
    return [invalid(path, s, m) for m in msgs]


def _validate_conditions(obj: JsonDict, path: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    seen: set[str] = set()
    for i, c in enumerate(as_list(as_dict(obj.get("status")).get("conditions"))):
        cp = f"{path}[{i}]"
        c = as_dict(c)
        ctype = c.get("type") or ""
        if not ctype:
            errs.append(required(f"{cp}.type"))
        elif ctype in seen:
            errs.append(duplicate(f"{cp}.type", ctype))
        seen.add(str(ctype))
        status = c.get("status") or ""
        if ctype in CONDITION_TYPES and status != "True":
            errs.append(not_supported(f"{cp}.status", status, ["True"]))
        elif status not in ("True", "False", "Unknown"):
            errs.append(not_supported(f"{cp}.status", status, ["False", "True", "Unknown"]))
    if "Approved" in seen and "Denied" in seen:
        errs.append(invalid(path, GoConditions(), "Approved and Denied conditions are mutually exclusive"))
    return errs


class GoConditions:
    def __str__(self) -> str:
        return "[]certificates.CertificateSigningRequestCondition{...}"


def _removed_decisions(new: JsonDict, old: JsonDict) -> list[JsonDict]:
    def types(o: JsonDict) -> set[str]:
        return {str(as_dict(c).get("type")) for c in as_list(as_dict(o.get("status")).get("conditions"))}
    errs = []
    for t in ("Approved", "Denied"):
        if t in types(old) and t not in types(new):
            errs.append(invalid("status.conditions", GoConditions(), f"updates may not remove a condition of type {t}"))
    return errs


class ApprovalREST(UpdateSubresource):
    """certificatesigningrequests/approval: only status.conditions change."""

    def __init__(self) -> None:
        super().__init__("approval")

    def prepare_update(self, rules: UpdateRules, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        conditions = copy.deepcopy(as_dict(new.get("status")).get("conditions"))
        out = copy.deepcopy(old)
        status = out.setdefault("status", {})
        if conditions is None:
            status.pop("conditions", None)
        else:
            status["conditions"] = conditions
        meta = new.get("metadata")
        if isinstance(meta, dict) and "resourceVersion" in meta:
            out.setdefault("metadata", {})["resourceVersion"] = meta["resourceVersion"]
        new.clear()
        new.update(out)
        return _validate_conditions(new, "status.conditions") + _removed_decisions(new, old)


class CertificateSigningRequestStrategy(Strategy):
    kind = "CertificateSigningRequest"
    group = "certificates.k8s.io"
    has_status = True
    subresources: ClassVar[Mapping[str, Subresource]] = MappingProxyType({"approval": ApprovalREST()})

    def record_requester(self, obj: JsonDict, user: UserInfo) -> None:
        # upstream's PrepareForCreate: the requester's identity, whatever the body said
        spec = obj.get("spec")
        if isinstance(spec, dict):
            for key in ("username", "uid", "groups", "extra"):
                spec.pop(key, None)
            spec.update(user.to_wire())

    def _validate(self, obj: JsonDict) -> list[JsonDict]:
        spec = as_dict(obj.get("spec"))
        errs: list[JsonDict] = []
        req = spec.get("request")
        if not req:
            errs.append(required("spec.request"))
        else:
            msg = _pem_errors(req)
            if msg:
                errs.append(invalid("spec.request", GoBytes(), msg))
        errs.extend(_signer_errors(spec.get("signerName")))
        usages = as_list(spec.get("usages"))
        if not usages:
            errs.append(required("spec.usages"))
        for i, u in enumerate(usages):
            if u not in KEY_USAGES:
                errs.append(not_supported(f"spec.usages[{i}]", u, KEY_USAGES))
        exp = spec.get("expirationSeconds")
        if exp is not None and (not isinstance(exp, int) or isinstance(exp, bool) or exp < 600):
            errs.append(invalid("spec.expirationSeconds", exp,
                                "may not specify a duration less than 600 seconds (10 minutes)"))
        return errs

    def _prepare_for_update(self, new: JsonDict, old: JsonDict) -> None:
        if "spec" in old:
            new["spec"] = copy.deepcopy(old["spec"])

    def _validate_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        return []

    def validate_status_update(self, new: JsonDict, old: JsonDict) -> list[JsonDict]:
        errs = super().validate_status_update(new, old)
        errs.extend(_validate_conditions(new, "status.conditions"))
        errs.extend(_removed_decisions(new, old))
        return errs


class GoBytes:
    def __str__(self) -> str:
        return "[]byte{...}"
