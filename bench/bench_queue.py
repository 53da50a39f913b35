"""CPU per operation of the scheduling queue's activeQ: `PriorityQueue.add` and `pop`.

The queue is built as the scheduler builds it: the default profile's real `Framework`
(PrioritySort, SchedulingGates, the in-tree registry) under a real clock, so every pod gets a
distinct timestamp as in a burst. `n` pods (100m / 500Mi, made before timing) are added, then
all popped, `rounds` times; prints one JSON line with microseconds of CPU
(`time.process_time`) per add and per pop. Only APIs that also exist in earlier checkouts are
used, so the same file runs against a base checkout for interleaved A/B pairs:
`PYTHONPATH=<checkout> python bench/bench_queue.py 2000` (docs/performance.md "Session 6: the
activeQ heap"). Under callgrind, compare the instruction counts at two sizes.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from minik3s.testing.builders import make_pod
from minik3s.utils.clock import Clock
from scheduler.backend.queue import PriorityQueue
from scheduler.config import build_registry, parse_config, profile_spec
from scheduler.framework.runtime import Framework
from scheduler.plugins.registry import in_tree_registry


def make_queue(clock: Clock) -> PriorityQueue:
    cfg = parse_config({})
    registry = build_registry(cfg, in_tree_registry())
    prof = cfg.profiles[0]
    fw = Framework(profile_spec(prof, registry), registry, clock=clock)
    return PriorityQueue({prof.scheduler_name: fw}, clock=clock)


def pods(n: int, prefix: str) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        p = make_pod(f"{prefix}-{i}").req(cpu="100m", memory="500Mi").uid(f"{prefix}-uid-{i}").obj()
        out.append(p)
    return out


async def run(n: int, rounds: int) -> dict[str, Any]:
    clock = Clock()
    q = make_queue(clock)
    add_s = pop_s = 0.0
    for r in range(rounds):
        batch = pods(n, f"r{r}")
        t0 = time.process_time()
        for p in batch:
            q.add(p)
        t1 = time.process_time()
        for _ in range(n):
            qpi = await q.pop()
            assert qpi is not None
            q.done(qpi.uid)
        t2 = time.process_time()
        add_s += t1 - t0
        pop_s += t2 - t1
    assert not len(q)
    ops = n * rounds
    return {"pods": n, "rounds": rounds, "add_us": round(add_s / ops * 1e6, 2),
            "pop_us": round(pop_s / ops * 1e6, 2)}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    print(json.dumps(asyncio.run(run(n, rounds))))


if __name__ == "__main__":
    main()
