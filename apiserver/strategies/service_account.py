"""ServiceAccount strategy and serviceaccounts/{name}/token, the TokenRequest subresource
(layer L4, apiserver; upstream pkg/registry/core/serviceaccount/storage/token.go).

DELETE answers the deleted ServiceAccount (ReturnDeletedObject). POST .../token takes an
authentication.k8s.io/v1 TokenRequest: `spec.expirationSeconds` defaults to 3600 and must be
at least 600 (10 minutes) and at most 2^32; empty `spec.audiences` become the server's own
(`https://kubernetes.default.svc.cluster.local`, `k3s`); a boundObjectRef must name an existing
Pod or Secret of the namespace. The answer (201) is the request with `status.token` and
`status.expirationTimestamp`. The token is a JWT with upstream's claims (iss, sub
`system:serviceaccount:<ns>:<name>`, aud, iat, nbf, exp, jti, `kubernetes.io`), signed HS256
with a key the registry keeps for its lifetime (upstream signs RS256 with the service-account
key; minik3s has no TokenReview yet, so nothing verifies it).

Data flow: handler -> `core.subresource(serviceaccounts, "token")` -> `TokenREST.create(ops,...)`
-> reads the ServiceAccount (404 when missing) -> the signed token; nothing is stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import uuid
from collections.abc import Mapping
from datetime import timedelta
from types import MappingProxyType
from typing import Any, ClassVar

from minik3s.api import errors
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.validation import invalid, not_supported, required
from minik3s.utils.clock import parse_time, rfc3339

from .base import Strategy
from .rest import RegistryOps, Subresource

ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_AUDIENCES = ("https://kubernetes.default.svc.cluster.local", "k3s")
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32


class SigningKey:
    """Per-registry HS256 key (hook state), made once per server run."""

    def __init__(self) -> None:
        self.key = secrets.token_bytes(32)
        self.kid = hashlib.sha256(self.key).hexdigest()[:16]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def sign_jwt(claims: JsonDict, key: SigningKey) -> str:
    header = {"alg": "HS256", "kid": key.kid, "typ": "JWT"}
    head = _b64(json.dumps(header, separators=(",", ":")).encode())
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(key.key, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(sig)}"


def _validate_token_request(spec: JsonDict) -> list[JsonDict]:
    errs: list[JsonDict] = []
    exp = spec.get("expirationSeconds")
    if not isinstance(exp, int) or isinstance(exp, bool):
        errs.append(invalid("spec.expirationSeconds", exp, "must be an integer"))
    elif exp < MIN_EXPIRATION:
        errs.append(invalid("spec.expirationSeconds", exp, "may not specify a duration less than 10 minutes"))
    elif exp > MAX_EXPIRATION:
        errs.append(invalid("spec.expirationSeconds", exp, "may not specify a duration larger than 2^32 seconds"))
    auds = spec.get("audiences")
    if auds is not None and (not isinstance(auds, list) or not all(isinstance(a, str) for a in auds)):
        errs.append(invalid("spec.audiences", auds, "must be a list of strings"))
    ref = spec.get("boundObjectRef")
    if ref is not None:
        if not isinstance(ref, dict):
            errs.append(invalid("spec.boundObjectRef", ref, "must be an object"))
        else:
            if ref.get("kind") not in ("Pod", "Secret", "Node"):
                errs.append(not_supported("spec.boundObjectRef.kind", ref.get("kind"), ["Node", "Pod", "Secret"]))
            if not ref.get("name"):
                errs.append(required("spec.boundObjectRef.name"))
    return errs


class TokenREST(Subresource):
    name = "token"
    verbs = frozenset({"POST"})

    async def create(self, ops: RegistryOps, info: ResourceInfo, namespace: str | None, name: str, body: object,
                     opts: WriteOptions) -> JsonDict:
        if not isinstance(body, dict):
            raise errors.BadRequestError("the object provided is not a JSON object")
        kind = body.get("kind")
        if kind not in (None, "", "TokenRequest"):
            raise errors.BadRequestError(f"not a TokenRequest: {kind}")
        sa = ops.get(info, namespace, name)  # 404 serviceaccounts "<name>" not found
        req: JsonDict = json.loads(json.dumps(body))
        req["apiVersion"] = "authentication.k8s.io/v1"
        req["kind"] = "TokenRequest"
        spec = req.get("spec")
        if spec is None:
            spec = req["spec"] = {}
        if not isinstance(spec, dict):
            raise errors.BadRequestError("spec must be an object")
        spec.setdefault("expirationSeconds", DEFAULT_EXPIRATION)
        if not spec.get("audiences"):
            spec["audiences"] = list(DEFAULT_AUDIENCES)
        causes = _validate_token_request(spec)
        if causes:
            raise errors.invalid("TokenRequest", name, causes, group="authentication.k8s.io")
        bound = self._bound_object(ops, namespace or "", spec.get("boundObjectRef"))
        now = parse_time(ops.now())
        assert now is not None
        exp = now + timedelta(seconds=int(spec["expirationSeconds"]))
        sa_meta = sa.get("metadata") or {}
        private: JsonDict = {"namespace": namespace,
                             "serviceaccount": {"name": name, "uid": sa_meta.get("uid", "")}}
        if bound is not None:
            kind_key = str(bound.get("kind", "")).lower()
            private[kind_key] = {"name": bound["name"], "uid": bound.get("uid", "")}
        iat = int(now.timestamp())
        claims: JsonDict = {
            "aud": list(spec["audiences"]), "exp": int(exp.timestamp()), "iat": iat, "iss": ISSUER,
            "jti": str(uuid.UUID(int=ops.rng.getrandbits(128), version=4)), "kubernetes.io": private,
            "nbf": iat, "sub": f"system:serviceaccount:{namespace}:{name}",
        }
        token = sign_jwt(claims, ops.hook_state(SigningKey))
        meta = req.get("metadata")
        req["metadata"] = {**(meta if isinstance(meta, dict) else {}), "name": name, "namespace": namespace, "creationTimestamp": None}
        req["status"] = {"token": token, "expirationTimestamp": rfc3339(exp)}
        return req

    @staticmethod
    def _bound_object(ops: RegistryOps, namespace: str, ref: Any) -> JsonDict | None:
        if not isinstance(ref, dict):
            return None
        kind = ref["kind"]
        resource = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}[kind]
        target = ops.registry.get("", "v1", resource)
        assert target is not None
        obj = ops.get(target, namespace if target.namespaced else None, str(ref["name"]))
        uid = (obj.get("metadata") or {}).get("uid", "")
        if ref.get("uid") and ref["uid"] != uid:
            raise errors.ConflictError(f'the UID in the bound object reference ({ref["uid"]}) does not match '
                                       f'the UID in record. The object might have been deleted and then recreated')
        return {"kind": kind, "name": ref["name"], "uid": uid}


class ServiceAccountStrategy(Strategy):
    kind = "ServiceAccount"
    return_deleted_object = True
    subresources: ClassVar[Mapping[str, Subresource]] = MappingProxyType({"token": TokenREST()})
