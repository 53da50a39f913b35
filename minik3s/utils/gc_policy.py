"""The server's cyclic-GC policy, in one place for the server and the benchmarks that time parts
of it.

The stored objects are JSON trees (no reference cycles) that live as long as the store holds
them: what exists now is frozen out of the cyclic GC, and collections run less often, so full
passes over 100k stored objects do not stall requests for 100+ ms."""

from __future__ import annotations

import gc

# generation thresholds: a young collection per 50,000 net allocations (CPython's default: 700)
THRESHOLDS = (50_000, 50, 100)


def apply_server_gc_policy() -> None:
    """Collect once, freeze what survives, and raise the thresholds (`THRESHOLDS`)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
