"""HTTP transport for the `Client` protocol (layer L3; the only user of the aiohttp client).

Used by components running out of process (`minik3s scheduler --server URL`,
`minik3s kubelet-sim --server URL`), by the CLI and by tests. Non-2xx answers are parsed as
`Status` objects and raised as the shared `ApiError` hierarchy. A `ClusterAccess` (from a
kubeconfig, `minik3s.client.kubeconfig`) supplies the TLS material — the CA to trust, the client
certificate to present — and a bearer token sent as `Authorization: Bearer`.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import platform
import re
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, cast
from urllib.parse import quote

import aiohttp
import orjson

from minik3s.api.errors import ApiError, ServiceUnavailableError
from minik3s.api.resources import PODS, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.client.interface import PATCH_CONTENT_TYPES, PatchType, WarningLog, WatchEvent
from minik3s.client.kubeconfig import ClusterAccess

logger = logging.getLogger(__name__)


class ServerUnreachableError(ServiceUnavailableError):
    """No answer at all: the connection to the API server failed (refused, reset, closed).
    A 503 Status from a reachable server stays a plain `ServiceUnavailableError`."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


_GO_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i386": "386",
            "i686": "386", "armv7l": "arm"}


def default_user_agent(binary: str) -> str:
    """client-go's `DefaultKubernetesUserAgent` shape, `<binary>/<version> (<os>/<arch>) <source>`:
    e.g. `kube-scheduler/v0.1.0 (linux/amd64) minik3s/v0.1.0`. The apiserver names the field
    manager of a write without `fieldManager` after the part before the first `/` (as
    kube-apiserver's `prefixFromUserAgent`), so the binary name is the component's identity."""
    try:
        version = "v" + importlib.metadata.version("minik3s")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        version = "v0.0.0"
    goos = {"darwin": "darwin", "win32": "windows"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    return f"{binary}/{version} ({goos}/{_GO_ARCH.get(machine, machine)}) minik3s/{version}"


def _ns(res: ResourceInfo, obj: JsonDict | None, namespace: str | None) -> str | None:
    if not res.namespaced:
        return None
    if namespace:
        return namespace
    if obj is not None:
        return (obj.get("metadata") or {}).get("namespace") or "default"
    return None


def _params(**kw: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in kw.items():
        if v is None or v is False:
            continue
        out[k] = "true" if v is True else str(v)
    return out


class HttpClient:
    """`Client` over HTTP. `base_url` like http://127.0.0.1:6443.

    `user_agent` is the identity the server sees (`default_user_agent("kube-scheduler")`); writes
    without an explicit `field_manager` are recorded under its binary name. `on_warning` gets
    each `Warning` header text of a response (kubectl prints them as `Warning: ...`); by default
    each is logged once per client at WARNING (`WarningLog`). `access`: the CA, client
    certificate and bearer token to use (for `base_url`; `HttpClient.for_access` takes its URL).
    """

    def __init__(self, base_url: str, *, session: aiohttp.ClientSession | None = None,
                 connection_limit: int = 64, user_agent: str | None = None,
                 on_warning: Callable[[str], None] | None = None, access: ClusterAccess | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._access = access
        self._ssl = access.ssl_context() if access is not None else None
        self._server_hostname = access.tls_server_name if access is not None else None
        self._session = session
        self._own_session = session is None
        self._limit = connection_limit
        self._ua = user_agent or default_user_agent("minik3s")
        self._on_warning = on_warning or WarningLog(logger)

    shares_items = False  # every object is decoded from the response: the caller owns it

    @classmethod
    def for_access(cls, access: ClusterAccess, **kw: Any) -> HttpClient:
        """A client for `access.server` with its credentials."""
        return cls(access.server, access=access, **kw)

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"User-Agent": self._ua, "Accept": "application/json"}
            if self._access is not None and self._access.token:
                headers["Authorization"] = f"Bearer {self._access.token}"
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit, ssl=self._ssl if self._ssl is not None else True),
                headers=headers,
                json_serialize=lambda o: orjson.dumps(o).decode(),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None and self._own_session:
            await self._session.close()

    async def request(self, method: str, path: str, *, params: dict[str, str] | None = None, body: Any = None,
                      content_type: str = "application/json", accept: str | None = None,
                      raw: bool = False) -> Any:
        """One request by path. `accept` replaces the session's `Accept: application/json` (e.g. a
        server-side Table). A JSON answer is decoded, other text returned as str; non-2xx raises
        the `ApiError` its Status stands for; no connection raises `ServerUnreachableError`."""
        data = None
        headers = {}
        if accept is not None:
            headers["Accept"] = accept
        if body is not None:
            data = orjson.dumps(body)
            headers["Content-Type"] = content_type
        try:
            async with self.session.request(method, self.base_url + path, params=params, data=data,
                                            headers=headers, server_hostname=self._server_hostname) as resp:
                for header in resp.headers.getall("Warning", ()):
                    for text in warning_texts(header):
                        self._on_warning(text)
                payload = await resp.read()
                if resp.status >= 300:
                    raise error_from_response(resp.status, payload)
                if raw:
                    return payload
                if not payload:
                    return None
                ct = resp.headers.get("Content-Type", "")
                if "json" not in ct:
                    return payload.decode("utf-8", "replace")
                return orjson.loads(payload)
        except aiohttp.ClientConnectionError as e:
            raise ServerUnreachableError(f"cannot reach the API server at {self.base_url}: {e}",
                                         url=self.base_url) from e

    async def _req(self, method: str, path: str, **kw: Any) -> JsonDict:
        """`request` for verbs that answer with one JSON object."""
        return cast(JsonDict, await self.request(method, path, **kw))

    # ---- verbs
    async def get(self, res: ResourceInfo, name: str, namespace: str | None = None, *,
                  subresource: str | None = None) -> JsonDict:
        return await self._req("GET", res.path(_ns(res, None, namespace), quote(name), subresource))

    async def list(self, res: ResourceInfo, namespace: str | None = None, *, label_selector: str | None = None,
                   field_selector: str | None = None, limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None, read_only: bool = False) -> JsonDict:
        # read_only needs nothing here: every item is freshly decoded and the caller's own
        return await self._req("GET", res.path(namespace if res.namespaced else None), params=_params(
            labelSelector=label_selector, fieldSelector=field_selector, limit=limit, resourceVersion=resource_version,
            **{"continue": continue_}))

    async def create(self, res: ResourceInfo, obj: JsonDict, namespace: str | None = None, *,
                     field_manager: str | None = None, dry_run: bool = False,
                     read_only: bool = False, handover: bool = False) -> JsonDict:
        # read_only, handover: accepted for the protocol; the body is serialised and every response
        # freshly decoded, so neither is ever shared
        return await self._req("POST", res.path(_ns(res, obj, namespace)), body=obj,
                                  params=_params(fieldManager=field_manager, dryRun="All" if dry_run else None))

    async def update(self, res: ResourceInfo, obj: JsonDict, *, subresource: str | None = None,
                     field_manager: str | None = None, read_only: bool = False) -> JsonDict:
        name = (obj.get("metadata") or {}).get("name") or ""
        return await self._req("PUT", res.path(_ns(res, obj, None), quote(name), subresource), body=obj,
                                  params=_params(fieldManager=field_manager))

    async def update_status(self, res: ResourceInfo, obj: JsonDict, *, read_only: bool = False) -> JsonDict:
        return await self.update(res, obj, subresource="status")

    async def patch(self, res: ResourceInfo, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: PatchType = "merge", subresource: str | None = None,
                    field_manager: str | None = None, force: bool | None = None,
                    read_only: bool = False) -> JsonDict:
        return await self._req("PATCH", res.path(_ns(res, None, namespace) if res.namespaced else None, quote(name),
                                                    subresource),
                                  body=patch, content_type=PATCH_CONTENT_TYPES[patch_type],
                                  params=_params(fieldManager=field_manager, force=force))

    async def delete(self, res: ResourceInfo, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, preconditions: JsonDict | None = None,
                     propagation_policy: str | None = None) -> JsonDict:
        body: JsonDict = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        if preconditions:
            body["preconditions"] = preconditions
        if propagation_policy:
            body["propagationPolicy"] = propagation_policy
        return await self._req("DELETE", res.path(namespace if res.namespaced else None, quote(name)), body=body)

    async def delete_collection(self, res: ResourceInfo, namespace: str | None = None, *,
                                label_selector: str | None = None, field_selector: str | None = None) -> JsonDict:
        return await self._req("DELETE", res.path(namespace if res.namespaced else None),
                                  params=_params(labelSelector=label_selector, fieldSelector=field_selector))

    def watch(self, res: ResourceInfo, namespace: str | None = None, *, resource_version: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None,
              timeout_seconds: int | None = None, allow_bookmarks: bool = False) -> _HttpWatch:
        params = _params(watch=True, resourceVersion=resource_version, labelSelector=label_selector,
                         fieldSelector=field_selector, timeoutSeconds=timeout_seconds,
                         allowWatchBookmarks=allow_bookmarks)
        return _HttpWatch(self, res.path(namespace if res.namespaced else None), params)

    def watch_path(self, path: str, params: dict[str, str], *, accept: str | None = None) -> _HttpWatch:
        """A watch by path and query (`watch=true` included by the caller), for clients that map
        resources themselves (the CLI's discovery); `accept` as in `request`."""
        return _HttpWatch(self, path, params, accept=accept)

    async def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        meta: JsonDict = {"name": name, "namespace": namespace}
        if uid:
            meta["uid"] = uid
        await self.request("POST", PODS.path(namespace, quote(name), "binding"),
                           body={"kind": "Binding", "apiVersion": "v1", "metadata": meta,
                                 "target": {"kind": "Node", "name": node_name}})

    async def evict(self, namespace: str, name: str, *, delete_options: JsonDict | None = None) -> None:
        body: JsonDict = {"kind": "Eviction", "apiVersion": "policy/v1",
                          "metadata": {"name": name, "namespace": namespace}}
        if delete_options:
            body["deleteOptions"] = delete_options
        await self.request("POST", PODS.path(namespace, quote(name), "eviction"), body=body)


_WARNING_RE = re.compile(r'\d{3} +\S+ +"((?:[^"\\]|\\.)*)"')


def warning_texts(header: str) -> list[str]:
    """The texts of one `Warning` header (RFC 7234: `299 - "text"`, comma-separated, quotes
    escaped with a backslash), as client-go's `ParseWarningHeaders`."""
    return [re.sub(r"\\(.)", r"\1", m.group(1)) for m in _WARNING_RE.finditer(header)]


def error_from_response(status: int, payload: bytes) -> ApiError:
    """The ApiError a non-2xx answer stands for (its Status body, or the code and text)."""
    try:
        doc = orjson.loads(payload)
        if isinstance(doc, dict) and doc.get("kind") == "Status":
            return ApiError.from_status(doc, status)
    except orjson.JSONDecodeError:
        pass
    return ApiError.from_status({"code": status, "message": payload.decode("utf-8", "replace")[:500]}, status)


class _HttpWatch:
    """One chunked watch response, one JSON event per line (the apiserver's watch framing)."""

    def __init__(self, client: HttpClient, path: str, params: dict[str, str], *, accept: str | None = None) -> None:
        self._client = client
        self._path = path
        self._params = params
        self._headers = {"Accept": accept} if accept else None
        self._resp: aiohttp.ClientResponse | None = None
        self._it: AsyncIterator[WatchEvent] | None = None
        self._closed = False

    def __aiter__(self) -> _HttpWatch:
        return self

    @property
    def established(self) -> bool:
        """True once the server answered 2xx and events flow: an `ApiError` raised after that is
        an ERROR event inside the stream (e.g. 410 Expired), before it the request failed."""
        return self._resp is not None and self._resp.status < 300

    async def __anext__(self) -> WatchEvent:
        if self._it is None:
            self._it = self._events()
        return await self._it.__anext__()

    async def _events(self) -> AsyncIterator[WatchEvent]:
        if self._closed:
            return
        try:
            self._resp = await self._client.session.get(
                self._client.base_url + self._path, params=self._params, headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_read=None),
                server_hostname=self._client._server_hostname)
        except aiohttp.ClientConnectionError as e:
            raise ServerUnreachableError(f"cannot reach the API server: {e}", url=self._client.base_url) from e
        resp = self._resp
        try:
            if resp.status >= 300:
                raise error_from_response(resp.status, await resp.read())
            buf = b""
            while True:
                try:
                    chunk = await resp.content.readany()
                except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, asyncio.CancelledError) as e:
                    if isinstance(e, asyncio.CancelledError):
                        raise
                    return
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not line.strip():
                        continue
                    ev = orjson.loads(line)
                    if ev.get("type") == "ERROR":
                        raise ApiError.from_status(ev.get("object") or {})
                    yield WatchEvent(ev.get("type", ""), ev.get("object") or {})
        finally:
            resp.close()

    async def close(self) -> None:
        """Safe from any task: closing the response ends a concurrent iteration."""
        self._closed = True
        if self._resp is not None:
            self._resp.close()
        it = self._it
        if it is not None and not getattr(it, "ag_running", False):
            await it.aclose()  # type: ignore[attr-defined]
