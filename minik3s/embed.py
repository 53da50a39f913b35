"""Embedding API (layer L5, beside the composition root): a whole minik3s cluster inside the
caller's process, for other projects' integration tests and scripts.

    async with minik3s.Cluster(nodes=3) as cluster:        # in the caller's event loop
        await cluster.client.create(PODS, pod, "default")  # real HTTP on 127.0.0.1
        await cluster.wait_for(PODS, "p", lambda o: o["status"].get("phase") == "Running",
                               namespace="default")

    with minik3s.Cluster(nodes=3) as cluster:              # sync twin: its own loop in a thread
        subprocess.run(["kubectl", "--kubeconfig", cluster.kubeconfig_path, "get", "nodes"])
        cluster.call(cluster.fail_node("node-1"))

Data flow: `start()` -> `minik3s.server.start(config, clock=)` (SQLite store, API on an
ephemeral loopback port, kubeconfig) -> `server.build_components` run as tasks in one loop (no
signal handlers: the caller owns the process) -> waits until the API answers over HTTP and every
simulated node of the fleet is Ready -> hands the cluster over. `stop()` cancels the components,
closes the HTTP client, the API listener and SQLite, then removes the temporary data dir (when
`data_dir=None`); in sync mode it also stops the loop and joins its thread.

TLS: by default the API serves plain HTTP on loopback (every request is the admin's, as through
`kubectl proxy`); `tls=True` serves HTTPS with the generated CA and authenticates every request,
and the kubeconfig (`kubeconfig_path`) carries the CA and the admin's client certificate, as a
`minik3s server --tls` writes it; `client` uses it.

Time: `simulated_time=True` gives the API and every component one `FakeClock`; then
`advance_time(s)` moves node heartbeats, lease expiry (node monitor grace period), graceful
deletion, pod stage delays, controller resyncs and the descheduler interval without sleeping.
With the real clock (the default) `advance_time` is refused with a clear error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

import yaml

from minik3s import server as server_mod
from minik3s.api.errors import NotFoundError
from minik3s.api.resources import NODES, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.client.kubeconfig import access_from_document
from minik3s.client.rest import HttpClient, default_user_agent
from minik3s.config import COMPONENTS, ServerConfig
from minik3s.utils.clock import Clock, FakeClock

logger = logging.getLogger(__name__)

T = TypeVar("T")

# the kubelet simulator's failure switch (kubelet_sim/node_agent.py): the node stops renewing its
# Lease and progressing its pods while the annotation is "true"
ANNOTATION_FAILED = "sim.minik3s.io/failed"
DEFAULT_READY_TIMEOUT = 30.0


class ClusterError(RuntimeError):
    """The cluster could not start, or a helper was used in a way the cluster does not support."""


def node_ready(node: Mapping[str, Any]) -> bool:
    """A Node's `Ready` condition is `True` (what `kubectl get nodes` shows as Ready)."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def _fleet_spec(nodes: int | str | Path, zones: Sequence[str] | None, data_dir: Path) -> str:
    """The server's `--nodes` value: a count, a nodes file, or (count + zones) a NodePool file."""
    if isinstance(nodes, bool):
        raise ClusterError("nodes must be a count or a nodes file path, not a bool")
    if isinstance(nodes, int):
        if nodes < 0:
            raise ClusterError(f"nodes must be >= 0, got {nodes}")
        if zones:
            pool = {"apiVersion": "sim.minik3s.io/v1alpha1", "kind": "NodePool", "count": nodes,
                    "namePrefix": "node-", "zones": list(zones)}
            path = data_dir / "fleet.yaml"
            path.write_text(yaml.safe_dump(pool, sort_keys=False))
            return str(path)
        return str(nodes)
    if zones:
        raise ClusterError("zones apply to a node count; put zones into the nodes file instead")
    return str(nodes)


class Cluster:
    """A full minik3s control plane (API, scheduler, controllers, simulated kubelets, optional
    descheduler) on an ephemeral loopback port.

    `async with Cluster(...)` runs it in the caller's loop; `with Cluster(...)` runs it on a
    private loop in a background thread (use `call(coro)` to run a coroutine there). Either way it
    is handed over only when the API answers and every simulated node is Ready.

    `fsync=False` starts it with `--unsafe-no-fsync` (writes survive the process, not a machine
    crash); clusters built without `fsync=` follow `Cluster.fsync_by_default`, which a test
    suite's conftest may set to False for all of them.

    `addons=True` deploys K3s' packaged add-ons as `minik3s server` does (the `coredns` and
    `metrics-server` Deployments in kube-system, and the `kube-dns` Service); without it a test
    cluster's kube-system has no pods and its nodes' resources are all the test's.
    """

    fsync_by_default: bool = True

    def __init__(
        self,
        nodes: int | str | Path = 3,
        data_dir: str | Path | None = None,
        port: int = 0,
        *,
        zones: Sequence[str] | None = None,
        scheduler_config: str | Path | None = None,
        descheduler_policy: str | Path | None = None,
        descheduling_interval: float = 300.0,
        node_monitor_grace_period: float = 50.0,
        node_monitor_period: float = 5.0,
        fsync: bool | None = None,
        disable: Sequence[str] = (),
        simulated_time: bool = False,
        ready_timeout: float = DEFAULT_READY_TIMEOUT,
        user_agent: str = "minik3s-embed",
        tls: bool = False,
        tls_san: Sequence[str] = (),
        addons: bool = False,
    ) -> None:
        unknown = sorted(set(disable) - set(COMPONENTS))
        if unknown:
            raise ClusterError(f"unknown component(s) to disable: {', '.join(unknown)} "
                               f"(known: {', '.join(COMPONENTS)})")
        self._nodes = nodes
        self._zones = list(zones) if zones else None
        self._data_dir_arg = Path(data_dir) if data_dir is not None else None
        self._port = port
        self._scheduler_config = Path(scheduler_config) if scheduler_config is not None else None
        self._descheduler_policy = Path(descheduler_policy) if descheduler_policy is not None else None
        self._descheduling_interval = descheduling_interval
        self._grace = node_monitor_grace_period
        self._monitor_period = node_monitor_period
        self._fsync = self.fsync_by_default if fsync is None else fsync
        self._disable = set(disable)
        # K3s' packaged add-ons (coredns, metrics-server Deployments in kube-system) only when
        # asked for: a test cluster's kube-system stays empty and its nodes' resources free
        self._addons = addons
        self._ready_timeout = ready_timeout
        self._user_agent = user_agent
        self._tls = tls
        self._tls_san = list(tls_san)
        self.clock: Clock = FakeClock() if simulated_time else Clock()
        self.simulated_time = simulated_time
        self.data_dir: Path | None = None
        self._temp_dir: Path | None = None
        self._rs: server_mod.RunningServer | None = None
        self._client: HttpClient | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._node_names: list[str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._mode: Literal["async", "sync"] | None = None

    # ------------------------------------------------------------------ what the caller gets
    @property
    def running(self) -> bool:
        return self._rs is not None

    def _server(self) -> server_mod.RunningServer:
        if self._rs is None:
            raise ClusterError("the cluster is not running (use `async with Cluster(...)` or `with Cluster(...)`)")
        return self._rs

    @property
    def url(self) -> str:
        """The API's base URL, e.g. http://127.0.0.1:40123 (https://... with `tls=True`)."""
        return self._server().url

    @property
    def kubeconfig_path(self) -> Path:
        """A kubeconfig for kubectl, the `kubernetes` client and `minik3s` (context `minik3s`)."""
        return self._server().config.kubeconfig_path

    @property
    def tls(self) -> bool:
        """True when the API serves HTTPS and authenticates every request (`Cluster(tls=True)`)."""
        return self._server().pki is not None

    @property
    def kubeconfig(self) -> Path:
        """Alias of `kubeconfig_path` (the name `minik3s.testing.server.ServerProcess` uses)."""
        return self.kubeconfig_path

    @property
    def client(self) -> HttpClient:
        """A `minik3s.client` HTTP client for the cluster, bound to the cluster's event loop."""
        if self._client is None:
            raise ClusterError("the cluster is not running")
        return self._client

    @property
    def node_names(self) -> list[str]:
        """The simulated nodes, in fleet order."""
        return list(self._node_names)

    @property
    def server(self) -> server_mod.RunningServer:
        """The live composition (`ApiCore`, store, components), for white-box checks."""
        return self._server()

    # ------------------------------------------------------------------ async lifecycle
    async def start(self) -> Cluster:
        if self._rs is not None:
            raise ClusterError("the cluster is already running")
        if self._data_dir_arg is None:
            self._temp_dir = Path(tempfile.mkdtemp(prefix="minik3s-"))
            self.data_dir = self._temp_dir
        else:
            self.data_dir = self._data_dir_arg
            self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            await self._start_in(self.data_dir)
        except BaseException:
            await self.stop()
            raise
        return self

    async def _start_in(self, data_dir: Path) -> None:
        config = ServerConfig(
            bind="127.0.0.1", port=self._port, data_dir=data_dir,
            nodes=_fleet_spec(self._nodes, self._zones, data_dir),
            scheduler_config=self._scheduler_config, descheduler_policy=self._descheduler_policy,
            descheduling_interval=self._descheduling_interval,
            node_monitor_grace_period=self._grace, node_monitor_period=self._monitor_period,
            unsafe_no_fsync=not self._fsync,
            disable=self._disable, addons=self._addons,
            tls=self._tls or None, tls_san=self._tls_san)
        # invalid configuration fails here, naming the field, as `minik3s server` does
        if config.enabled("scheduler") and config.scheduler_config is not None:
            from scheduler.config import load_config

            load_config(config.scheduler_config)
        if config.enabled("descheduler") and config.descheduler_policy is not None:
            from descheduler.plugins.registry import in_tree_registry
            from descheduler.policy import load_policy

            load_policy(config.descheduler_policy, in_tree_registry())
        expected: list[str] = []
        if config.enabled("kubelet"):
            from kubelet_sim.config import parse_fleet

            expected = [n["metadata"]["name"] for n in parse_fleet(config.nodes)]
        self._node_names = expected
        self._rs = rs = await server_mod.start(config, clock=self.clock)
        for name, fn in server_mod.build_components(rs):
            self._tasks.append(asyncio.get_running_loop().create_task(self._supervise(name, fn), name=f"minik3s-{name}"))
        # the client reaches the API as any kubeconfig user would: with TLS, the written
        # kubeconfig's CA and admin client certificate
        access = access_from_document(yaml.safe_load(config.kubeconfig_path.read_text()) or {})
        self._client = HttpClient(rs.url, user_agent=default_user_agent(self._user_agent), access=access)
        await self._wait_ready(expected)
        logger.info("minik3s cluster ready url=%s nodes=%d", rs.url, len(expected))

    @staticmethod
    async def _supervise(name: str, fn: Callable[[], Awaitable[None]]) -> None:
        try:
            await fn()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("component failed component=%s", name)
            raise

    def _check_components(self) -> None:
        for t in self._tasks:
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise ClusterError(f"component {t.get_name()} failed: {t.exception()!r}") from t.exception()

    async def _wait_ready(self, expected: list[str]) -> None:
        """Until the API answers over HTTP (/readyz) and every expected node is Ready."""
        client = self.client
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._ready_timeout
        want = set(expected)
        pause = 0.002
        while True:
            self._check_components()
            try:
                await client.request("GET", "/readyz")
                ready = {n["metadata"]["name"] for n in (await client.list(NODES))["items"] if node_ready(n)}
                if want <= ready:
                    return
                missing = sorted(want - ready)
            except Exception as e:  # the listener is up before the first answer: keep polling
                missing = [f"API not answering ({e})"]
            if loop.time() > deadline:
                raise ClusterError(f"cluster not ready after {self._ready_timeout}s; not Ready: {missing[:10]}")
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)

    async def stop(self) -> None:
        """Stop every component, the API and SQLite; remove the temporary data dir."""
        tasks, self._tasks = self._tasks, []
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t
        if self._client is not None:
            await self._client.close()
            self._client = None
        rs, self._rs = self._rs, None
        if rs is not None:
            await server_mod.stop(rs)
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    async def __aenter__(self) -> Cluster:
        if self._mode is not None:
            raise ClusterError("a Cluster is entered once; make a new one")
        self._mode = "async"
        return await self.start()

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    # ------------------------------------------------------------------ sync twin
    def __enter__(self) -> Cluster:
        if self._mode is not None:
            raise ClusterError("a Cluster is entered once; make a new one")
        self._mode = "sync"
        loop = asyncio.new_event_loop()
        started = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(started.set)
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=serve, name="minik3s-cluster", daemon=True)
        self._thread.start()
        started.wait()
        try:
            self.call(self.start())
        except BaseException:
            self._shutdown_loop()
            raise
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        try:
            self.call(self.stop())
        finally:
            self._shutdown_loop()

    def _shutdown_loop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def drain() -> None:  # what is left (aiohttp's connection closers) finishes first
            me = asyncio.current_task()
            rest = [t for t in asyncio.all_tasks() if t is not me]
            for t in rest:
                t.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
            await loop.shutdown_asyncgens()
            await loop.shutdown_default_executor()

        asyncio.run_coroutine_threadsafe(drain(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
        self._loop = self._thread = None

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the cluster's loop and return its result (sync mode only)."""
        if self._loop is None:
            coro.close()
            raise ClusterError("call() is for a cluster started with `with Cluster(...)`; "
                               "under `async with`, await the coroutine directly")
        fut: Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return fut.result(timeout)

    # ------------------------------------------------------------------ helpers
    async def wait_for(self, resource: ResourceInfo, name: str, predicate: Callable[[JsonDict], bool],
                       timeout: float = 10.0, *, namespace: str | None = None) -> JsonDict:
        """Until the object exists and `predicate(obj)` holds; returns it. Raises TimeoutError
        naming the last state seen. Polls the API (real time); with simulated time, advance the
        clock from another task or before waiting."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: JsonDict | None = None
        pause = 0.002
        while True:
            self._check_components()
            try:
                last = await self.client.get(resource, name, namespace)
                if predicate(last):
                    return last
            except NotFoundError:
                last = None
            if loop.time() > deadline:
                where = f"{namespace}/{name}" if namespace else name
                state = "not found" if last is None else f"status={(last.get('status') or {})!r:.300}"
                raise TimeoutError(f"{resource.resource} {where}: condition not met after {timeout}s ({state})")
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)

    async def fail_node(self, name: str) -> JsonDict:
        """The node's kubelet stops: no Lease renewal, no status, its pods freeze. The node
        lifecycle controller marks it NotReady/Unknown after the node monitor grace period."""
        self._known_node(name)
        return await self.client.patch(NODES, name, {"metadata": {"annotations": {ANNOTATION_FAILED: "true"}}})

    async def recover_node(self, name: str, *, wait: bool = True, timeout: float = 10.0) -> JsonDict:
        """The node's kubelet comes back: it renews its Lease and reports Ready (waited for)."""
        self._known_node(name)
        obj = await self.client.patch(NODES, name, {"metadata": {"annotations": {ANNOTATION_FAILED: None}}})
        if wait:
            return await self.wait_for(NODES, name, node_ready, timeout)
        return obj

    def _known_node(self, name: str) -> None:
        if name not in self._node_names:
            raise ClusterError(f"{name!r} is not a simulated node of this cluster (nodes: {self._node_names[:10]})")

    async def advance_time(self, seconds: float) -> None:
        """Move simulated time forward (`simulated_time=True` only): sleepers whose deadline passed
        wake, then the loop runs until the woken work has had its turns."""
        if not isinstance(self.clock, FakeClock):
            raise ClusterError("advance_time needs Cluster(simulated_time=True); this cluster runs on the real clock")
        if seconds < 0:
            raise ClusterError(f"time only moves forward: seconds must be >= 0, got {seconds}")
        # in steps no longer than a second, so periodic work (heartbeats, resyncs) interleaves
        # as it would in real time
        left = float(seconds)
        while True:
            step = min(1.0, left)
            self.clock.advance(step)
            left -= step
            for _ in range(10):
                await asyncio.sleep(0)
            await asyncio.sleep(0.002)  # woken writes reach SQLite (its own thread) and come back
            if left <= 0:
                return
