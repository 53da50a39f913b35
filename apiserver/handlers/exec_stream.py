"""`pods/{name}/exec`, `pods/{name}/attach` and `pods/{name}/portforward` over WebSocket:
kube-apiserver's proxy and the kubelet's streaming server, answered by the simulated container
(layer L4, apiserver handlers).

Why: `kubectl exec` (WebSocket `v5.channel.k8s.io` since kubectl 1.30), the official Python
client's `stream()` (v5, then v4) and every operator test that checks what a container sees
(`cat /etc/config/key`, `env`, `ls /var/run/secrets/...`) need exec. Simulated kubelets run no
processes, so the command is played by the simulated shell (`minik3s.api.helpers.shell`) over
what the kubelet would have set up for the container (`minik3s.api.helpers.container_view`:
its environment, the files of its volume mounts, /etc/hosts, /etc/resolv.conf, a real bound
ServiceAccount token). Files a command writes stay for the life of the container run (one
overlay per pod uid, container and restart count), as a container's writable layer does.

Data flow: `subresources.subresource` (after RBAC on `pods/exec`, `create` for the WebSocket
GET as AuthorizePodWebsocketUpgradeCreatePermission asks) -> `serve`:
  1. CONNECT admission (webhooks and policies see a v1 PodExecOptions, before any lookup, as
     ConnectResource admits), then upstream's checks in upstream's order: the pod (404), the container (streamLocation's
     400s), the node (400 "does not have a host assigned", 404 for a Node that does not
     exist), the node's kubelet (a dead or
     missing simulated kubelet: the proxy's dial error, 500 `error dialing backend: ...`), the
     kubelet's own: at least one stream (400 text), the container running (500 text
     `container not found ("c")`, which kubectl prints as `unable to upgrade connection: ...`);
  2. a request that is neither a WebSocket nor a SPDY/3.1 upgrade (a plain GET) gets a 400
     Status; a SPDY upgrade (client-go's SPDY executor) is served by `_SpdyTransport`: the
     remotecommand protocols v4 to v1 negotiated on X-Stream-Protocol-Version, the client's
     streams, the same session as below over them;
  3. the WebSocket handshake with the channel subprotocols the two upstream servers offer:
     `v5.channel.k8s.io` (the apiserver's stream translator: CLOSE frames on channel 255),
     `v4.channel.k8s.io`, `v4.base64.channel.k8s.io`, `channel.k8s.io`, `base64.channel.k8s.io`
     and none (the kubelet's); the client's first listed one that is served wins, as
     x/net/websocket's handshake picks; none served: 403;
  4. wsstream's framing: each message starts with the channel (a byte, or an ASCII digit for
     base64 protocols whose payload is base64); an empty message on the lowest writable
     channel first (stdout, else stderr, else the error channel) tells the client the streams
     are open; stdin frames feed the command, resize frames (channel 4) are read and dropped,
     frames for channels not opened are ignored;
  5. the end: the error channel carries the result, as remotecommand's writeStatus does: v4
     and v5 a metav1.Status (`{"metadata":{},"status":"Success"}`, or `NonZeroExitCode` with an
     `ExitCode` cause, or an InternalError for a program the image lacks); the pre-v4
     protocols only an error's text. Then the socket is closed (code 1000).
Attach (`_MainProcess`) reaches the container's own process instead of starting one: for a
container that keeps stdin open and runs a shell, the simulated shell, started by the first
attach and shared by all of the run's; its exit is recorded for the kubelet
(minik3s.api.helpers.process_exits), which ends the run. Either session ends with exit 137
(exec) or Success (attach) when the container run stops under it.
With `tty=true` the simulated terminal does what a pty's line discipline does: it echoes
what is typed, edits the line (backspace, ^U), hands complete lines to the command, ends
input on ^D at the start of a line, and turns output newlines into CRLF; stderr is merged
into stdout (kubelet NewOptions drops stderr with a tty).
Port-forward is served in the forms clients use: the channel protocol (a data and an error
channel per `ports` value) and kubectl's SPDY/3.1 tunnelled in WebSocket
(`SPDY/3.1+portforward.k8s.io`, `_SpdyPortForward`: the kubelet's stream pairs, framing in
`handlers/spdy.py`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import functools
import hashlib
import logging
import posixpath
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import WSMsgType, web
from aiohttp.http_writer import StreamWriter

from apiserver.core import ApiCore
from apiserver.handlers import spdy
from apiserver.handlers.common import write_options
from apiserver.handlers.node_proxy import kubelet_port, preferred_address
from apiserver.keys import EXEC_PROCESSES, EXEC_TOKENS, USAGE, WATCHES, WatchStream
from apiserver.strategies.pod_rest import container_spec, container_status, stream_container
from minik3s.api import errors
from minik3s.api.helpers import process_exits
from minik3s.api.helpers.container_files import Layered, container_files, main_command, mounts_by_access
from minik3s.api.helpers.container_view import ContainerView, ContainerViewError, container_view
from minik3s.api.helpers.image_servers import IMAGE_FILES, listener
from minik3s.api.helpers.images import IMAGE_DIRS, default_shell, image_repository
from minik3s.api.helpers.script import Script, container_script
from minik3s.api.helpers.shell import SHELL_NAMES, ExecContext, ExecNotFound, run_exec
from minik3s.api.metrics import KubeletProvider
from minik3s.api.options import WriteOptions
from minik3s.api.resources import CONFIGMAPS, NODES, PODS, SECRETS, SERVICEACCOUNTS, SERVICES, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.utils.clock import parse_time

logger = logging.getLogger(__name__)

STDIN, STDOUT, STDERR, ERROR, RESIZE = range(5)
CLOSE = 255  # v5: [255, channel] closes that channel (the client's stdin EOF)
V5 = "v5.channel.k8s.io"
V4 = "v4.channel.k8s.io"
V4_BASE64 = "v4.base64.channel.k8s.io"
V1 = "channel.k8s.io"
V1_BASE64 = "base64.channel.k8s.io"
PROTOCOLS = (V5, V4, V4_BASE64, V1, V1_BASE64)
_BASE64 = frozenset({V4_BASE64, V1_BASE64})
_STATUS_JSON = frozenset({V5, V4, V4_BASE64})
# cluster DNS: K3s' default (the `kube-dns` Service address in 10.43.0.0/16)
CLUSTER_DNS = "10.43.0.10"
CLUSTER_DOMAIN = "cluster.local"
# the kubelet requests a projected token for this long (kube-api-access-*: 3607 s)
_TOKEN_SECONDS = 3607
_CACHE_LIMIT = 4096
_FALSE = frozenset({"0", "f", "false"})


@dataclass(frozen=True, slots=True)
class ExecParams:
    """PodExecOptions from the query (runtime.Convert_Slice_string_To_bool for the flags)."""

    command: tuple[str, ...]
    container: str
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool


def _flag(values: list[str]) -> bool:
    """Convert_Slice_string_To_bool: absent -> false; "0", "f", "false" (any case) -> false;
    anything else, the empty string included, -> true."""
    return bool(values) and values[0].lower() not in _FALSE


def exec_params(query: Any) -> ExecParams:
    stderr, tty = _flag(query.getall("stderr", [])), _flag(query.getall("tty", []))
    return ExecParams(command=tuple(query.getall("command", [])), container=query.get("container") or "",
                      stdin=_flag(query.getall("stdin", [])), stdout=_flag(query.getall("stdout", [])),
                      stderr=stderr and not tty,  # kubelet NewOptions: a tty has no separate stderr
                      tty=tty)


def _exec_options(params: ExecParams, sub: str = "exec") -> JsonDict:
    """The v1 PodExecOptions / PodAttachOptions admission sees (Go's field order; false flags
    omitted)."""
    out: JsonDict = {"kind": "PodAttachOptions" if sub == "attach" else "PodExecOptions", "apiVersion": "v1"}
    for key in ("stdin", "stdout", "stderr", "tty"):
        if getattr(params, key):
            out[key] = True
    if params.container:
        out["container"] = params.container
    if sub != "attach":
        out["command"] = list(params.command)
    return out


def is_websocket_request(request: web.Request) -> bool:
    """wsstream.IsWebSocketRequest: `Upgrade: websocket` and a Connection header naming upgrade."""
    if request.headers.get("Upgrade", "").lower() != "websocket":
        return False
    return any(p.strip() == "upgrade" for p in request.headers.get("Connection", "").lower().split(","))


def _text(status: int, body: str) -> web.Response:
    """An answer relayed from the kubelet: Go's http.Error (text, a trailing newline)."""
    return web.Response(status=status, text=body + "\n", content_type="text/plain", charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})


def _running(pod: JsonDict, container: str) -> JsonDict | None:
    """The container's status while it runs, else None."""
    cs = container_status(pod, container)
    return cs if cs is not None and isinstance((cs.get("state") or {}).get("running"), dict) else None


class _StoreLookup:
    """container_view's Lookup over the API's store (the kubelet's informers and GETs)."""

    def __init__(self, core: ApiCore) -> None:
        self.core = core

    def get(self, resource: str, namespace: str, name: str) -> JsonDict | None:
        info = {"configmaps": CONFIGMAPS, "secrets": SECRETS}.get(resource)
        return None if info is None else self.core.store.get(info.key(namespace, name))

    def services(self, namespace: str) -> list[JsonDict]:
        items, _rv = self.core.store.list(SERVICES.list_prefix(namespace))
        return items


async def _token(request: web.Request, core: ApiCore, pod: JsonDict) -> str | None:
    """The bound token of the pod's projected `kube-api-access-*` volume, as the kubelet's token
    manager keeps it: requested once (TokenRequest bound to the pod) and reused until 80 % of its
    lifetime has passed, so every exec and forwarded connection of the pod sees the same file
    until it rotates, and none of them signs a token of its own."""
    meta = pod.get("metadata") or {}
    sa = str((pod.get("spec") or {}).get("serviceAccountName") or "default")
    tokens = request.app[EXEC_TOKENS]
    key = (str(meta.get("uid") or ""), sa)
    now = core.clock.now().timestamp()
    held = tokens.get(key)
    if held is not None and now < held[1]:
        tokens.move_to_end(key)
        return held[0]
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": _TOKEN_SECONDS,
                     "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta.get("name"),
                                        "uid": meta.get("uid")}}}
    try:
        out = await core.subresource_create(SERVICEACCOUNTS, meta.get("namespace"), sa, "token", body, WriteOptions())
    except errors.ApiError:
        return None  # no such ServiceAccount (any more): the token file is left out, asked again next time
    token = str((out.get("status") or {}).get("token") or "") or None
    tokens[key] = (token, now + 0.8 * _TOKEN_SECONDS)
    while len(tokens) > _CACHE_LIMIT:
        tokens.popitem(last=False)
    return token


class _Channels:
    """wsstream.Conn's writer side: one message per write, the channel first."""

    def __init__(self, ws: web.WebSocketResponse, protocol: str) -> None:
        self.ws, self.base64 = ws, protocol in _BASE64

    async def write(self, channel: int, data: bytes) -> None:
        if self.ws.closed:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            if self.base64:
                await self.ws.send_str(chr(ord("0") + channel) + base64.b64encode(data).decode("ascii"))
            else:
                await self.ws.send_bytes(bytes((channel,)) + data)


class _Stdin:
    """The command's stdin: what the client sent on channel 0, b"" once it is closed (v5 CLOSE,
    or the socket ends)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.eof = False

    def feed(self, data: bytes) -> None:
        if not self.eof and data:
            self.queue.put_nowait(data)

    def close(self) -> None:
        if not self.eof:
            self.eof = True
            self.queue.put_nowait(b"")

    async def read(self) -> bytes:
        data = await self.queue.get()
        if not data:
            self.queue.put_nowait(b"")  # EOF stays EOF for every later read
        return data


class _Terminal:
    """A pty's line discipline (ICANON, ECHO, ONLCR) between the client and the command."""

    def __init__(self, stdin: _Stdin, echo: Callable[[bytes], Awaitable[None]]) -> None:
        self.stdin, self.echo, self.line = stdin, echo, bytearray()

    async def feed(self, data: bytes) -> None:
        out = bytearray()
        for b in data:
            if b in (0x0D, 0x0A):  # Enter (ICRNL): the line goes to the command; its echo, a
                out += b"\n"      # newline, becomes CRLF on the way out (ONLCR)
                self.stdin.feed(bytes(self.line) + b"\n")
                self.line.clear()
            elif b in (0x7F, 0x08):  # VERASE
                if self.line:
                    self.line.pop()
                    out += b"\b \b"
            elif b == 0x15:  # VKILL (^U)
                out += b"\b \b" * len(self.line)
                self.line.clear()
            elif b == 0x03:  # VINTR (^C): the line is dropped
                out += b"^C\n"
                self.line.clear()
            elif b == 0x04:  # VEOF (^D): end of input at the start of a line, else flush it
                if self.line:
                    self.stdin.feed(bytes(self.line))
                    self.line.clear()
                else:
                    self.stdin.close()
            else:
                self.line.append(b)
                out.append(b)
        if out:
            await self.echo(bytes(out))


def _status(code: int, argv: tuple[str, ...]) -> JsonDict:
    """remotecommand's ServeExec result as a metav1.Status (Go's json.Marshal field order)."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], "
                       f"exit code {code}",
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def _runtime_error(err: ExecNotFound) -> JsonDict:
    """containerd's answer for a program the image does not have, wrapped as the kubelet's
    InternalError (apierrors.NewInternalError)."""
    exec_id = secrets.token_hex(32)
    inner = (f"error executing command in container: failed to exec in container: failed to start exec "
             f"{errors.go_quote(exec_id)}: OCI runtime exec failed: exec failed: unable to start container "
             f"process: {err}: unknown")
    return {"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {inner}",
            "reason": "InternalError", "details": {"causes": [{"message": inner}]}, "code": 500}


async def _frames(ws: web.WebSocketResponse, protocol: str) -> AsyncIterator[tuple[int, bytes]]:
    """wsstream.Conn.handle's read side: (channel, payload) per client frame, the base64 codec
    undone; a v5 CLOSE comes as (CLOSE, [channel]). Empty and undecodable frames are skipped, as
    upstream logs and goes on."""
    b64 = protocol in _BASE64
    async for msg in ws:
        if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT):
            continue
        raw = msg.data.encode("latin-1") if isinstance(msg.data, str) else bytes(msg.data)
        if not raw:
            continue
        if protocol == V5 and raw[0] == CLOSE:
            yield CLOSE, raw[1:]
            continue
        data = raw[1:]
        if b64:
            try:
                data = base64.b64decode(data, validate=True)
            except ValueError:
                continue
        yield raw[0] - (0x30 if b64 else 0), data


class _Transport:
    """How a session's channels reach the client: WebSocket messages (`_WebSocketTransport`) or
    the SPDY streams of an upgraded connection (`_SpdyTransport`)."""

    response: web.StreamResponse
    status_json: bool  # v4/v5: the error channel carries a metav1.Status, success included
    announce: bool  # wsstream: an empty message on the first writable channel once open

    async def write(self, channel: int, data: bytes) -> None:
        raise NotImplementedError

    def frames(self) -> AsyncIterator[tuple[int, bytes]]:
        """(channel, payload) per client message; stdin's end as (CLOSE, [STDIN])."""
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class _WebSocketTransport(_Transport):
    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws, self.protocol = ws, ws.ws_protocol or ""
        self.response, self.status_json, self.announce = ws, self.protocol in _STATUS_JSON, True
        self.out = _Channels(ws, self.protocol)

    async def write(self, channel: int, data: bytes) -> None:
        await self.out.write(channel, data)

    def frames(self) -> AsyncIterator[tuple[int, bytes]]:
        return _frames(self.ws, self.protocol)

    async def close(self) -> None:
        await self.ws.close()


async def _receive(transport: _Transport, params: ExecParams, stdin: _Stdin, terminal: _Terminal | None) -> None:
    """The client's frames to their channels until the connection ends."""
    try:
        async for channel, data in transport.frames():
            if channel == CLOSE:
                if data and data[0] == STDIN:
                    stdin.close()
            elif channel == STDIN and params.stdin:
                if terminal is not None:
                    await terminal.feed(data)
                else:
                    stdin.feed(data)
            # RESIZE frames are read and dropped (the simulated terminal has no size); others ignored
    finally:
        stdin.close()


def _kubelet_node(request: web.Request, core: ApiCore, pod: JsonDict, name: str) -> JsonDict:
    """The pod's Node once its kubelet is reachable, as streamLocation / portForwardLocation
    and the proxy find it: 400 without a host, 404 for a Node that does not exist (the node
    getter of GetConnectionInfo), the dial error for a kubelet that does not answer."""
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        raise errors.BadRequestError(f"pod {name} does not have a host assigned")
    node = core.store.get(NODES.key(None, str(node_name)))
    if node is None:
        raise errors.not_found("nodes", "", str(node_name))
    provider = request.app[USAGE]
    if not isinstance(provider, KubeletProvider) or provider.kubelet_stats(str(node_name)) is None:
        raise errors.ApiError(f"error dialing backend: dial tcp {preferred_address(node)}:{kubelet_port(node)}: "
                              "connect: connection refused", code=500, reason="")
    return node


async def serve(request: web.Request, core: ApiCore, info: ResourceInfo, namespace: str | None,
                name: str, sub: str = "exec") -> web.StreamResponse:
    """Answer GET/POST `pods/{name}/exec` and `pods/{name}/attach`."""
    params = exec_params(request.query)
    if sub == "attach":
        params = dataclasses.replace(params, command=())
    # ConnectResource admits before the REST's Connect looks anything up
    await core.admit_connect(info, namespace, name, sub, _exec_options(params, sub), write_options(request).user)
    pod = core.store.get(PODS.key(namespace, name))
    if pod is None:
        raise errors.not_found("pods", "", name)
    container = stream_container(pod, params.container)
    node = _kubelet_node(request, core, pod, name)
    if not (params.stdin or params.stdout or params.stderr):
        return _text(400, "you must specify at least 1 of stdin, stdout, stderr")
    spdy_upgrade = is_spdy_upgrade(request)
    if not spdy_upgrade and not is_websocket_request(request):
        raise errors.BadRequestError(
            f"{sub} is served over WebSocket (subprotocols v5.channel.k8s.io, v4.channel.k8s.io, ...) or a "
            "SPDY/3.1 upgrade (X-Stream-Protocol-Version v4.channel.k8s.io, ...)")
    cs = _running(pod, container)
    if cs is None:
        return _text(500, f"container not found ({errors.go_quote(container)})")
    if spdy_upgrade:
        refused = _spdy_exec_refusal(request)
        if refused is not None:
            return refused
    else:
        offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        if offered and not any(p in PROTOCOLS for p in offered):
            return web.Response(status=403)
    try:
        view, files = await _files_of(request, core, pod, container, cs, node)
    except ContainerViewError as e:
        return _text(500, str(e))
    started = parse_time(((cs.get("state") or {}).get("running") or {}).get("startedAt"))
    readonly, writable = mounts_by_access(pod, container_spec(pod, container))
    now = core.clock.now()
    spec, repository = container_spec(pod, container), _repository(pod, container)
    ctx = ExecContext(env=dict(view.env), files=files,
                      hostname=view.hostname, now=lambda: core.clock.now().timestamp(),
                      started=(started or now).timestamp(), sleep=core.clock.sleep, workdir=view.workdir,
                      uid=view.uid, dirs=set(view.dirs) | set(IMAGE_DIRS.get(repository, ())), tty=params.tty,
                      command=main_command(spec, repository), readonly=readonly, writable=writable)
    transport: _Transport
    if spdy_upgrade:
        spdy_transport = await _SpdyTransport.open(request, params)
        if not spdy_transport.ready:  # the client never created its streams: the kubelet gives up
            await spdy_transport.close()
            return spdy_transport.response
        transport = spdy_transport
    else:
        ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, max_msg_size=4 * 1024 * 1024)
        await ws.prepare(request)
        transport = _WebSocketTransport(ws)
    uid, run = (pod.get("metadata") or {}).get("uid"), cs.get("restartCount")

    def alive() -> bool:
        cur = core.store.get(PODS.key(namespace, name))
        if cur is None or (cur.get("metadata") or {}).get("uid") != uid:
            return False
        now_cs = _running(cur, container)
        return now_cs is not None and now_cs.get("restartCount") == run

    if sub == "attach":
        proc = _main_process(request, pod, container, cs, ctx, spec)
        await _session(request, transport, params, _attach_runner(proc, bool(spec.get("stdinOnce"))),
                       lambda _code: {"metadata": {}, "status": "Success"}, alive, core.clock.sleep)
    else:
        argv = list(params.command)
        await _session(request, transport, params,
                       lambda stdin, out, err: run_exec(argv, ctx, stdin, out, err),
                       lambda code: _status(code, params.command), alive, core.clock.sleep)
    return transport.response


async def _files_of(request: web.Request, core: ApiCore, pod: JsonDict, container: str, cs: JsonDict,
                    node: JsonDict | None) -> tuple[ContainerView, Layered]:
    """What the container sees (raises ContainerViewError) and its files: the run's writable
    layer over the mounts, over what the image itself ships."""
    view = container_view(pod, container, _StoreLookup(core), token=await _token(request, core, pod), ca_crt=None,
                          cluster_dns=CLUSTER_DNS, cluster_domain=CLUSTER_DOMAIN,
                          node_allocatable=((node or {}).get("status") or {}).get("allocatable"))
    image = IMAGE_FILES.get(_repository(pod, container), {})
    return view, container_files(pod, container_spec(pod, container), cs, {**image, **view.files}, core.clock.now())


def _repository(pod: JsonDict, container: str) -> str:
    return image_repository(str(container_spec(pod, container).get("image") or ""))


Runner = Callable[[_Stdin | None, Callable[[bytes], Awaitable[None]], Callable[[bytes], Awaitable[None]]],
                  Awaitable[int]]


class _MainProcess:
    """A container's own process as `attach` reaches it: for a container that keeps stdin open
    (`stdin: true`) and runs a shell with no script, the simulated shell reading that stdin,
    started when first attached to and shared by every attach of the container run; output
    goes to whoever is attached. A container whose command is played
    (minik3s.api.helpers.script: `while true; do echo tick; sleep 5; done`) prints its lines
    to an attach as they fall due from then on. Any other container's process is not
    simulated: an attach gets no output and ends when the client leaves."""

    def __init__(self, argv: list[str] | None, ctx: ExecContext, on_exit: Callable[[int], None],
                 script: Script | None = None) -> None:
        self.argv, self.ctx, self.on_exit, self.script = argv, ctx, on_exit, script
        self.stdin = _Stdin()
        self.listeners: list[tuple[Callable[[bytes], Awaitable[None]], Callable[[bytes], Awaitable[None]]]] = []
        self.task: asyncio.Task[int] | None = None

    def start(self) -> asyncio.Future[int]:
        if self.argv is None:
            return asyncio.get_running_loop().create_future()  # never ends by itself
        if self.task is None:  # an ended one stays ended: the kubelet starts the next run
            self.task = asyncio.ensure_future(run_exec(self.argv, self.ctx, self.stdin, self._out, self._err))
            self.task.add_done_callback(self._ended)
        return self.task

    def _ended(self, task: asyncio.Task[int]) -> None:
        if not task.cancelled() and task.exception() is None:
            self.on_exit(task.result())  # the runtime tells the kubelet

    async def _out(self, data: bytes) -> None:
        for out, _err in list(self.listeners):
            await out(data)

    async def _err(self, data: bytes) -> None:
        for _out, err in list(self.listeners):
            await err(data)

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()


def _interactive_argv(spec: JsonDict) -> list[str] | None:
    """The container's argv when its process is a shell reading stdin: `stdin: true` and a
    shell with no `-c` script (`kubectl run -it --image=busybox x -- sh`), or no command at all
    in an image whose default command is a shell."""
    argv = [str(a) for a in (spec.get("command") or []) + (spec.get("args") or [])]
    if not argv and spec.get("stdin"):
        shell = default_shell(str(spec.get("image") or ""))
        argv = [shell] if shell else []
    if not spec.get("stdin") or not argv or posixpath.basename(argv[0]) not in SHELL_NAMES:
        return None
    return argv if all(a in ("-i", "-l", "-", "--login") for a in argv[1:]) else None


def _main_process(request: web.Request, pod: JsonDict, container: str, cs: JsonDict, ctx: ExecContext,
                  spec: JsonDict) -> _MainProcess:
    procs = request.app[EXEC_PROCESSES]
    meta = pod.get("metadata") or {}
    key = (str(meta.get("uid") or ""), container, int(cs.get("restartCount") or 0))
    proc = procs.get(key)
    if proc is None or not isinstance(proc, _MainProcess):
        def on_exit(code: int) -> None:
            process_exits.record(key[0], str(meta.get("namespace") or ""), str(meta.get("name") or ""),
                                 container, key[2], code)
        proc = procs[key] = _MainProcess(_interactive_argv(spec), ctx, on_exit, container_script(spec))
        while len(procs) > _CACHE_LIMIT:
            _key, old = procs.popitem(last=False)
            if isinstance(old, _MainProcess):
                old.stop()
    return proc


def _attach_runner(proc: _MainProcess, stdin_once: bool) -> Runner:
    """One attach: the client's stdin into the process's (closed when the client's ends, with
    `stdinOnce`), the process's output to the client, until the process ends (0, as ServeAttach
    reports Success) or the client leaves (the session is cancelled; the process goes on)."""
    async def run(stdin: _Stdin | None, out: Callable[[bytes], Awaitable[None]],
                  err: Callable[[bytes], Awaitable[None]]) -> int:
        listener = (out, err)
        proc.listeners.append(listener)
        ended = proc.start()

        async def pump() -> None:
            if stdin is None:
                return
            while data := await stdin.read():
                proc.stdin.feed(data)
            if stdin_once:
                proc.stdin.close()

        pumping = asyncio.ensure_future(pump())
        playing = (asyncio.ensure_future(_play(proc, out)) if proc.argv is None and proc.script is not None
                   else None)
        try:
            await asyncio.shield(ended)
            return 0
        finally:
            pumping.cancel()
            if playing is not None:
                playing.cancel()
            proc.listeners.remove(listener)
            if stdin_once and stdin is not None and not ended.done():
                proc.stdin.close()  # the first attach with stdin closes it as it ends (StdinOnce)
    return run


async def _play(proc: _MainProcess, out: Callable[[bytes], Awaitable[None]]) -> None:
    """A played command's lines as they fall due, from the attach on (the container's clock:
    its start and the API's time)."""
    script, ctx = proc.script, proc.ctx
    assert script is not None
    after = ctx.now() - ctx.started
    while (due := script.next_line_after(after)) is not None:
        await ctx.sleep(max(0.0, due - (ctx.now() - ctx.started)))
        lines = script.lines_until(due, after)
        after = due
        if lines:
            await out("".join(text + "\n" for _, text in lines).encode())


@contextlib.asynccontextmanager
async def _shutdown_ends(request: web.Request, ws: web.StreamResponse) -> AsyncIterator[None]:
    """A streaming session registered with the server's long requests: shutdown moves its
    deadline to now (TimeoutError ends the session, as a watch's), and it is dropped after."""
    watches = request.app[WATCHES]
    stream: WatchStream | None = None
    try:
        async with asyncio.timeout(None) as deadline:
            stream = WatchStream(ws, deadline)
            watches.add(stream)
            yield
    finally:
        if stream is not None:
            watches.discard(stream)


async def _until_stopped(alive: Callable[[], bool], sleep: Callable[[float], Awaitable[None]]) -> None:
    """Returns once the container run the session belongs to has stopped (the pod deleted, the
    container terminated or restarted), checked every second on the API's clock."""
    while alive():
        await sleep(1.0)


async def _session(request: web.Request, out: _Transport, params: ExecParams,
                   run: Runner, status_of: Callable[[int], JsonDict], alive: Callable[[], bool],
                   sleep: Callable[[float], Awaitable[None]]) -> None:
    if out.announce:
        first = STDOUT if params.stdout else STDERR if params.stderr else ERROR
        await out.write(first, b"")  # the streams are open

    async def stdout(data: bytes) -> None:
        if params.stdout and data:
            await out.write(STDOUT, data.replace(b"\n", b"\r\n") if params.tty else data)

    async def stderr(data: bytes) -> None:
        if data:
            if params.tty:
                await stdout(data)
            elif params.stderr:
                await out.write(STDERR, data)

    stdin = _Stdin()
    if not params.stdin:
        stdin.close()
    terminal = _Terminal(stdin, stdout) if params.tty and params.stdin else None
    receiver = asyncio.ensure_future(_receive(out, params, stdin, terminal))
    command = asyncio.ensure_future(run(stdin if params.stdin else None, stdout, stderr))
    stopped = asyncio.ensure_future(_until_stopped(alive, sleep))
    try:
        async with _shutdown_ends(request, out.response):
            done, _ = await asyncio.wait({command, receiver, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if command not in done and stopped not in done:
                # the client went away: the command loses its streams (SIGPIPE on its next write)
                command.cancel()
                return
        status: JsonDict | None
        try:
            # the container stopped under the command: the runtime killed it (SIGKILL, 137)
            status = status_of(137) if command not in done else status_of(command.result())
        except ExecNotFound as e:
            status = _runtime_error(e)
        except Exception as e:  # a fault of the simulation: the kubelet's InternalError, not a hang
            logger.exception("exec %s failed", params.command)
            inner = f"error executing command in container: {e}"
            status = {"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {inner}",
                      "reason": "InternalError", "details": {"causes": [{"message": inner}]}, "code": 500}
        if out.status_json:
            await out.write(ERROR, orjson.dumps(status))
        elif status.get("status") != "Success":
            await out.write(ERROR, str(status.get("message") or "").encode())
    except TimeoutError:
        pass
    finally:
        for task in (command, receiver, stopped):
            task.cancel()
        with contextlib.suppress(Exception):
            await out.close()
        for task in (command, receiver, stopped):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def stop_processes(app: web.Application) -> None:
    """Server shutdown: the simulated main processes end with it."""
    for proc in app[EXEC_PROCESSES].values():
        if isinstance(proc, _MainProcess):
            proc.stop()
    app[EXEC_PROCESSES].clear()


# ---- pods/portforward --------------------------------------------------------------------------

# the kubelet's WebSocket port-forward protocols (pkg/kubelet/cri/streaming/portforward)
_COPY_BUFFER = 32 * 1024
PORTFORWARD_PROTOCOLS = ("v4.channel.k8s.io", "portforward.k8s.io", "v4.base64.channel.k8s.io", V1, V1_BASE64)


def _copy_chunks(data: bytes) -> list[bytes]:
    """What the kubelet's io.Copy sends for `data`: one frame per 32 KiB."""
    return [data[k:k + _COPY_BUFFER] for k in range(0, len(data), _COPY_BUFFER)]


def _ports(query: Any) -> list[int] | str:
    """The `ports` query values (repeated or comma-separated), or the kubelet's error text."""
    out: list[int] = []
    for value in query.getall("ports", []):
        for item in str(value).split(","):
            item = item.strip()
            if not item.isdigit() or not 0 < int(item) < 65536:
                return f"unable to parse {errors.go_quote(item)} as a port: invalid port"
            out.append(int(item))
    return out or 'query parameter "port" is required'


def _refused(pod: JsonDict, port: int) -> str:
    """containerd's answer for a port nothing listens on, as the kubelet relays it."""
    uid = str((pod.get("metadata") or {}).get("uid") or "")
    sandbox = hashlib.sha256(f"sandbox:{uid}".encode()).hexdigest()
    netns = hashlib.sha256(f"netns:{uid}".encode()).hexdigest()
    netns_id = f"{netns[:8]}-{netns[8:12]}-{netns[12:16]}-{netns[16:20]}-{netns[20:32]}"
    return (f"error forwarding port {port} to pod {sandbox}, uid : failed to execute portforward in network "
            f"namespace \"/var/run/netns/cni-{netns_id}\": failed to connect to localhost:{port} inside namespace "
            f"\"{sandbox}\", IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused IPv6 dial tcp6 "
            f"[::1]:{port}: connect: connection refused ")


async def _forward_target(request: web.Request, core: ApiCore, pod: JsonDict, node: JsonDict,
                          port: int) -> tuple[Any, Any] | None:
    """What listens on `port` in the pod: the simulated server of a running container's image
    and that container's files, or None (the connection is refused)."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        if not isinstance(c, dict):
            continue
        server = listener(image_repository(str(c.get("image") or "")), port)
        cs = _running(pod, str(c.get("name") or ""))
        if server is not None and cs is not None:
            try:
                _view, files = await _files_of(request, core, pod, str(c.get("name")), cs, node)
            except ContainerViewError:
                continue
            return server, files
    return None


async def serve_portforward(request: web.Request, core: ApiCore, info: ResourceInfo, namespace: str | None,
                            name: str) -> web.StreamResponse:
    """Answer `pods/{name}/portforward` over WebSocket (the clients' channel protocol: per port a
    data and an error channel, each opened with the port as two little-endian bytes). A port
    reaches the simulated server of the container image that serves it
    (minik3s.api.helpers.image_servers); nothing else listens, as in a container whose program
    does not run."""
    ports = _ports(request.query)
    options: JsonDict = {"kind": "PodPortForwardOptions", "apiVersion": "v1"}
    if isinstance(ports, list):
        options["ports"] = ports
    await core.admit_connect(info, namespace, name, "portforward", options, write_options(request).user)
    pod = core.store.get(PODS.key(namespace, name))
    if pod is None:
        raise errors.not_found("pods", "", name)
    node = _kubelet_node(request, core, pod, name)
    if is_spdy_upgrade(request):
        return await _serve_spdy_upgrade(request, core, PODS.key(namespace, name), node)
    if not is_websocket_request(request):
        raise errors.BadRequestError(
            f"portforward is served over a SPDY/3.1 upgrade or WebSocket (subprotocols {SPDY_TUNNEL}, "
            "v4.channel.k8s.io, portforward.k8s.io)")
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    if SPDY_TUNNEL in offered:
        # kubectl 1.31+: SPDY tunnelled in WebSocket; the ports come with each stream
        return await _serve_spdy_tunnel(request, core, PODS.key(namespace, name), node)
    if isinstance(ports, str):
        return _text(400, ports)
    if offered and not any(p in PORTFORWARD_PROTOCOLS for p in offered):
        return web.Response(status=403)
    servers = [await _forward_target(request, core, pod, node, port) for port in ports]
    ws = web.WebSocketResponse(protocols=PORTFORWARD_PROTOCOLS, autoping=True, max_msg_size=4 * 1024 * 1024)
    await ws.prepare(request)
    out = _Channels(ws, ws.ws_protocol or "")
    inputs = [_Stdin() for _ in ports]
    for i, port in enumerate(ports):  # each channel opens with its port
        await out.write(2 * i, port.to_bytes(2, "little"))
        await out.write(2 * i + 1, port.to_bytes(2, "little"))

    def writer(i: int) -> Callable[[bytes], Awaitable[None]]:
        async def write(data: bytes) -> None:
            for chunk in _copy_chunks(data):
                await out.write(2 * i, chunk)
        return write

    tasks: list[asyncio.Future[None]] = []
    for i, port in enumerate(ports):
        entry = servers[i]
        if entry is None:
            await out.write(2 * i + 1, _refused(pod, port).encode())
            continue
        server, files = entry
        tasks.append(asyncio.ensure_future(server(inputs[i].read, writer(i), files,
                                                  lambda: core.clock.now().timestamp())))

    async def receive() -> None:
        try:
            async for channel, data in _frames(ws, ws.ws_protocol or ""):
                if channel % 2 == 0 and channel // 2 < len(inputs):
                    inputs[channel // 2].feed(data)
        finally:
            for stdin in inputs:
                stdin.close()

    receiver = asyncio.ensure_future(receive())
    try:
        async with _shutdown_ends(request, ws):
            if tasks:
                # the forward ends when every connection has (the kubelet closes the socket then)
                ending: set[asyncio.Future[Any]] = {receiver, asyncio.gather(*tasks, return_exceptions=True)}
                await asyncio.wait(ending, return_when=asyncio.FIRST_COMPLETED)
    except TimeoutError:
        pass
    finally:
        for task in (*tasks, receiver):
            task.cancel()
        with contextlib.suppress(Exception):
            await ws.close()
        for task in (*tasks, receiver):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    return ws


# ---- pods/portforward: kubectl's SPDY tunnelled in WebSocket ----------------------------------

SPDY_TUNNEL = "SPDY/3.1+portforward.k8s.io"
# the kubelet's streamCreationTimeout: both streams of a request must arrive within it
STREAM_CREATION_TIMEOUT = 30.0
_PORT_HEADER, _STREAM_TYPE_HEADER, _REQUEST_ID_HEADER = "port", "streamtype", "requestid"


@dataclass(slots=True, eq=False)
class _SpdyStream:
    sid: int
    port: int
    kind: str  # "data" or "error"
    input: _Stdin = dataclasses.field(default_factory=_Stdin)
    closed: bool = False  # we sent FIN, or the client reset it


@dataclass(slots=True, eq=False)
class _StreamPair:
    request_id: str
    data: _SpdyStream | None = None
    error: _SpdyStream | None = None
    timer: asyncio.TimerHandle | None = None


def _stream_headers_error(headers: Mapping[str, list[str]]) -> str | None:
    """httpStreamReceived's checks on a new stream's headers; the text of the first failure."""
    port = (headers.get(_PORT_HEADER) or [""])[0]
    if not port:
        return f'"{_PORT_HEADER}" header is required'
    if not port.isdigit() or int(port) > 65535:
        return f"unable to parse {errors.go_quote(port)} as a port"
    if int(port) < 1:
        return f"port {errors.go_quote(port)} must be > 0"
    kind = (headers.get(_STREAM_TYPE_HEADER) or [""])[0]
    if not kind:
        return f'"{_STREAM_TYPE_HEADER}" header is required'
    if kind not in ("error", "data"):
        return f"invalid stream type {errors.go_quote(kind)}"
    return None


class _SpdyConnection:
    """What both SPDY servers share on one connection: the framing state (one deflate stream per
    direction), frames sent in the order they were compressed, and the read loop that hands
    each decoded frame to `handle` until the connection ends or a frame cannot be read."""

    conn: _ByteChannel
    log_name = "spdy"

    def __init__(self) -> None:
        self.decoder, self.encoder = spdy.Decoder(), spdy.Encoder()
        self.send_lock = asyncio.Lock()

    async def send(self, make: Callable[[], bytes]) -> None:
        """One frame, made under the lock: header blocks share the connection's deflate stream,
        so frames go out in the order they were compressed."""
        async with self.send_lock:
            if self.conn.closed():
                return
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self.conn.send(make())

    async def handle(self, frame: spdy.Frame) -> None:
        raise NotImplementedError

    async def read_frames(self) -> None:
        async for data in self.conn.chunks():
            try:
                frames = self.decoder.feed(data)
            except spdy.SpdyError as err:  # the framer's read error ends the connection
                logger.info("%s: %s", self.log_name, err)
                return
            for frame in frames:
                await self.handle(frame)


class _SpdyPortForward(_SpdyConnection):
    """The kubelet's SPDY port-forward server (pkg/kubelet/cri/streaming/portforward
    httpstream.go) on one tunnelled connection: every client stream (odd ids, rising) is
    checked and answered with SYN_REPLY or RST_STREAM; the data and error streams of one
    `requestid` make a pair, and a complete pair forwards one connection to its port: the
    image's simulated server reads the data stream and writes back on it, or the error stream
    gets containerd's refusal. Both streams are closed (FIN) when the forward ends. PINGs from
    the client are echoed; SETTINGS, WINDOW_UPDATE and HEADERS are read and dropped."""

    log_name = "portforward"

    def __init__(self, request: web.Request, core: ApiCore, conn: _ByteChannel, key: str,
                 node: JsonDict) -> None:
        super().__init__()
        self.request, self.core, self.conn, self.key, self.node = request, core, conn, key, node
        self.streams: dict[int, _SpdyStream] = {}
        self.pairs: dict[str, _StreamPair] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.last_sid = 0
        self.gone_away = False

    async def run(self) -> None:
        try:
            await self.read_frames()
        finally:
            for stream in self.streams.values():
                stream.input.close()
            for pair in self.pairs.values():
                if pair.timer is not None:
                    pair.timer.cancel()
            for task in self.tasks:
                task.cancel()
            for task in list(self.tasks):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def handle(self, frame: spdy.Frame) -> None:
        if frame.kind == spdy.SYN_STREAM:
            await self.new_stream(frame)
        elif frame.kind == spdy.DATA:
            stream = self.streams.get(frame.stream_id)
            if stream is not None:
                stream.input.feed(frame.data)
                if frame.fin:
                    stream.input.close()
        elif frame.kind == spdy.RST_STREAM:
            stream = self.streams.pop(frame.stream_id, None)
            if stream is not None:
                stream.closed = True
                stream.input.close()
        elif frame.kind == spdy.PING and frame.ping_id & 1:  # the client's (odd): echoed
            await self.send(lambda: self.encoder.ping(frame.ping_id))
        elif frame.kind == spdy.GOAWAY:
            self.gone_away = True

    async def new_stream(self, frame: spdy.Frame) -> None:
        sid = frame.stream_id
        if self.gone_away:
            return
        if not sid & 1 or sid <= self.last_sid:  # spdystream's validateStreamId
            await self.send(lambda: self.encoder.rst_stream(sid, spdy.PROTOCOL_ERROR))
            return
        self.last_sid = sid
        problem = _stream_headers_error(frame.headers)
        if problem is not None:  # the stream is rejected: reset, as httpstream/spdy does
            logger.info("portforward: stream rejected: %s", problem)
            await self.send(lambda: self.encoder.rst_stream(sid, spdy.CANCEL))
            return
        kind = frame.headers[_STREAM_TYPE_HEADER][0]
        stream = _SpdyStream(sid, int(frame.headers[_PORT_HEADER][0]), kind)
        self.streams[sid] = stream
        await self.send(lambda: self.encoder.syn_reply(sid))
        if frame.fin:
            stream.input.close()
        request_id = (frame.headers.get(_REQUEST_ID_HEADER) or [""])[0]
        if not request_id:  # older clients: the pair's ids are consecutive odd numbers
            request_id = str(sid if kind == "error" else sid - 2)
        pair = self.pairs.get(request_id)
        if pair is None:
            pair = self.pairs[request_id] = _StreamPair(request_id)
            pair.timer = asyncio.get_running_loop().call_later(STREAM_CREATION_TIMEOUT, self.timed_out, pair)
        if getattr(pair, kind) is not None:
            if pair.error is not None:
                await self.write(pair.error, f"error processing stream for request {request_id}: "
                                             f"{kind} stream already assigned".encode())
            return
        setattr(pair, kind, stream)
        if pair.data is not None and pair.error is not None:
            if pair.timer is not None:
                pair.timer.cancel()
            self.pairs.pop(request_id, None)
            task = asyncio.ensure_future(self.forward(pair.data, pair.error))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    def timed_out(self, pair: _StreamPair) -> None:
        if self.pairs.get(pair.request_id) is not pair:
            return
        del self.pairs[pair.request_id]
        if pair.error is not None:
            text = f"(conn={id(self):#x}, request={pair.request_id}) timed out waiting for streams"
            task = asyncio.ensure_future(self.write(pair.error, text.encode()))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def write(self, stream: _SpdyStream, data: bytes) -> None:
        for chunk in _copy_chunks(data):
            if stream.closed:
                return
            await self.send(functools.partial(self.encoder.data, stream.sid, chunk))

    async def close(self, stream: _SpdyStream) -> None:
        if not stream.closed:
            stream.closed = True
            self.streams.pop(stream.sid, None)
            await self.send(lambda: self.encoder.data(stream.sid, b"", fin=True))

    async def forward(self, data: _SpdyStream, error: _SpdyStream) -> None:
        pod = self.core.store.get(self.key)
        try:
            target = await _forward_target(self.request, self.core, pod, self.node, data.port) if pod else None
            if target is None:
                await self.write(error, _refused(pod or {}, data.port).encode())
            else:
                server, files = target
                await server(data.input.read, lambda chunk: self.write(data, chunk), files,
                             lambda: self.core.clock.now().timestamp())
        finally:  # the kubelet's deferred closes: the error stream, then the data stream
            await self.close(error)
            await self.close(data)


class _ByteChannel:
    """The byte stream a SPDY connection runs over: WebSocket binary messages (kubectl 1.31+'s
    tunnel; message boundaries mean nothing) or the raw socket of an upgraded HTTP connection."""

    def closed(self) -> bool:
        raise NotImplementedError

    async def send(self, data: bytes) -> None:
        raise NotImplementedError

    def chunks(self) -> AsyncIterator[bytes]:
        raise NotImplementedError


class _WebSocketBytes(_ByteChannel):
    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws

    def closed(self) -> bool:
        return self.ws.closed

    async def send(self, data: bytes) -> None:
        await self.ws.send_bytes(data)

    async def chunks(self) -> AsyncIterator[bytes]:
        async for msg in self.ws:
            if msg.type == WSMsgType.BINARY:
                yield bytes(msg.data)


class _UpgradedBytes(_ByteChannel):
    """An HTTP connection after `101 Switching Protocols` to SPDY/3.1: installed as the
    connection's payload parser (what aiohttp's WebSocket does), so every byte the client sends
    arrives here; writes go through aiohttp's stream writer, which waits for the transport to
    drain under the connection's own flow control."""

    def __init__(self, request: web.Request) -> None:
        self.transport = request.transport
        self.writer = StreamWriter(request.protocol, asyncio.get_running_loop())
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    # the payload-parser protocol of aiohttp's RequestHandler
    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        if data:
            self.queue.put_nowait(bytes(data))
        return False, b""

    def feed_eof(self) -> None:
        self.queue.put_nowait(b"")

    def closed(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    async def send(self, data: bytes) -> None:
        if not self.closed():
            await self.writer.write(data)

    async def chunks(self) -> AsyncIterator[bytes]:
        while data := await self.queue.get():
            yield data


async def _run_spdy(request: web.Request, core: ApiCore, key: str, node: JsonDict, conn: _ByteChannel,
                    response: web.StreamResponse) -> None:
    session = _SpdyPortForward(request, core, conn, key, node)
    try:
        async with _shutdown_ends(request, response):
            await session.run()
    except TimeoutError:  # server shutdown: spdystream's Close, a GOAWAY naming the last stream taken
        await session.send(lambda: session.encoder.goaway(session.last_sid))


async def _serve_spdy_tunnel(request: web.Request, core: ApiCore, key: str, node: JsonDict) -> web.StreamResponse:
    ws = web.WebSocketResponse(protocols=(SPDY_TUNNEL,), autoping=True, max_msg_size=4 * 1024 * 1024)
    await ws.prepare(request)
    try:
        await _run_spdy(request, core, key, node, _WebSocketBytes(ws), ws)
    finally:
        with contextlib.suppress(Exception):
            await ws.close()
    return ws


def is_spdy_upgrade(request: web.Request) -> bool:
    """httpstream.IsUpgradeRequest for SPDY/3.1: `Connection: Upgrade` and `Upgrade: SPDY/3.1`."""
    if request.headers.get("Upgrade", "").strip().lower() != "spdy/3.1":
        return False
    return any(p.strip() == "upgrade" for p in request.headers.get("Connection", "").lower().split(","))


async def _serve_spdy_upgrade(request: web.Request, core: ApiCore, key: str, node: JsonDict) -> web.StreamResponse:
    """The kubelet's plain SPDY port-forward (clients before kubectl 1.31, client-go's SPDY
    dialer, `KUBECTL_PORT_FORWARD_WEBSOCKETS=false`): httpstream.Handshake on
    X-Stream-Protocol-Version (none offered is accepted; none served: 403 with upstream's
    text and the accepted versions), `101 Switching Protocols`, then SPDY/3.1 on the raw connection."""
    offered = [p.strip() for v in request.headers.getall("X-Stream-Protocol-Version", [])
               for p in v.split(",") if p.strip()]
    if offered and "portforward.k8s.io" not in offered:  # Go's %v of a []string, http.Error's text
        return web.Response(status=403, text=f"unable to upgrade: unable to negotiate protocol: client supports "
                                             f"[{' '.join(offered)}], server accepts [portforward.k8s.io]\n",
                            headers={"X-Accepted-Stream-Protocol-Versions": "portforward.k8s.io",
                                     "X-Content-Type-Options": "nosniff"})
    headers = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}
    if offered:
        headers["X-Stream-Protocol-Version"] = "portforward.k8s.io"
    resp = web.StreamResponse(status=101, headers=headers)
    resp.force_close()
    await resp.prepare(request)
    conn = _UpgradedBytes(request)
    request.protocol.set_parser(conn)  # type: ignore[arg-type]  # a payload parser, as WebSocketReader is
    try:
        await _run_spdy(request, core, key, node, conn, resp)
    finally:
        if request.transport is not None:
            request.transport.close()
    return resp


# ---- pods/exec and pods/attach over a plain SPDY/3.1 upgrade --------------------------------

# remotecommand's stream protocols, the kubelet's order of preference
REMOTECOMMAND_PROTOCOLS = ("v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io")
_STREAM_CHANNELS = {"stdin": STDIN, "stdout": STDOUT, "stderr": STDERR, "error": ERROR, "resize": RESIZE}


def _offered_stream_protocols(request: web.Request) -> list[str]:
    return [p.strip() for v in request.headers.getall("X-Stream-Protocol-Version", []) for p in v.split(",")
            if p.strip()]


def _spdy_exec_refusal(request: web.Request) -> web.Response | None:
    """httpstream.Handshake's 403 when the client offers stream protocols and none is served."""
    offered = _offered_stream_protocols(request)
    if not offered or any(p in REMOTECOMMAND_PROTOCOLS for p in offered):
        return None
    served = " ".join(REMOTECOMMAND_PROTOCOLS)
    return web.Response(status=403, text=f"unable to upgrade: unable to negotiate protocol: client supports "
                                         f"[{' '.join(offered)}], server accepts [{served}]\n",
                        headers={"X-Accepted-Stream-Protocol-Versions": ",".join(REMOTECOMMAND_PROTOCOLS),
                                 "X-Content-Type-Options": "nosniff"})


class _SpdyTransport(_SpdyConnection, _Transport):
    """The kubelet's remotecommand server over a plain SPDY/3.1 upgrade (client-go's SPDY
    executor: Go programs, kubectl before 1.30 or with KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false):
    httpstream.Handshake on X-Stream-Protocol-Version (v4 preferred), `101 Switching
    Protocols`, then the client creates one stream per channel (header `streamType`: error,
    stdin, stdout, stderr, resize), each answered with SYN_REPLY; once the streams the request
    asked for exist (within 30 s) the session runs: stdout/stderr as DATA on their streams,
    stdin from the client's stdin stream (FIN: EOF), resize read and dropped, and at the end the
    error stream carries the result (v4: a metav1.Status, success included; older protocols only
    a failure's text); then every stream is closed (FIN), a GOAWAY sent and the connection closed."""

    log_name = "exec"

    def __init__(self, request: web.Request, response: web.StreamResponse, conn: _ByteChannel, protocol: str,
                 expected: int) -> None:
        super().__init__()
        self.request, self.response, self.conn = request, response, conn
        self.status_json, self.announce = protocol == "v4.channel.k8s.io", False
        self.sids: dict[int, int] = {}  # channel -> stream id
        self.closed_sids: set[int] = set()
        self.expected = expected
        self.streams_ready = asyncio.Event()
        self.inbox: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        self.last_sid = 0
        self.ready = False
        self.reader: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, request: web.Request, params: ExecParams) -> _SpdyTransport:
        offered = _offered_stream_protocols(request)
        protocol = next((p for p in offered if p in REMOTECOMMAND_PROTOCOLS), "")
        headers = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}
        if protocol:
            headers["X-Stream-Protocol-Version"] = protocol
        resp = web.StreamResponse(status=101, headers=headers)
        resp.force_close()
        await resp.prepare(request)
        conn = _UpgradedBytes(request)
        request.protocol.set_parser(conn)  # type: ignore[arg-type]  # a payload parser, as WebSocketReader is
        resizing = params.tty and protocol in ("v4.channel.k8s.io", "v3.channel.k8s.io")
        expected = 1 + params.stdin + params.stdout + (params.stderr and not params.tty) + resizing
        self = cls(request, resp, conn, protocol or "channel.k8s.io", expected)
        self.reader = asyncio.ensure_future(self._read())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(STREAM_CREATION_TIMEOUT):
                await self.streams_ready.wait()
        self.ready = self.streams_ready.is_set()
        if not self.ready:
            logger.info("exec: timed out waiting for client to create streams")
        return self

    async def _read(self) -> None:
        try:
            await self.read_frames()
        finally:
            self.inbox.put_nowait(None)

    async def handle(self, frame: spdy.Frame) -> None:
        sid = frame.stream_id
        if frame.kind == spdy.SYN_STREAM:
            if not sid & 1 or sid <= self.last_sid:  # spdystream's validateStreamId
                await self.send(lambda: self.encoder.rst_stream(sid, spdy.PROTOCOL_ERROR))
                return
            self.last_sid = sid
            await self.send(lambda: self.encoder.syn_reply(sid))
            channel = _STREAM_CHANNELS.get((frame.headers.get("streamtype") or [""])[0])
            if channel is None:  # the kubelet logs an unexpected stream type and goes on
                logger.info("exec: unexpected stream type %r", frame.headers.get("streamtype"))
                return
            self.sids.setdefault(channel, sid)
            if len(self.sids) >= self.expected:
                self.streams_ready.set()
            if frame.fin and channel == STDIN:
                self.inbox.put_nowait((CLOSE, bytes((STDIN,))))
        elif frame.kind == spdy.DATA:
            if sid == self.sids.get(STDIN):
                if frame.data:
                    self.inbox.put_nowait((STDIN, frame.data))
                if frame.fin:
                    self.inbox.put_nowait((CLOSE, bytes((STDIN,))))
            elif sid == self.sids.get(RESIZE) and frame.data:
                self.inbox.put_nowait((RESIZE, frame.data))
        elif frame.kind == spdy.RST_STREAM:
            self.closed_sids.add(sid)
            if sid == self.sids.get(STDIN):
                self.inbox.put_nowait((CLOSE, bytes((STDIN,))))
        elif frame.kind == spdy.PING and frame.ping_id & 1:  # the client's (odd): echoed
            await self.send(lambda: self.encoder.ping(frame.ping_id))

    async def write(self, channel: int, data: bytes) -> None:
        sid = self.sids.get(channel)
        if sid is None:
            return
        for chunk in _copy_chunks(data):
            if sid in self.closed_sids:
                return
            await self.send(functools.partial(self.encoder.data, sid, chunk))

    async def frames(self) -> AsyncIterator[tuple[int, bytes]]:
        while (item := await self.inbox.get()) is not None:
            yield item

    async def close(self) -> None:
        for channel in (STDOUT, STDERR, ERROR):  # the kubelet's deferred stream closes
            sid = self.sids.get(channel)
            if sid is not None and sid not in self.closed_sids:
                self.closed_sids.add(sid)
                await self.send(functools.partial(self.encoder.data, sid, b"", fin=True))
        await self.send(lambda: self.encoder.goaway(self.last_sid))
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        if self.request.transport is not None:
            self.request.transport.close()
