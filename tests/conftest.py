"""Shared fixtures: the minik3s pytest plugin, and the real in-process API on a fake clock.

`real_api` is composed as `minik3s.server.start` composes the server, minus HTTP: a `SqliteStore`
on a temp file, `ApiCore` (defaulting, validation, admission, graceful deletion, finalizers,
status rules, resourceVersions) and the in-process `LocalClient`, plus a `SharedInformerFactory`
over it. The API and the components under test share one `FakeClock` (`clock`), so creation and
deletion timestamps and every component delay follow `clock.advance()`.

The fixture object is itself the `Client` the components get: every call goes to the real
`LocalClient`; it only records the calls (`calls`), can make a verb's next calls raise
(`fail_next`, for retry tests), and counts calls in flight so that `settle()` can tell when the
system has stopped moving: no API call in flight, every informer holding exactly what the API
holds (same keys, same resourceVersions), the registered idle checks (e.g. a stage controller's
queue is empty) true, all of it for many loop turns in a row. Components run as `spawn()`ed
tasks: one that crashes fails the next `settle()` and the test's teardown. Nothing here
re-implements the API.
"""

from __future__ import annotations

import asyncio
import copy
import os
import random
import subprocess
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from apiserver.core import ApiCore
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.api.errors import AlreadyExistsError, NotFoundError
from minik3s.api.helpers import container_files, process_exits
from minik3s.api.resources import NAMESPACES, ResourceInfo, ResourceRegistry
from minik3s.api.types import JsonDict
from minik3s.client.informer import Informer, SharedInformerFactory, object_key
from minik3s.client.local import LocalClient
from minik3s.client.rest import default_user_agent
from minik3s.embed import Cluster as EmbeddedCluster
from minik3s.server import SYSTEM_NAMESPACES
from minik3s.testing.server import ServerProcess
from minik3s.utils.clock import FakeClock

pytest_plugins = ["minik3s.testing.pytest_plugin"]


def _share_httpx_default_ssl_context() -> None:
    """Every `httpx.Client()` builds a fresh certifi SSLContext (~40 ms of CPU on the CI-sized
    machine), even for the plain-http URLs these tests use, and the suite builds thousands. An
    SSLContext is safe to share, so the test process builds the default one once. Clients given
    their own `verify=` (the TLS tests) are untouched. A no-op if httpx moves the function."""
    import functools

    import httpx._transports.default as transports

    original = getattr(transports, "create_ssl_context", None)
    if original is None:
        return
    @functools.cache
    def shared(cert_file: str | None, cert_dir: str | None) -> Any:  # the env picks the default trust
        return original()

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
        if verify is True and cert is None and trust_env:
            return shared(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        return original(verify=verify, cert=cert, trust_env=trust_env)

    transports.create_ssl_context = create_ssl_context


_share_httpx_default_ssl_context()

# The suite's clusters are thrown away after each test: their servers commit without fsync
# (`--unsafe-no-fsync`: an acknowledged write survives the process, not a machine crash). fsyncs
# were half of what the write-heavy tests waited for. The storage tests that check what
# synchronous mode a store commits with open their own stores (tests/apiserver/storage).
ServerProcess.fsync_by_default = False
EmbeddedCluster.fsync_by_default = False

QUIET_TURNS = 25  # consecutive idle loop turns before the system counts as settled


class RealCluster:
    """The `Client` (and informer factory) the components under test get."""

    def __init__(self, core: ApiCore, clock: FakeClock, *, user_agent: str = default_user_agent("minik3s-tests")
                 ) -> None:
        self.core = core
        self.clock = clock
        self._client = LocalClient(core, user_agent=user_agent)
        self.factory = SharedInformerFactory(self)
        self._informers: list[Informer] = []
        self.calls: list[tuple[Any, ...]] = []
        self.fail_next: dict[str, list[Exception]] = {}  # verb -> errors its next calls raise
        self.idle_checks: list[Callable[[], bool]] = []
        self.in_flight = 0
        self._tasks: list[asyncio.Task[Any]] = []

    @property
    def shares_items(self) -> bool:
        """As the in-process transport: listed items are the API's own objects (read-only)."""
        return self._client.shares_items

    # ------------------------------------------------------------------ supervised components
    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run a component for the rest of the test; a crash fails `settle()` and teardown."""
        task = asyncio.create_task(coro, name=name)
        self._tasks.append(task)
        return task

    def check_alive(self) -> None:
        for t in self._tasks:
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise AssertionError(f"task {t.get_name()} crashed") from t.exception()

    async def stop(self, task: asyncio.Task[Any] | None = None) -> None:
        """Cancel one spawned task (or all of them) and re-raise what any of them died of."""
        tasks = [task] if task is not None else list(self._tasks)
        for t in tasks:
            t.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for t in tasks:
            self._tasks.remove(t)
        for r in results:
            if isinstance(r, Exception):
                raise r

    # ------------------------------------------------------------------ reads for assertions
    def obj(self, res: ResourceInfo, name: str, namespace: str | None = None) -> JsonDict | None:
        """The object as the API holds it now, or None."""
        try:
            return copy.deepcopy(self.core.get(res, namespace if res.namespaced else None, name))
        except NotFoundError:
            return None

    def objects(self, res: ResourceInfo) -> dict[str, JsonDict]:
        """`namespace/name` (or `name`) -> object, for every object of the resource the API holds."""
        items = self.core.store.list(res.list_prefix(None))[0]
        return {object_key(o): copy.deepcopy(o) for o in items}

    # ------------------------------------------------------------------ informers
    def informer(self, res: ResourceInfo, namespace: str | None = None, **kwargs: Any) -> Informer:
        inf = self.factory.informer(res, namespace, **kwargs)
        if inf not in self._informers:
            self._informers.append(inf)
        return inf

    def _informers_current(self) -> bool:
        for inf in self._informers:
            if not inf.has_synced:
                return False
            want = {object_key(o): o["metadata"].get("resourceVersion")
                    for o in self.core.store.list(inf.res.list_prefix(inf.namespace))[0]}
            have = {k: (inf.store.get(k) or {}).get("metadata", {}).get("resourceVersion")
                    for k in inf.store.keys()}
            if want != have:
                return False
        return True

    def _idle(self) -> bool:
        return self.in_flight == 0 and self._informers_current() and all(check() for check in self.idle_checks)

    async def settle(self, *, timeout: float = 10.0) -> None:
        """Wait (in real time: SQLite commits on a thread) until nothing moves any more."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        quiet = 0
        while quiet < QUIET_TURNS:
            await asyncio.sleep(0)
            self.check_alive()
            if self._idle():
                quiet += 1
                continue
            quiet = 0
            if loop.time() > deadline:
                raise AssertionError(f"cluster did not settle within {timeout}s: in_flight={self.in_flight} "
                                     f"informers_current={self._informers_current()} "
                                     f"idle_checks={[c() for c in self.idle_checks]}")
            await asyncio.sleep(0.001)

    # ------------------------------------------------------------------ the Client protocol
    async def _call(self, verb: str, record: tuple[Any, ...] | None, fn: Callable[..., Any], *args: Any,
                    **kwargs: Any) -> Any:
        self.in_flight += 1
        try:
            errors = self.fail_next.get(verb)
            if errors:
                raise errors.pop(0)
            if record is not None:
                self.calls.append(record)
            return await fn(*args, **kwargs)
        finally:
            self.in_flight -= 1

    @staticmethod
    def _key(res: ResourceInfo, name: str, namespace: str | None) -> str:
        return f"{namespace}/{name}" if res.namespaced else name

    async def get(self, res: ResourceInfo, name: str, namespace: str | None = None, **kw: Any) -> JsonDict:
        return await self._call("get", None, self._client.get, res, name, namespace, **kw)

    async def list(self, res: ResourceInfo, namespace: str | None = None, **kw: Any) -> JsonDict:
        return await self._call("list", None, self._client.list, res, namespace, **kw)

    def watch(self, res: ResourceInfo, namespace: str | None = None, **kw: Any) -> Any:
        return self._client.watch(res, namespace, **kw)

    async def create(self, res: ResourceInfo, obj: JsonDict, namespace: str | None = None, **kw: Any) -> JsonDict:
        meta = obj.get("metadata") or {}
        ns = (namespace or meta.get("namespace") or "default") if res.namespaced else None
        return await self._call("create", ("create", res.resource, self._key(res, meta.get("name", ""), ns)),
                                self._client.create, res, obj, namespace, **kw)

    async def update(self, res: ResourceInfo, obj: JsonDict, **kw: Any) -> JsonDict:
        meta = obj.get("metadata") or {}
        rec = ("update", res.resource, self._key(res, meta.get("name", ""), meta.get("namespace")),
               kw.get("subresource"))
        return await self._call("update", rec, self._client.update, res, obj, **kw)

    async def update_status(self, res: ResourceInfo, obj: JsonDict, **kw: Any) -> JsonDict:
        meta = obj.get("metadata") or {}
        rec = ("update_status", res.resource, self._key(res, meta.get("name", ""), meta.get("namespace")))
        return await self._call("update_status", rec, self._client.update_status, res, obj, **kw)

    async def patch(self, res: ResourceInfo, name: str, patch: Any, namespace: str | None = None, *,
                    subresource: str | None = None, **kw: Any) -> JsonDict:
        rec = ("patch", res.resource, self._key(res, name, namespace), subresource)
        return await self._call("patch", rec, self._client.patch, res, name, patch, namespace,
                                subresource=subresource, **kw)

    async def delete(self, res: ResourceInfo, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None, preconditions: JsonDict | None = None,
                     **kw: Any) -> JsonDict:
        rec = ("delete", res.resource, self._key(res, name, namespace), grace_period_seconds, preconditions)
        return await self._call("delete", rec, self._client.delete, res, name, namespace,
                                grace_period_seconds=grace_period_seconds, preconditions=preconditions, **kw)

    async def bind(self, namespace: str, name: str, node_name: str, **kw: Any) -> None:
        await self._call("bind", ("bind", "pods", f"{namespace}/{name}", node_name), self._client.bind,
                         namespace, name, node_name, **kw)

    async def close(self) -> None:
        return None


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def real_api(tmp_path: Path, clock: FakeClock) -> AsyncIterator[RealCluster]:
    # the simulated runtime's process-wide records are keyed by pod uid, and every such cluster
    # draws the same uids (rng seeded 0): start each with none
    process_exits.clear()
    container_files.clear()
    store = SqliteStore(tmp_path / "state.db", compact_interval=0, clock=clock, fsync=False)
    await store.start()
    core = ApiCore(store, ResourceRegistry(), clock=clock, rng=random.Random(0))
    c = RealCluster(core, clock)
    for ns in SYSTEM_NAMESPACES:
        try:
            await c._client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        except AlreadyExistsError:
            pass
    c.spawn(c.factory.run(), "test-informers")
    try:
        yield c
    finally:
        try:
            await c.stop()
        finally:
            await store.close()


# ---------------------------------------------------------------------------------------------- kubectl
# The real kubectl 1.33 (scripts/fetch-kubectl, cached at .cache/kubectl/kubectl). If it cannot be
# obtained, every test using `kubectl_bin` FAILS with the reason; only an explicit
# MINIK3S_SKIP_KUBECTL_TESTS=1 turns that into a skip (CI never sets it).
ROOT = Path(__file__).resolve().parents[1]
KUBECTL = ROOT / ".cache" / "kubectl" / "kubectl"
SKIP_KUBECTL_ENV = "MINIK3S_SKIP_KUBECTL_TESTS"


def kubectl_problem() -> str | None:
    """None when kubectl is usable (fetching it first if needed), else the reason it is not."""
    if not KUBECTL.is_file():
        try:
            r = subprocess.run(["bash", str(ROOT / "scripts" / "fetch-kubectl")], capture_output=True,
                               text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"scripts/fetch-kubectl failed: {e}"
        if r.returncode != 0 or not KUBECTL.is_file():
            return f"kubectl not available (scripts/fetch-kubectl rc={r.returncode}: {r.stderr.strip()[-300:]})"
    try:
        r = subprocess.run([str(KUBECTL), "version", "--client"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{KUBECTL} does not run: {e}"
    if r.returncode != 0:
        return f"{KUBECTL} does not run: {r.stderr.strip()[-300:]}"
    return None


@pytest.fixture(scope="session")
def kubectl_bin() -> Path:
    """The kubectl binary; a missing one fails the test unless MINIK3S_SKIP_KUBECTL_TESTS=1."""
    problem = kubectl_problem()
    if problem is None:
        return KUBECTL
    if os.environ.get(SKIP_KUBECTL_ENV) == "1":
        pytest.skip(f"{problem} ({SKIP_KUBECTL_ENV}=1)")
    pytest.fail(f"{problem}. Run scripts/fetch-kubectl, or set {SKIP_KUBECTL_ENV}=1 to skip the kubectl tests.",
                pytrace=False)
