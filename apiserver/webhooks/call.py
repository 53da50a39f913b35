"""One webhook call (layer L4, apiserver.webhooks): the AdmissionReview request, the HTTPS POST
and the checks on the answer, as upstream's webhook/request and generic webhook client.

Data flow: `dispatch` -> `review_request(attrs, ...)` -> `post_review(hook, body, resolver)`
(aiohttp client, TLS trusting clientConfig.caBundle, `timeoutSeconds`) -> `verify_response`
-> `WebhookResponse` (allowed, status, patch, warnings). Transport failures and malformed
answers raise `CallingWebhookError`, which the dispatcher turns into a 500 or ignores per
failurePolicy; a denial becomes `rejection(...)`, upstream's ToStatusErr.

Error texts are upstream's, with Go's wording for the transport's errors: `failed calling
webhook "v.example.com": failed to call webhook: Post "https://127.0.0.1:9443/v?timeout=1s":
dial tcp 127.0.0.1:9443: connect: connection refused`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import errno
import ipaddress
import logging
import socket
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import orjson

from apiserver.webhooks.attributes import Attributes
from apiserver.webhooks.source import CABundleError, Webhook
from minik3s.api.errors import ApiError
from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict

logger = logging.getLogger(__name__)

REVIEW_VERSIONS = ("v1", "v1beta1")
# (namespace, name) -> the Service and its Endpoints, from the store
ServiceLookup = Callable[[str, str], tuple[JsonDict | None, JsonDict | None]]


class CallingWebhookError(Exception):
    """upstream's ErrCallingWebhook: the webhook could not be asked or answered nonsense."""

    def __init__(self, webhook: str, reason: str) -> None:
        super().__init__(f"failed calling webhook {orjson.dumps(webhook).decode()}: {reason}")
        self.webhook = webhook
        self.reason = reason


class WebhookRejection(ApiError):
    """A webhook's denial: its own Status, message prefixed as upstream's ToStatusErr (an empty
    reason is left out of the Status, as for every ApiError)."""


def rejection(webhook: str, status: Any) -> WebhookRejection:
    """ToStatusErr: the webhook's code (at least 400), reason and details, and the message
    `admission webhook "<name>" denied the request: <message or reason>`."""
    st = status if isinstance(status, dict) else {}
    denied = f"admission webhook {orjson.dumps(webhook).decode()} denied the request"
    code = st.get("code")
    code = code if isinstance(code, int) and not isinstance(code, bool) and code >= 400 else 400
    reason = str(st.get("reason") or "")
    if st.get("message"):
        message = f"{denied}: {st['message']}"
    elif reason:
        message = f"{denied}: {reason}"
    else:
        message = f"{denied} without explanation"
    details = st.get("details") if isinstance(st.get("details"), dict) else None
    return WebhookRejection(message, details=details, code=code, reason=reason)


@dataclass(slots=True)
class WebhookResponse:
    allowed: bool
    status: JsonDict | None = None
    patch: list[Any] | None = None
    warnings: list[str] = field(default_factory=list)


def go_duration(seconds: int) -> str:
    """Go's time.Duration String for whole seconds: 10 -> "10s", 90 -> "1m30s"."""
    m, s = divmod(seconds, 60)
    return f"{m}m{s}s" if m else f"{s}s"


def _gvk(info: ResourceInfo) -> JsonDict:
    return {"group": info.group, "version": info.version, "kind": info.kind}


def _gvr(info: ResourceInfo) -> JsonDict:
    return {"group": info.group, "version": info.version, "resource": info.resource}


def review_version(hook: Webhook) -> str:
    """The first of the webhook's admissionReviewVersions this server speaks (validation
    requires one; a stored configuration without fails the call, per failurePolicy)."""
    for v in hook.review_versions:
        if v in REVIEW_VERSIONS:
            return v
    raise CallingWebhookError(hook.name, "webhook does not accept known AdmissionReview versions")


def review_request(attrs: Attributes, matched: ResourceInfo, *, uid: uuid.UUID, version: str,
                   obj: JsonDict | None, old: JsonDict | None) -> JsonDict:
    """AdmissionReview with the request (admission/v1 AdmissionRequest). `matched` is the
    resource version the webhook is called with; `obj`/`old` are in that version."""
    req: JsonDict = {"uid": str(uid), "kind": attrs.object_kind or _gvk(matched), "resource": _gvr(matched)}
    if attrs.subresource:
        req["subResource"] = attrs.subresource
    req["requestKind"] = attrs.object_kind or _gvk(attrs.info)
    req["requestResource"] = _gvr(attrs.info)
    if attrs.subresource:
        req["requestSubResource"] = attrs.subresource
    if attrs.name:
        req["name"] = attrs.name
    if attrs.namespace:
        req["namespace"] = attrs.namespace
    req["operation"] = attrs.operation
    req["userInfo"] = attrs.user_info.to_wire()
    req["object"] = obj
    req["oldObject"] = old
    req["dryRun"] = attrs.dry_run
    req["options"] = attrs.options
    return {"kind": "AdmissionReview", "apiVersion": f"admission.k8s.io/{version}", "request": req}


def admission_request(attrs: Attributes, matched: ResourceInfo) -> JsonDict:
    """The AdmissionRequest's fields as CEL's `request` variable (matchConditions, policies):
    the review's request with an empty `uid` and without `object` / `oldObject` (those are
    their own variables), as upstream's CreateAdmissionRequest."""
    req: JsonDict = review_request(attrs, matched, uid=_NO_UID, version="v1", obj=None, old=None)["request"]
    req["uid"] = ""
    del req["object"], req["oldObject"]
    return req


_NO_UID = uuid.UUID(int=0)


def verify_response(hook: Webhook, uid: uuid.UUID, version: str, review: Any) -> WebhookResponse:
    """VerifyAdmissionResponse: raises CallingWebhookError("received invalid webhook response: ...")."""

    def bad(why: str) -> CallingWebhookError:
        return CallingWebhookError(hook.name, f"received invalid webhook response: {why}")

    if not isinstance(review, dict):
        raise CallingWebhookError(hook.name, "failed to call webhook: the response is not an AdmissionReview object")
    resp = review.get("response")
    if not isinstance(resp, dict):
        raise bad("webhook response was absent")
    if resp.get("uid") != str(uid):
        raise bad(f"expected response.uid={orjson.dumps(str(uid)).decode()}, "
                  f"got {orjson.dumps(str(resp.get('uid') or '')).decode()}")
    if version == "v1":
        gv, kind = review.get("apiVersion") or "", review.get("kind") or ""
        if gv != "admission.k8s.io/v1" or kind != "AdmissionReview":
            group, _, ver = str(gv).rpartition("/")
            got = f"{group}/{ver}, Kind={kind}" if group else f"{ver}, Kind={kind}"
            raise bad(f"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}")
    raw_patch = resp.get("patch") or ""
    patch_type = str(resp.get("patchType") or "")
    if version == "v1beta1" and raw_patch and not patch_type:
        patch_type = "JSONPatch"  # v1beta1 did not require it
    if hook.mutating:
        if raw_patch and not patch_type:
            raise bad("webhook returned response.patch but not response.patchType")
        if patch_type and not raw_patch:
            raise bad("webhook returned response.patchType but not response.patch")
    else:
        if raw_patch:
            raise bad("validating webhook may not return response.patch")
        if patch_type:
            raise bad("validating webhook may not return response.patchType")
    patch: list[Any] | None = None
    if raw_patch:
        if patch_type != "JSONPatch":
            raise CallingWebhookError(hook.name, f"unsupported patch type {orjson.dumps(patch_type).decode()}")
        try:
            decoded = orjson.loads(base64.b64decode(str(raw_patch), validate=True))
        except (binascii.Error, ValueError, orjson.JSONDecodeError) as e:
            raise PatchDecodeError(str(e)) from None
        if not isinstance(decoded, list):
            raise PatchDecodeError("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        patch = decoded
    warnings = [str(w) for w in resp.get("warnings") or () if isinstance(w, str)]
    status = resp.get("status") if isinstance(resp.get("status"), dict) else None
    return WebhookResponse(allowed=resp.get("allowed") is True, status=status, patch=patch, warnings=warnings)


class PatchDecodeError(Exception):
    """The webhook's patch is not a JSON patch (upstream answers 500, whatever failurePolicy)."""


# ---------------------------------------------------------------------------------- transport
@dataclass(slots=True)
class Target:
    """Where to POST: `url` as shown in errors; `connect_url` and `server_hostname` when a
    service reference is mapped onto one of its endpoints."""

    url: str
    connect_url: str
    server_hostname: str | None = None


def _with_timeout(url: str, timeout: int) -> str:
    parts = urlsplit(url)
    q = f"{parts.query}&timeout={go_duration(timeout)}" if parts.query else f"timeout={go_duration(timeout)}"
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "", q, ""))


def _local_address(ip: str) -> bool:
    """True for an address this machine can be reached at (loopback or an own interface's)."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return False
    if addr.is_loopback:
        return True
    fam = socket.AF_INET6 if addr.version == 6 else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        try:
            s.bind((ip, 0))
        except OSError:
            return False
    return True


HOST_ALIAS = "host.k3d.internal"

def resolve(hook: Webhook, services: ServiceLookup) -> Target:
    """clientConfig.url as is; clientConfig.service as https://<name>.<ns>.svc:<port><path>,
    connected at the first of the Service's ready endpoint addresses on this machine (there is
    no cluster network: an address elsewhere, such as a simulated pod IP, cannot be reached)."""
    cc = hook.client_config
    timeout = hook.timeout_seconds
    if cc.get("url"):
        url = _with_timeout(str(cc["url"]), timeout)
        parts = urlsplit(url)
        if parts.hostname == HOST_ALIAS:
            # k3d's name for the machine the cluster runs on, which a K3s API server resolves
            # (kopf and other operator tools register their local webhook servers under it):
            # here that machine is this one
            netloc = "127.0.0.1" + (f":{parts.port}" if parts.port else "")
            return Target(url, urlunsplit(parts._replace(netloc=netloc)), server_hostname=HOST_ALIAS)
        return Target(url, url)
    raw_ref = cc.get("service")
    ref: JsonDict = raw_ref if isinstance(raw_ref, dict) else {}
    ns, name = str(ref.get("namespace") or ""), str(ref.get("name") or "")
    port = int(ref.get("port") or 443)
    path = str(ref.get("path") or "")
    host = f"{name}.{ns}.svc"
    url = _with_timeout(f"https://{host}:{port}{path}", timeout)
    svc, eps = services(ns, name)
    fail = f"failed to call webhook: Post {orjson.dumps(url).decode()}: "
    if svc is None:
        raise CallingWebhookError(hook.name, fail + f"service {orjson.dumps(name).decode()} not found")
    port_name: str | None = None
    for p in (svc.get("spec") or {}).get("ports") or ():
        if p.get("port") == port:
            port_name = str(p.get("name") or "")
            break
    else:
        raise CallingWebhookError(hook.name, fail + f"no service port {port} found for service "
                                                    f"{orjson.dumps(name).decode()}")
    for subset in (eps or {}).get("subsets") or ():
        ep_port = next((p.get("port") for p in subset.get("ports") or ()
                        if str(p.get("name") or "") == port_name), None)
        if ep_port is None:
            continue
        for a in subset.get("addresses") or ():
            ip = str(a.get("ip") or "")
            if _local_address(ip):
                shown = f"[{ip}]" if ":" in ip else ip
                connect = _with_timeout(f"https://{shown}:{ep_port}{path}", timeout)
                return Target(url, connect, server_hostname=host)
    raise CallingWebhookError(hook.name, fail + f"no endpoints available for service {orjson.dumps(name).decode()}")


def _go_error(e: BaseException, netloc: str) -> str:
    """Go's net/http wording for a transport failure."""
    if isinstance(e, aiohttp.ClientConnectorCertificateError):
        cert_err = e.certificate_error
        msg = getattr(cert_err, "verify_message", "") or str(cert_err)
        if "hostname" in msg.lower() or "ip address mismatch" in msg.lower():
            return f"tls: failed to verify certificate: x509: certificate is not valid for {netloc}"
        if "expired" in msg.lower():
            return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if isinstance(e, aiohttp.ClientConnectorError):
        os_err = e.os_error
        if getattr(os_err, "errno", None) == errno.ECONNREFUSED or isinstance(os_err, ConnectionRefusedError):
            return f"dial tcp {netloc}: connect: connection refused"
        return f"dial tcp {netloc}: {os_err.strerror or os_err}"
    if isinstance(e, aiohttp.ClientSSLError | ssl.SSLError):
        return f"remote error: tls: {e}"
    if isinstance(e, aiohttp.ServerDisconnectedError):
        return "EOF"
    return str(e) or type(e).__name__


def _status_error(code: int, body: bytes) -> str:
    """client-go's error for a non-2xx answer that carries no Status."""
    try:
        st = orjson.loads(body)
    except orjson.JSONDecodeError:
        st = None
    if isinstance(st, dict) and st.get("kind") == "Status" and st.get("message"):
        return str(st["message"])
    text = body.decode("utf-8", "replace").strip()
    if code >= 500:
        return f"an error on the server ({orjson.dumps(text or 'unknown').decode()}) has prevented the request " \
               "from succeeding"
    if code == 404:
        return "the server could not find the requested resource"
    return f"the server responded with the status code {code} but did not return more information"


async def post_review(hook: Webhook, target: Target, body: JsonDict) -> Any:
    """POST the review and return the decoded answer; CallingWebhookError on any failure,
    including `timeoutSeconds` passing (`context deadline exceeded`)."""
    fail = f"failed to call webhook: Post {orjson.dumps(target.url).decode()}: "
    try:
        ctx = hook.ssl_context()
    except CABundleError as e:
        raise CallingWebhookError(hook.name, f"{fail}{e}") from None
    netloc = urlsplit(target.connect_url).netloc
    data = orjson.dumps(body)
    # kube-apiserver's webhook clients identify themselves so
    headers = {"Content-Type": "application/json", "Accept": "application/json, */*",
               "User-Agent": "kube-apiserver-admission"}
    if target.server_hostname:
        headers["Host"] = urlsplit(target.url).netloc
    try:
        async with asyncio.timeout(hook.timeout_seconds):
            connector = aiohttp.TCPConnector(ssl=ctx, force_close=True)
            async with aiohttp.ClientSession(connector=connector) as session, session.post(
                    target.connect_url, data=data, headers=headers,
                    server_hostname=target.server_hostname) as resp:
                raw = await resp.read()
                status = resp.status
    except TimeoutError:
        raise CallingWebhookError(hook.name, f"{fail}context deadline exceeded") from None
    except (aiohttp.ClientError, OSError, ssl.SSLError) as e:
        raise CallingWebhookError(hook.name, fail + _go_error(e, netloc)) from None
    if not 200 <= status < 300:
        raise CallingWebhookError(hook.name, "failed to call webhook: " + _status_error(status, raw))
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise CallingWebhookError(hook.name, f"failed to call webhook: {e}") from None
