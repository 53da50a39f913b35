"""Benchmark: the API at scale (issue 14) - LIST of 50,000 pods, restart with 55,000 objects,
peak RSS with 5,000 nodes and 50,000 pods. Measured from outside a real `minik3s server` process.

Targets on a 2-core machine: LIST of 50,000 pods < 2 s; restart to ready with 55,000 objects
< 3 s; peak RSS with 5,000 nodes and 50,000 pods < 2 GiB.

Data: --nodes Node objects (4 CPU / 32Gi / 110 pods, hostname and zone labels) and --pods pods
(the scheduler benchmark's pods: one pause container, 100m / 500Mi) bound round robin to the
nodes with `spec.nodeName`, in --namespaces namespaces. They are created once, through the
in-process transport of a server with the scheduler, controllers, kubelets and descheduler
disabled (the fill is not measured, only reported); then every measurement runs against a
`minik3s server` child process on that data directory, started the same way (API only) unless
`--components` says otherwise.

Measurements (each repeated --runs times; medians and [min, max] reported):
  * list_json: `GET /api/v1/pods` (JSON), the whole body read; time to the last byte (a minimal
    keep-alive HTTP client on a socket, so the client takes little of the two cores);
  * list_paged: `GET /api/v1/pods?limit=500` then every `continue` page until the last;
  * list_table: what `kubectl get pods -A` sends: `Accept: application/json;as=Table;v=v1;
    g=meta.k8s.io,application/json`, `limit=500`, every page;
  * kubectl (with --kubectl PATH): the real `kubectl get pods -A` with its output discarded;
  * restart: SIGTERM to the running server (time to exit), then a new process on the same data
    dir: time from spawn until `/readyz` answers `ok` and until the first page of a pod LIST
    (`limit=500`) is served, and the CPU time the new process spent until then;
  * CPU: for each LIST measurement, the server process's CPU time (user + system, /proc) and the
    client's, which move less with the machine's other load than the wall-clock figures;
  * rss: the server's VmRSS and VmHWM (peak) from /proc after the restart, and after a full
    JSON LIST of every pod and every node.

The server processes may write bytecode caches (`--no-bytecode` keeps PYTHONDONTWRITEBYTECODE
from the environment: then every restart also compiles the project's modules from source, ~0.3 s
of CPU here). `--restart-only` skips the LISTs (fill or reuse the data, then only restart).

    python -m bench.bench_api_scale [--nodes 5000] [--pods 50000] [--runs 3] [--components api|all]
        [--data-dir D] [--restart-only] [--no-bytecode] [--kubectl PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import orjson

from bench.bench_api import proc_cpu_seconds
from bench.bench_scheduler import default_pod, node_labels, node_name, node_obj
from bench.common import emit
from minik3s.api.resources import NAMESPACES, NODES, PODS
from minik3s.config import ServerConfig
from minik3s.testing.server import ServerProcess

COMPONENTS = ("scheduler", "controllers", "kubelet", "descheduler")
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;" \
               "g=meta.k8s.io,application/json"
CREATORS = 32
log = logging.getLogger("bench.api_scale")


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def stats(values: list[float]) -> dict[str, Any]:
    return {"median_s": round(statistics.median(values), 4), "min_s": round(min(values), 4),
            "max_s": round(max(values), 4), "runs": [round(v, 4) for v in values]}


async def fill(data_dir: Path, *, nodes: int, pods: int, namespaces: int) -> dict[str, Any]:
    """Create the nodes and bound pods through an in-process server (API only), then stop it."""
    from minik3s import server

    cfg = ServerConfig(port=0, data_dir=data_dir, nodes="0", tls=False, disable=set(COMPONENTS))
    rs = await server.start(cfg)
    try:
        ns_names = ["default"] + [f"scale-{i}" for i in range(1, namespaces)]
        for ns in ns_names[1:]:
            await rs.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

        async def create_all(resource: Any, objs: list[dict[str, Any]]) -> None:
            it = iter(objs)

            async def creator() -> None:
                for obj in it:
                    await rs.client.create(resource, obj, obj["metadata"].get("namespace"))

            async with asyncio.TaskGroup() as tg:
                for _ in range(CREATORS):
                    tg.create_task(creator())

        t0 = time.perf_counter()
        await create_all(NODES, [node_obj(i, node_labels(i)) for i in range(nodes)])
        t1 = time.perf_counter()
        objs = []
        for i in range(pods):
            pod = default_pod(f"pod-{i:06d}", ns_names[i % namespaces])
            pod["spec"]["nodeName"] = node_name(i % nodes) if nodes else ""
            objs.append(pod)
        await create_all(PODS, objs)
        t2 = time.perf_counter()
    finally:
        await server.stop(rs)
    return {"nodes_s": round(t1 - t0, 2), "pods_s": round(t2 - t1, 2)}


def server_args(components: str) -> list[str]:
    if components == "all":
        # nodes are API objects only: no simulated kubelets; scheduler and controllers run
        return ["--disable", "kubelet", "--disable", "descheduler"]
    return [a for c in COMPONENTS for a in ("--disable", c)]


def proc_memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak resident set) of a process, MiB, from /proc/<pid>/status."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key.lower() + "_mib"] = round(int(value.split()[0]) / 1024, 1)
    return out


class RawClient:
    """A minimal HTTP/1.1 keep-alive GET client on one socket, reading each body into one
    buffer: the client under test must cost little CPU next to the server on a 2-core machine
    (httpx's pure-Python response handling of a 1 MB page cost more CPU than the server's
    answer). Bodies with Content-Length or chunked transfer encoding."""

    def __init__(self, url: str) -> None:
        u = urlsplit(url)
        self.host = u.hostname or "127.0.0.1"
        self.sock = socket.create_connection((self.host, u.port or 80))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb", buffering=1 << 20)

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def get(self, path: str, headers: dict[str, str] | None = None) -> bytes:
        lines = [f"GET {path} HTTP/1.1", f"Host: {self.host}", "User-Agent: bench-api-scale"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status = self.file.readline()
        if not status.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"GET {path}: {status.decode(errors='replace').strip()}")
        length = -1
        chunked = False
        while (line := self.file.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if not chunked:
            return self.file.read(length)
        parts = []
        while (size := int(self.file.readline().split(b";")[0], 16)) > 0:
            parts.append(self.file.read(size))
            self.file.readline()
        self.file.readline()
        return b"".join(parts)


def list_metadata(body: bytes, next_field: bytes) -> dict[str, Any]:
    """The list's own metadata (resourceVersion, continue, remainingItemCount): the object
    between `"metadata":` and the next top-level field, which both encodings put first."""
    start = body.index(b'"metadata":') + len(b'"metadata":')
    return dict(orjson.loads(body[start:body.index(b',"' + next_field + b'":', start)]))


def list_json(client: RawClient, path: str) -> tuple[float, int]:
    """One unpaged LIST, the whole body read: seconds to the last byte, and body bytes."""
    t0 = time.perf_counter()
    body = client.get(path)
    return time.perf_counter() - t0, len(body)


def list_pages(client: RawClient, path: str, *, accept: str | None = None, limit: int = 500,
               expect: int) -> float:
    """A paged LIST through every continue token: seconds to the last byte of the last page.
    The first page's remainingItemCount must say `expect` objects in all."""
    headers = {"Accept": accept} if accept else {}
    next_field = b"columnDefinitions" if accept else b"items"
    t0 = time.perf_counter()
    cont = ""
    first = True
    while True:
        q = f"?limit={limit}" + (f"&continue={quote(cont)}" if cont else "")
        meta = list_metadata(client.get(path + q, headers), next_field)
        if first and meta.get("remainingItemCount", 0) + limit != expect:
            raise SystemExit(f"first page of {path} ({accept}): {meta}, expected {expect} in all")
        first = False
        cont = meta.get("continue") or ""
        if not cont:
            break
    return time.perf_counter() - t0


def run_kubectl(kubectl: str, kubeconfig: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([kubectl, "--kubeconfig", str(kubeconfig), "get", "pods", "-A"], check=True,
                   stdout=subprocess.DEVNULL, timeout=600)
    return time.perf_counter() - t0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def poll_ready(url: str, t0: float, out: dict[str, float]) -> None:
    """From the spawn on: poll `/readyz` until it answers `ok` (connection refused while the
    process imports and loads), then fetch the first LIST page; seconds since `t0`."""
    deadline = t0 + 120
    with httpx.Client(base_url=url, timeout=60) as c:
        while time.perf_counter() < deadline:
            try:
                r = c.get("/readyz")
                if r.status_code == 200 and r.text == "ok":
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.002)
        out["ready_s"] = time.perf_counter() - t0
        c.get("/api/v1/pods", params={"limit": 500}).raise_for_status()
        out["first_list_s"] = time.perf_counter() - t0


def restart(srv: ServerProcess, base_args: list[str]) -> dict[str, float]:
    """SIGTERM the running server, start it again on the same data dir (on a port chosen here,
    so `/readyz` is polled from the spawn on, not from the ready line on stdout, which the CLI
    prints after the components are built); seconds to exit, to `/readyz` ok and to the first
    LIST page served, and the new process's CPU time until then."""
    t0 = time.perf_counter()
    srv.stop(sig=signal.SIGTERM, timeout=60)
    stopped = time.perf_counter() - t0
    port = free_port()
    srv.args = [*base_args, "--port", str(port)]
    out: dict[str, float] = {}
    t1 = time.perf_counter()
    poller = threading.Thread(target=poll_ready, args=(f"http://127.0.0.1:{port}", t1, out), daemon=True)
    poller.start()
    srv.start(timeout=120)
    poller.join(120)
    if "first_list_s" not in out:
        raise SystemExit(f"the restarted server did not answer /readyz and a LIST: {out}")
    assert srv.proc is not None
    # CPU the new process spent from spawn to here (interpreter, imports, load, first page)
    return {"stop_s": stopped, **out, "cpu_s": proc_cpu_seconds(srv.proc.pid)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--namespaces", type=int, default=10, help="pods spread round robin over this many")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--components", choices=("api", "all"), default="api",
                    help="api: the server runs the API only; all: scheduler and controllers too (no kubelets)")
    ap.add_argument("--kubectl", default=os.environ.get("KUBECTL"), help="kubectl binary: also time `get pods -A`")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="reuse (or create and keep) this data directory instead of a temporary one")
    ap.add_argument("--bytecode", action=argparse.BooleanOptionalAction, default=True,
                    help="let the server processes write and read bytecode caches, as an installed package has "
                         "(default on; --no-bytecode keeps PYTHONDONTWRITEBYTECODE from the environment, which "
                         "compiles every project module from source at each start)")
    ap.add_argument("--restart-only", action="store_true",
                    help="skip the LIST and RSS measures: fill (or reuse --data-dir), then only restart --runs times")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.runs < 1:
        ap.error("--runs must be >= 1")
    with tempfile.TemporaryDirectory(prefix="bench-api-scale-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        filled: dict[str, Any] = {"reused": True}
        if not (data_dir / "state.db").exists():
            filled = asyncio.run(fill(data_dir, nodes=args.nodes, pods=args.pods, namespaces=args.namespaces))
            log.warning("filled %s: %s", data_dir, filled)
        result: dict[str, Any] = {"nodes": args.nodes, "pods": args.pods, "namespaces": args.namespaces,
                                  "components": args.components, "fill": filled, "bytecode": args.bytecode,
                                  "load_average_before": load_average()}
        # "" = unset for Python: the first start writes __pycache__, the restarts read it
        env = {"PYTHONDONTWRITEBYTECODE": ""} if args.bytecode else None
        srv = ServerProcess(data_dir, nodes=0, args=server_args(args.components), env=env)
        restarts: list[dict[str, float]] = []
        t0 = time.perf_counter()
        srv.start(timeout=120)
        result["first_start_s"] = round(time.perf_counter() - t0, 3)
        try:
            assert srv.proc is not None
            result["rss_after_start"] = proc_memory(srv.proc.pid)
            pid = srv.proc.pid
            jl: list[float] = []
            pl: list[float] = []
            tl: list[float] = []
            kl: list[float] = []
            cpu: dict[str, list[float]] = {"list_json": [], "list_paged_500": [], "list_table_500": []}
            client_cpu: dict[str, list[float]] = {k: [] for k in cpu}

            def timed_cpu(name: str, fn: Any) -> Any:
                c0 = proc_cpu_seconds(pid)
                p0 = time.process_time()
                out = fn()
                client_cpu[name].append(time.process_time() - p0)
                cpu[name].append(proc_cpu_seconds(pid) - c0)
                return out

            with httpx.Client(base_url=srv.url, timeout=120) as hc:
                n_nodes = len(hc.get("/api/v1/nodes").json()["items"])
                n_pods = len(orjson.loads(hc.get("/api/v1/pods").content)["items"])
            if n_pods != args.pods or n_nodes != args.nodes:
                raise SystemExit(f"the data dir holds {n_pods} pods and {n_nodes} nodes, not {args.pods} and {args.nodes}")
            c = RawClient(srv.url)
            try:
                for i in range(0 if args.restart_only else args.runs):
                    s, nbytes = timed_cpu("list_json", lambda: list_json(c, "/api/v1/pods"))
                    jl.append(s)
                    result["list_json_bytes"] = nbytes
                    pl.append(timed_cpu("list_paged_500", lambda: list_pages(c, "/api/v1/pods", expect=args.pods)))
                    tl.append(timed_cpu("list_table_500", lambda: list_pages(c, "/api/v1/pods", accept=TABLE_ACCEPT,
                                                                             expect=args.pods)))
                    if args.kubectl:
                        kl.append(run_kubectl(args.kubectl, srv.kubeconfig))
                    log.warning("run %d/%d: json %.2fs paged %.2fs table %.2fs (load %s)", i + 1, args.runs,
                                jl[-1], pl[-1], tl[-1], load_average())
            finally:
                c.close()
            result["nodes_listed"] = n_nodes
            result["rss_after_lists"] = proc_memory(srv.proc.pid)
            if jl:
                result["list_json"] = stats(jl)
                result["list_paged_500"] = stats(pl)
                result["list_table_500"] = stats(tl)
                for name, values in cpu.items():
                    result[name]["server_cpu_median_s"] = round(statistics.median(values), 4)
                    result[name]["client_cpu_median_s"] = round(statistics.median(client_cpu[name]), 4)
            if kl:
                result["kubectl_get_pods_all"] = stats(kl)
            for i in range(args.runs):
                restarts.append(restart(srv, server_args(args.components)))
                log.warning("restart %d/%d: %s (load %s)", i + 1, args.runs, restarts[-1], load_average())
            assert srv.proc is not None
            result["rss_after_restart"] = proc_memory(srv.proc.pid)
            c = RawClient(srv.url)
            try:
                list_json(c, "/api/v1/pods")
                list_json(c, "/api/v1/nodes")
            finally:
                c.close()
            result["rss_after_restart_and_full_list"] = proc_memory(srv.proc.pid)
        finally:
            srv.stop(timeout=60)
        for key in ("stop_s", "ready_s", "first_list_s", "cpu_s"):
            result["restart_" + key.removesuffix("_s")] = stats([r[key] for r in restarts])
        result["load_average_after"] = load_average()
    emit("api_scale", result)
    print(f"\nLIST of {args.pods} pods ({result.get('list_json_bytes', 0) / 1e6:.0f} MB JSON), {args.nodes} nodes, "
          f"server: {args.components}; medians of {args.runs} [min, max]")
    rows = [("LIST JSON, unpaged", "list_json", 2.0), ("LIST JSON, limit=500 pages", "list_paged_500", 2.0),
            ("LIST Table (kubectl -A), limit=500", "list_table_500", 2.0),
            ("kubectl get pods -A", "kubectl_get_pods_all", None),
            ("restart: SIGTERM to exit", "restart_stop", None), ("restart: spawn to /readyz ok", "restart_ready", 3.0),
            ("restart: spawn to first LIST page", "restart_first_list", 3.0),
            ("restart: server CPU to first LIST page", "restart_cpu", None)]
    for label, key, target in rows:
        if key in result:
            r = result[key]
            cpu_s = (f"   CPU server {r['server_cpu_median_s']:.2f} s, client {r['client_cpu_median_s']:.2f} s"
                     if "server_cpu_median_s" in r else "")
            print(f"  {label:38} {r['median_s']:7.2f} s [{r['min_s']:.2f}, {r['max_s']:.2f}]"
                  + (f"   target < {target:.0f} s" if target else "") + cpu_s)
    for key in ("rss_after_start", "rss_after_lists", "rss_after_restart", "rss_after_restart_and_full_list"):
        m = result[key]
        print(f"  {key:38} RSS {m['vmrss_mib']:7.0f} MiB, peak {m['vmhwm_mib']:.0f} MiB   target peak < 2048 MiB")
    print(f"  load average {result['load_average_before']} -> {result['load_average_after']}")


if __name__ == "__main__":
    main()
