"""Instruction counts per bind and per Event create, for callgrind (docs/performance.md, "Session
6: the bind and event API cost").

The real in-process API (`SqliteStore` + `ApiCore` + `LocalClient` on a `FakeClock` advanced 1 ms
per operation) creates `M` pods (env `M`, default 600), then does N operations of one mode:

- `bind`: `LocalClient.bind` of the scheduler's client (the pod's UID as precondition);
- `event`: a scheduler-shaped core/v1 `Scheduled` Event created with `read_only=True` (and
  `handover=True` where the checkout's client has it), as the scheduler's API writer creates it,
  one at a time (each its own transaction);
- `lease`: a node Lease renewal, the strategic-merge PATCH of `spec.renewTime` the simulated
  kubelets send every 10 s per node (`M` Leases, renewed round robin).

Run it under callgrind at two N and divide the difference (the set-up cancels out):

    for n in 100 600; do PYTHONHASHSEED=0 PYTHONPATH=<checkout> valgrind --tool=callgrind \\
        --callgrind-out-file=/tmp/cg.$n.out python bench/callgrind_api_ops.py event $n; done
    # per event = (Ir of 600 - Ir of 100) / 500   (callgrind_annotate's PROGRAM TOTALS)

Run it once first so the byte-code cache is warm. The service account signer's RSA key is
generated once into the temp directory and loaded from there without its key check: key
generation and the check vary by tens of millions of instructions per run, which would swamp a
per-operation figure. Only APIs that exist in earlier checkouts are used, so the same file runs
against a base checkout (`PYTHONPATH=<base>`) for before/after counts.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

_KEY = Path(tempfile.gettempdir()) / "minik3s-callgrind-sa-key.pem"


def _fixed_key(**_: Any) -> Any:
    if not _KEY.exists():
        key = _generate(public_exponent=65537, key_size=2048)
        _KEY.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return serialization.load_pem_private_key(_KEY.read_bytes(), None, unsafe_skip_rsa_key_validation=True)


_generate = rsa.generate_private_key
rsa.generate_private_key = _fixed_key  # type: ignore[assignment]

from apiserver.core import ApiCore  # noqa: E402
from apiserver.storage.sqlite_store import SqliteStore  # noqa: E402
from minik3s.api.resources import EVENTS, LEASES, NAMESPACES, PODS, ResourceRegistry  # noqa: E402
from minik3s.client.local import LocalClient  # noqa: E402
from minik3s.client.rest import default_user_agent  # noqa: E402
from minik3s.utils.clock import FakeClock  # noqa: E402


def pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}}


def event(i: int, p: dict[str, Any]) -> dict[str, Any]:
    meta = p["metadata"]
    ts = f"2026-01-01T00:00:{i // 1000 % 60:02d}Z"
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"p{i}.{i:x}", "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": meta["name"],
                               "uid": meta["uid"], "resourceVersion": meta["resourceVersion"]},
            "reason": "Scheduled", "message": f"Successfully assigned default/p{i} to n{i % 500}",
            "type": "Normal", "action": "Binding", "source": {"component": "default-scheduler"},
            "reportingComponent": "default-scheduler", "reportingInstance": "default-scheduler",
            "firstTimestamp": ts, "lastTimestamp": ts, "eventTime": f"{ts[:-1]}.{i:06d}Z", "count": 1}


def lease(i: int) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": f"node-{i}", "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": f"node-{i}", "leaseDurationSeconds": 40,
                     "renewTime": "2026-01-01T00:00:00.000000Z"}}


async def main(mode: str, n: int, m: int) -> None:
    clock = FakeClock()
    store = SqliteStore(Path(tempfile.mkdtemp()) / "state.db", compact_interval=0, clock=clock)
    await store.start()
    try:
        core = ApiCore(store, ResourceRegistry(), clock=clock, rng=random.Random(0))
        admin = LocalClient(core, user_agent=default_user_agent("kubectl"))
        sched = LocalClient(core, user_agent=default_user_agent("kube-scheduler"))
        await admin.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
        if mode == "lease":
            kubelet = LocalClient(core, user_agent=default_user_agent("kubelet"))
            await admin.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                            "metadata": {"name": "kube-node-lease"}})
            for i in range(m):
                await kubelet.create(LEASES, lease(i), "kube-node-lease", read_only=True)
            for i in range(n):
                clock.advance(0.001)
                await kubelet.patch(LEASES, f"node-{i % m}", {"spec": {
                    "holderIdentity": f"node-{i % m}", "renewTime": f"2026-01-01T00:00:{i // 1000 % 60:02d}.{i:06d}Z"}},
                    "kube-node-lease", read_only=True)
            return
        pods = [await admin.create(PODS, pod(i)) for i in range(m)]
        # as the scheduler's API writer creates its Events, where the transport knows `handover`
        handover = {"handover": True} if "handover" in inspect.signature(sched.create).parameters else {}
        for i in range(n):
            clock.advance(0.001)
            if mode == "bind":
                await sched.bind("default", f"p{i}", f"n{i % 500}", uid=pods[i]["metadata"]["uid"])
            else:
                await sched.create(EVENTS, event(i, pods[i]), "default", read_only=True, **handover)
    finally:
        await store.close()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("bind", "event", "lease"):
        sys.exit("usage: python bench/callgrind_api_ops.py bind|event|lease N")
    count, pods_n = int(sys.argv[2]), int(os.environ.get("M", "600"))
    if count > pods_n and sys.argv[1] != "lease":
        sys.exit(f"N ({count}) must not exceed M ({pods_n})")
    asyncio.run(main(sys.argv[1], count, pods_n))
