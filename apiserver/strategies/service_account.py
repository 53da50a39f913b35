"""ServiceAccount strategy, serviceaccounts/{name}/token (the TokenRequest subresource) and the
service-account token authenticator (layer L4, apiserver; upstream
pkg/registry/core/serviceaccount/storage/token.go, pkg/serviceaccount/{jwt,claims}.go).

DELETE answers the deleted ServiceAccount (ReturnDeletedObject). A create or update that newly
sets the `kubernetes.io/enforce-mountable-secrets` annotation draws upstream's deprecation
warning (warnIfHasEnforceMountableSecretsAnnotation, v1.32+). POST .../token takes an
authentication.k8s.io/v1 TokenRequest: `spec.expirationSeconds` defaults to 3600 and must be
at least 600 (10 minutes) and at most 2^32; empty `spec.audiences` become the server's own
(`https://kubernetes.default.svc.cluster.local`, `k3s`); a boundObjectRef must name an existing
Pod or Secret of the namespace. The answer (201) is the request with `status.token` and
`status.expirationTimestamp`. The token is a JWT signed RS256 with the service-account key
(`ServiceAccountKeys`, hook state: the composition root provides the persisted
`server/tls/service.key`; without one, e.g. a bare in-process API in tests, a key is made once
per registry), `kid` the key's upstream key id, and upstream's claims: iss, sub
`system:serviceaccount:<ns>:<name>`, aud, iat, nbf, exp, jti and `kubernetes.io` (namespace,
serviceaccount name+uid, the bound pod or secret name+uid, and the pod's node name+uid).

`authenticate_token(ops, token, audiences=)` is the other half (what kube-apiserver's
service-account JWT authenticator does): the signature with the same key, the issuer, iat/nbf/
exp against the server's clock (with go-jose's one-minute leeway), an audience in common with
the API's, and that the ServiceAccount — and the bound secret, pod or (node-bound) node — still
exists with the same uid and was not deleted more than the leeway ago; the messages are
upstream's (`service account token has expired`, `serviceaccounts "x" not found`,
`service account token has been invalidated`, ...). The user is `system:serviceaccount:<ns>:<name>` (uid: the ServiceAccount's) in
`system:serviceaccounts` and `system:serviceaccounts:<ns>`, with the pod's name/uid and the
token id as `extra` (`authentication.kubernetes.io/pod-name`, `pod-uid`, `node-name`,
`node-uid`, `credential-id`).

Data flow: handler -> `core.subresource(serviceaccounts, "token")` -> `TokenREST.create(ops,...)`
-> reads the ServiceAccount (404 when missing) -> the signed token; nothing is stored.
Authentication: HTTP layer (bearer token) or a TokenReview -> `authenticate_token` -> reads the
ServiceAccount/pod/secret -> `UserInfo` or `TokenError`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType
from typing import Any, ClassVar

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from minik3s.api import errors
from minik3s.api.options import WriteOptions
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import AUTHENTICATED, UserInfo
from minik3s.api.validation import invalid, not_supported, required
from minik3s.utils.clock import parse_time, rfc3339

from .base import Strategy
from .rest import RegistryOps, Subresource

ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_AUDIENCES = ("https://kubernetes.default.svc.cluster.local", "k3s")
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
SA_PREFIX = "system:serviceaccount:"
SA_GROUP = "system:serviceaccounts"
EXTRA_PREFIX = "authentication.kubernetes.io/"


class TokenError(Exception):
    """A bearer token that is not (or no longer) a valid service-account token; the message is
    what a TokenReview's status.error says."""


class ServiceAccountKeys:
    """The service-account signing key (hook state). `ServiceAccountKeys()` makes a fresh RSA
    2048 key (a bare in-process API); the composition root provides the persisted one with
    `from_pem`. `kid` is upstream's key id: base64url(SHA-256(PKIX DER public key))."""

    def __init__(self, key: rsa.RSAPrivateKey | None = None) -> None:
        self.private = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public = self.private.public_key()
        der = self.public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        self.kid = _b64(hashlib.sha256(der).digest())

    @classmethod
    def from_pem(cls, pem: bytes) -> ServiceAccountKeys:
        key = serialization.load_pem_private_key(pem, password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError("the service-account key must be an RSA private key")
        return cls(key)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_jwt(claims: JsonDict, keys: ServiceAccountKeys) -> str:
    header = {"alg": "RS256", "kid": keys.kid}
    head = _b64(json.dumps(header, separators=(",", ":")).encode())
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    sig = keys.private.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{head}.{body}.{_b64(sig)}"


def verified_claims(token: str, keys: ServiceAccountKeys) -> JsonDict | None:
    """The claims of a JWT this server signed, or None when it is not one of ours (not a JWT,
    another issuer, another key, a bad signature): the caller tries its other authenticators."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        header = json.loads(_unb64(parts[0]))
        claims = json.loads(_unb64(parts[1]))
        sig = _unb64(parts[2])
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if not isinstance(header, dict) or not isinstance(claims, dict) or header.get("alg") != "RS256":
        return None
    if claims.get("iss") != ISSUER:
        return None
    try:
        keys.public.verify(sig, f"{parts[0]}.{parts[1]}".encode(), padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return None
    return claims


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
            node = bound.get("node")
            if node is not None:  # a pod's node (ServiceAccountTokenPodNodeInfo, on since v1.30)
                private["node"] = node
        iat = int(now.timestamp())
        claims: JsonDict = {
            "aud": list(spec["audiences"]), "exp": int(exp.timestamp()), "iat": iat, "iss": ISSUER,
            "jti": str(uuid.UUID(int=ops.rng.getrandbits(128), version=4)), "kubernetes.io": private,
            "nbf": iat, "sub": f"system:serviceaccount:{namespace}:{name}",
        }
        token = sign_jwt(claims, ops.hook_state(ServiceAccountKeys))
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
        out: JsonDict = {"kind": kind, "name": ref["name"], "uid": uid}
        node_name = (obj.get("spec") or {}).get("nodeName") if kind == "Pod" else None
        if node_name:
            nodes = ops.registry.get("", "v1", "nodes")
            assert nodes is not None
            try:
                node = ops.get(nodes, None, str(node_name))
                out["node"] = {"name": node_name, "uid": (node.get("metadata") or {}).get("uid", "")}
            except errors.NotFoundError:
                pass
        return out


ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"


def _has_enforce_annotation(sa: JsonDict) -> bool:
    annotations = (sa.get("metadata") or {}).get("annotations")
    return isinstance(annotations, dict) and ENFORCE_MOUNTABLE_SECRETS in annotations


def enforce_mountable_secrets_warnings(new: JsonDict, old: JsonDict | None) -> list[str]:
    """warnIfHasEnforceMountableSecretsAnnotation: only when the request newly sets it."""
    if (old is not None and _has_enforce_annotation(old)) or not _has_enforce_annotation(new):
        return []
    return [f"metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; prefer separate namespaces "
            "to isolate access to mounted secrets"]


class ServiceAccountStrategy(Strategy):
    kind = "ServiceAccount"
    return_deleted_object = True
    subresources: ClassVar[Mapping[str, Subresource]] = MappingProxyType({"token": TokenREST()})

    def warnings_on_create(self, obj: JsonDict) -> list[str]:
        return enforce_mountable_secrets_warnings(obj, None)

    def warnings_on_update(self, new: JsonDict, old: JsonDict) -> list[str]:
        return enforce_mountable_secrets_warnings(new, old)


LEEWAY = 60  # go-jose's jwt.DefaultLeeway: exp/nbf/iat and deletions are judged with a minute's slack
INVALIDATED = "service account token has been invalidated"


def _ref(private: JsonDict, key: str) -> JsonDict | None:
    ref = private.get(key)
    if ref is None:
        return None
    if not isinstance(ref, dict) or not ref.get("name"):
        raise TokenError("service account token claims could not be validated due to unexpected validation error")
    return ref


def _core_info(ops: RegistryOps, resource: str) -> ResourceInfo:
    info = ops.registry.get("", "v1", resource)
    assert info is not None
    return info


def _deleted_before(obj: JsonDict, cutoff: int) -> bool:
    ts = parse_time((obj.get("metadata") or {}).get("deletionTimestamp"))
    return ts is not None and int(ts.timestamp()) < cutoff


def _bound(ops: RegistryOps, resource: str, namespace: str | None, ref: JsonDict, what: str,
           cutoff: int) -> JsonDict:
    """A bound pod/secret/node the claims name, alive with the claimed uid (upstream's messages)."""
    try:
        obj = ops.get(_core_info(ops, resource), namespace, str(ref["name"]))
    except errors.NotFoundError:
        raise TokenError(INVALIDATED) from None
    uid = (obj.get("metadata") or {}).get("uid", "")
    if ref.get("uid") != uid:
        raise TokenError(f"{what} UID ({uid}) does not match service account {what} ref claim ({ref.get('uid')})")
    if _deleted_before(obj, cutoff):
        raise TokenError(INVALIDATED)
    return obj


def _go_quote_list(values: Sequence[str]) -> str:
    """Go's %q of a []string: `["a" "b"]`."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def authenticate_token(ops: RegistryOps, token: str, *, audiences: Sequence[str] = DEFAULT_AUDIENCES
                       ) -> tuple[UserInfo, list[str]] | None:
    """The service account a bound token of this server names and the audiences it is good for
    (those of `audiences` the token carries; see the module docstring), None
    when the token is not one of ours, `TokenError` with upstream's message (pkg/serviceaccount
    claims.go `Validate`, jwt.go) when it is ours but not valid (any more)."""
    claims = verified_claims(token, ops.hook_state(ServiceAccountKeys))
    if claims is None:
        return None
    now = parse_time(ops.now())
    assert now is not None
    t = int(now.timestamp())
    exp, nbf, iat = claims.get("exp"), claims.get("nbf"), claims.get("iat")
    if not isinstance(exp, int) or t > exp + LEEWAY:
        raise TokenError("service account token has expired")
    if isinstance(nbf, int) and t < nbf - LEEWAY:
        raise TokenError("service account token is not valid yet")
    if isinstance(iat, int) and t < iat - LEEWAY:
        raise TokenError("service account token is issued in the future")
    aud = claims.get("aud")
    token_auds = [aud] if isinstance(aud, str) else [a for a in aud or [] if isinstance(a, str)]
    if not set(token_auds) & set(audiences):
        raise TokenError(f"token audiences {_go_quote_list(token_auds)} is invalid for the target audiences "
                         f"{_go_quote_list(audiences)}")
    private = claims.get("kubernetes.io")
    sub = str(claims.get("sub") or "")
    if not isinstance(private, dict) or not sub.startswith(SA_PREFIX) or sub.count(":") != 3:
        raise TokenError("service account token claims could not be validated due to unexpected validation error")
    namespace, name = sub[len(SA_PREFIX):].split(":", 1)
    sa_ref = _ref(private, "serviceaccount")
    if private.get("namespace") != namespace or sa_ref is None or sa_ref.get("name") != name:
        raise TokenError("service account token claims could not be validated due to unexpected validation error")
    cutoff = t - LEEWAY  # things deleted before now - leeway are gone
    try:
        sa = ops.get(_core_info(ops, "serviceaccounts"), namespace, name)
    except errors.NotFoundError as e:
        raise TokenError(e.message) from None  # serviceaccounts "<name>" not found
    sa_uid = (sa.get("metadata") or {}).get("uid", "")
    if sa_uid != sa_ref.get("uid"):
        raise TokenError(f"service account UID ({sa_uid}) does not match claim ({sa_ref.get('uid')})")
    if _deleted_before(sa, cutoff):
        raise TokenError(f"service account {namespace}/{name} has been deleted")
    extra: dict[str, tuple[str, ...]] = {}
    secret_ref, pod_ref, node_ref = _ref(private, "secret"), _ref(private, "pod"), _ref(private, "node")
    if secret_ref is not None:
        _bound(ops, "secrets", namespace, secret_ref, "secret", cutoff)
    if pod_ref is not None:
        _bound(ops, "pods", namespace, pod_ref, "pod", cutoff)
        extra[EXTRA_PREFIX + "pod-name"] = (str(pod_ref["name"]),)
        extra[EXTRA_PREFIX + "pod-uid"] = (str(pod_ref.get("uid", "")),)
    if node_ref is not None:
        if pod_ref is None:  # a node-bound token lives as long as its node
            _bound(ops, "nodes", None, node_ref, "node", cutoff)
        extra[EXTRA_PREFIX + "node-name"] = (str(node_ref["name"]),)
        extra[EXTRA_PREFIX + "node-uid"] = (str(node_ref.get("uid", "")),)
    if claims.get("jti"):
        extra[EXTRA_PREFIX + "credential-id"] = (f"JTI={claims['jti']}",)
    user = UserInfo(sub, uid=str(sa_uid), groups=(SA_GROUP, f"{SA_GROUP}:{namespace}", AUTHENTICATED),
                    extra=MappingProxyType(extra))
    return user, [a for a in audiences if a in token_auds]
