"""CPU per pod create through the in-process request core with ValidatingAdmissionPolicies.

The real request core (ApiCore over SQLite in memory, a fake clock) creates `n` pods in a
namespace labelled `env=test`, once with no policy and once with `policies` policies (each a
namespaceSelector-narrowed binding and one validation on the pod's containers), and prints one
JSON line: CPU microseconds per create (`time.process_time`) for both, median of `--runs`.

    python bench/bench_policy_admission.py --pods 500 --policies 3 --runs 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from typing import Any

from apiserver.core import ApiCore
from apiserver.storage.sqlite_store import SqliteStore
from minik3s.api.resources import ResourceRegistry
from minik3s.utils.clock import FakeClock

GROUP = "admissionregistration.k8s.io"


def _info(core: ApiCore, resource: str, group: str = "") -> Any:
    return core.registry.get(group, "v1", resource)


async def _run(pods: int, policies: int) -> float:
    clock = FakeClock()
    store = SqliteStore(":memory:", compact_interval=0, clock=clock)
    await store.start()
    try:
        core = ApiCore(store, ResourceRegistry(), clock=clock, rng=random.Random(1))
        await core.create(_info(core, "namespaces"), None, {"metadata": {"name": "t", "labels": {"env": "test"}}})
        for i in range(policies):
            await core.create(_info(core, "validatingadmissionpolicies", GROUP), None, {
                "metadata": {"name": f"p{i}"}, "spec": {
                    "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                            "operations": ["CREATE"], "resources": ["pods"]}]},
                    "validations": [{"expression": "object.spec.containers.all(c, c.image != 'forbidden')"}]}})
            await core.create(_info(core, "validatingadmissionpolicybindings", GROUP), None, {
                "metadata": {"name": f"b{i}"}, "spec": {
                    "policyName": f"p{i}", "validationActions": ["Deny"],
                    "matchResources": {"namespaceSelector": {"matchLabels": {"env": "test"}}}}})
        pods_info = _info(core, "pods")
        bodies = [{"metadata": {"name": f"p{i}", "labels": {"app": "x"}},
                   "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}} for i in range(pods)]
        t0 = time.process_time()
        for b in bodies:
            clock.advance(0.001)
            await core.create(pods_info, "t", b)
        return (time.process_time() - t0) * 1e6 / pods
    finally:
        await store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=500)
    ap.add_argument("--policies", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    base = [asyncio.run(_run(a.pods, 0)) for _ in range(a.runs)]
    with_p = [asyncio.run(_run(a.pods, a.policies)) for _ in range(a.runs)]
    print(json.dumps({"pods": a.pods, "policies": a.policies,
                      "no_policy_us_per_create": round(statistics.median(base), 1),
                      "with_policies_us_per_create": round(statistics.median(with_p), 1),
                      "runs_no_policy": [round(x, 1) for x in base],
                      "runs_with_policies": [round(x, 1) for x in with_p]}))


if __name__ == "__main__":
    main()
