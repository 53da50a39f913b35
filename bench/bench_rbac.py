"""RBAC authorization cost per request.

Shapes:
- In-process (the authorizer alone, real core + store): the bootstrap policy plus 100
  namespaces, each with a Role and a RoleBinding to its `sa` ServiceAccount (230 policy
  objects). Timed per call: an allowed request (RoleBinding match), a denied one (every grant of
  the user scanned), a non-resource path allowed through a group ClusterRoleBinding, and the
  first request after a policy write (the snapshot rebuild).
- HTTP (when `wrk` is installed): a real `minik3s server` process (API only) with the same
  policy; wrk GETs `/api/v1/namespaces/b1/pods?limit=1` for `--seconds`, once as the loopback
  admin (no authorization, the plain-HTTP default) and once with `Impersonate-User:
  system:serviceaccount:b1:sa` (impersonation check + RBAC on every request). The difference
  in latency is what authorization costs end to end.

Run: python -m bench.bench_rbac [--seconds 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from apiserver.core import ApiCore
from apiserver.rbac import Attributes, Authorizer
from apiserver.storage.sqlite_store import SqliteStore
from bench.common import emit
from minik3s.api.rbac import bootstrap_cluster_role_bindings, bootstrap_cluster_roles
from minik3s.api.resources import ResourceRegistry
from minik3s.api.types import JsonDict
from minik3s.api.user import UserInfo
from minik3s.testing.server import ServerProcess
from minik3s.utils.clock import FakeClock

NS = 100
RBAC = "rbac.authorization.k8s.io"


def policy(ns: str) -> tuple[JsonDict, JsonDict]:
    role = {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "pod-reader", "namespace": ns},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]}
    rb = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": "read-pods", "namespace": ns},
          "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": ns}],
          "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "pod-reader"}}
    return role, rb


def _per_call_us(fn: object, n: int) -> float:
    assert callable(fn)
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


async def in_process(n: int) -> dict[str, float]:
    store = SqliteStore(":memory:", compact_interval=0, clock=FakeClock())
    await store.start()
    try:
        core = ApiCore(store, ResourceRegistry(), clock=FakeClock(), rng=random.Random(0))
        info = {r: core.registry.get(g, "v1", r) for g, r in (
            ("", "namespaces"), (RBAC, "clusterroles"), (RBAC, "clusterrolebindings"), (RBAC, "roles"),
            (RBAC, "rolebindings"))}
        for obj in bootstrap_cluster_roles():
            await core.create(info["clusterroles"], None, obj)  # type: ignore[arg-type]
        for obj in bootstrap_cluster_role_bindings():
            await core.create(info["clusterrolebindings"], None, obj)  # type: ignore[arg-type]
        for k in range(NS):
            await core.create(info["namespaces"], None, {"metadata": {"name": f"b{k}"}})  # type: ignore[arg-type]
            role, rb = policy(f"b{k}")
            await core.create(info["roles"], f"b{k}", role)  # type: ignore[arg-type]
            await core.create(info["rolebindings"], f"b{k}", rb)  # type: ignore[arg-type]
        authz = Authorizer(store, core.registry)
        sa = UserInfo("system:serviceaccount:b1:sa", groups=("system:serviceaccounts", "system:serviceaccounts:b1",
                                                             "system:authenticated"))
        allowed = Attributes(user=sa, verb="list", resource_request=True, api_version="v1", resource="pods",
                             namespace="b1")
        denied = Attributes(user=sa, verb="delete", resource_request=True, api_version="v1", resource="pods",
                            name="p", namespace="b1")
        path = Attributes(user=sa, verb="get", resource_request=False, path="/apis/apps/v1")
        assert authz.authorize(allowed).allowed and not authz.authorize(denied).allowed
        assert authz.authorize(path).allowed
        out = {"allowed_us": _per_call_us(lambda: authz.authorize(allowed), n),
               "denied_us": _per_call_us(lambda: authz.authorize(denied), n),
               "non_resource_allowed_us": _per_call_us(lambda: authz.authorize(path), n)}
        rebuild: list[float] = []
        for k in range(20):
            await core.create(info["roles"], "b2", {**policy("b2")[0], "metadata": {"name": f"extra-{k}"}})  # type: ignore[arg-type]
            t0 = time.perf_counter()
            authz.authorize(allowed)
            rebuild.append((time.perf_counter() - t0) * 1e6)
        out["first_request_after_policy_write_us"] = statistics.median(rebuild)
        out["policy_objects"] = float(sum(len(store.list(i.list_prefix(None))[0])  # type: ignore[union-attr]
                                          for r, i in info.items() if r != "namespaces"))
        return out
    finally:
        await store.close()


def _wrk(wrk: str, url: str, seconds: float, header: str | None) -> dict[str, float]:
    args = [wrk, "-t2", "-c16", f"-d{int(seconds)}s", "--latency"]
    if header:
        args += ["-H", header]
    out = subprocess.run([*args, url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    units = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    lat = {int(p): float(v) * units[u] for p, v, u in re.findall(r"^\s+(\d+)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)}
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {"rps": rps, "p50_ms": lat.get(50, float("nan")), "p99_ms": lat.get(99, float("nan")),
            "non_2xx": float(non2xx.group(1)) if non2xx else 0.0}


def over_http(wrk: str, seconds: float, runs: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as d, ServerProcess(Path(d), nodes=0, args=[
            "--disable", "scheduler", "--disable", "controllers", "--disable", "kubelet"]) as srv:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            for k in range(NS):
                assert c.post("/api/v1/namespaces", json={"metadata": {"name": f"b{k}"}}).status_code == 201
                role, rb = policy(f"b{k}")
                assert c.post(f"/apis/{RBAC}/v1/namespaces/b{k}/roles", json=role).status_code == 201
                assert c.post(f"/apis/{RBAC}/v1/namespaces/b{k}/rolebindings", json=rb).status_code == 201
            sa = {"Impersonate-User": "system:serviceaccount:b1:sa"}
            assert c.get("/api/v1/namespaces/b1/pods?limit=1", headers=sa).status_code == 200
            assert c.delete("/api/v1/namespaces/b1/pods/x", headers=sa).status_code == 403
        url = srv.url + "/api/v1/namespaces/b1/pods?limit=1"
        admin, rbac = [], []
        for _ in range(runs):
            admin.append(_wrk(wrk, url, seconds, None))
            rbac.append(_wrk(wrk, url, seconds, "Impersonate-User: system:serviceaccount:b1:sa"))

    def med(rs: list[dict[str, float]], k: str) -> float:
        return statistics.median(r[k] for r in rs)

    return {"admin_unauthorized": {k: med(admin, k) for k in admin[0]},
            "impersonated_sa_rbac": {k: med(rbac, k) for k in rbac[0]},
            "runs": runs, "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    result: dict[str, object] = {"in_process": asyncio.run(in_process(args.calls))}
    wrk = shutil.which("wrk")
    result["http"] = over_http(wrk, args.seconds, args.runs) if wrk else "wrk not installed"
    emit("bench_rbac", result)


if __name__ == "__main__":
    main()
