"""NodeArrays: the snapshot's per-node numbers as NumPy columns, for vector Filter/Score (layer L4).

A minik3s addition for speed (upstream loops over NodeInfos in Go). Row i describes
`snapshot.node_info_list[i]`: allocatable, requested and non-zero requested cpu / memory /
ephemeral-storage, allowed and current pod counts, the lowest and highest priority of the node's
pods (preemption's dry run: which nodes hold a possible victim, and where every pod is one),
extended resources (a column pair per resource name, made on first use), and flags (tainted,
unschedulable, holds images).

Data flow: `Snapshot.node_arrays()` -> `NodeArrays.sync(snapshot)` before a cycle uses it. The
cache refreshes the snapshot in place and journals the names it changed; sync rewrites only those
rows (one bound pod since the last cycle: one row), and rebuilds every column when nodes were
added or removed, the journal does not reach back, or the node list is another object. A
hand-built (untracked) snapshot is checked row by row against each NodeInfo's generation.

Every value is an int64; a row holding a number of 2**50 or more (a node claiming exabytes) is
`unsafe`: the vector paths then leave the cycle to the scalar code, whose Python integers cannot
overflow, so a decision never depends on which path ran.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from scheduler.framework.types import NodeInfo


class Snapshot(Protocol):
    """What `sync` reads of scheduler/backend/snapshot.py's Snapshot (named here, not imported:
    the backend layer imports this module)."""

    node_info_list: list[NodeInfo]
    tracked: bool
    change_seq: int

    def nodes_changed_since(self, seq: int) -> set[str] | None: ...

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# the largest value a row may hold for the vector paths (x100 scaling and weights stay far
# below int64's range; float64 holds every such integer exactly)
SAFE_LIMIT = 2**50

_INT_COLUMNS = ("alloc_cpu", "alloc_mem", "alloc_eph", "alloc_pods", "req_cpu", "req_mem", "req_eph",
                "nz_cpu", "nz_mem", "nz_eph", "npods", "generation", "min_prio", "max_prio")
# min_prio / max_prio of a node without pods: no priority is below / above them. A pod's priority
# is stored clamped to +-PRIO_LIMIT (the API bounds it to int32; a hand-built pod may not be), so
# comparing a column with a priority p, |p| < PRIO_LIMIT, gives the unclamped answer.
PRIO_LIMIT = 2**61
NO_POD_MIN_PRIO = 2**62
NO_POD_MAX_PRIO = -(2**62)
_BOOL_COLUMNS = ("tainted", "unschedulable", "has_images")


class NodeArrays:
    """Columns over the snapshot's node list (see the module docstring)."""

    alloc_cpu: IntArray
    alloc_mem: IntArray
    alloc_eph: IntArray
    alloc_pods: IntArray
    req_cpu: IntArray
    req_mem: IntArray
    req_eph: IntArray
    nz_cpu: IntArray
    nz_mem: IntArray
    nz_eph: IntArray
    npods: IntArray
    generation: IntArray
    min_prio: IntArray
    max_prio: IntArray
    tainted: BoolArray
    unschedulable: BoolArray
    has_images: BoolArray

    __slots__ = (*_INT_COLUMNS, *_BOOL_COLUMNS, "n", "index", "scalar_alloc", "scalar_req", "_unsafe",
                 "_list", "_seq", "rebuilds", "row_updates")

    def __init__(self) -> None:
        self.n = 0
        self.index: dict[str, int] = {}
        # extended resource name -> allocatable / requested column
        self.scalar_alloc: dict[str, IntArray] = {}
        self.scalar_req: dict[str, IntArray] = {}
        self._unsafe: set[int] = set()
        self._list: list[NodeInfo] | None = None
        self._seq = -1
        self.rebuilds = 0
        self.row_updates = 0
        self._alloc(0)

    def _alloc(self, n: int) -> None:
        for c in _INT_COLUMNS:
            setattr(self, c, np.zeros(n, dtype=np.int64))
        for c in _BOOL_COLUMNS:
            setattr(self, c, np.zeros(n, dtype=np.bool_))

    # ---- keeping in step with the snapshot ------------------------------------------------
    def sync(self, snapshot: Snapshot) -> None:
        nodes = snapshot.node_info_list
        if nodes is not self._list or len(nodes) != self.n:
            self._rebuild(nodes, snapshot)
            return
        if snapshot.tracked:
            if self._seq == snapshot.change_seq:
                return
            changed = snapshot.nodes_changed_since(self._seq)
            if changed is None:
                self._rebuild(nodes, snapshot)
                return
            index = self.index
            for name in changed:
                row = index.get(name)
                if row is None or nodes[row].name != name:
                    self._rebuild(nodes, snapshot)
                    return
                self._write_row(row, nodes[row])
            self._seq = snapshot.change_seq
            return
        # untracked: compare generations (a hand-built snapshot, e.g. in tests or what-if copies)
        gens = np.fromiter((ni.generation for ni in nodes), dtype=np.int64, count=len(nodes))
        for row in np.flatnonzero(gens != self.generation).tolist():
            ni = nodes[row]
            if self.index.get(ni.name) != row:
                self._rebuild(nodes, snapshot)
                return
            self._write_row(row, ni)

    def _rebuild(self, nodes: list[NodeInfo], snapshot: Snapshot) -> None:
        self.rebuilds += 1
        n = len(nodes)
        self.n = n
        self._list = nodes
        self._seq = snapshot.change_seq
        self.index = {ni.name: i for i, ni in enumerate(nodes)}
        self._unsafe = set()
        self._alloc(n)
        names: set[str] = set()
        for ni in nodes:
            names.update(ni.allocatable.scalar)
            names.update(ni.requested.scalar)
        self.scalar_alloc = {k: np.zeros(n, dtype=np.int64) for k in names}
        self.scalar_req = {k: np.zeros(n, dtype=np.int64) for k in names}
        for i, ni in enumerate(nodes):
            self._write_row(i, ni, count=False)

    def _write_row(self, i: int, ni: NodeInfo, *, count: bool = True) -> None:
        if count:
            self.row_updates += 1
        a, r, z = ni.allocatable, ni.requested, ni.non_zero_requested
        vals: tuple[int, ...] = (a.milli_cpu, a.memory, a.ephemeral_storage, a.allowed_pod_number, r.milli_cpu, r.memory,
                r.ephemeral_storage, z.milli_cpu, z.memory, z.ephemeral_storage, len(ni.pods))
        scalar_names = set(a.scalar) | set(r.scalar)
        unsafe = (any(abs(v) >= SAFE_LIMIT for v in vals)
                  or any(abs(a.scalar.get(k, 0)) >= SAFE_LIMIT or abs(r.scalar.get(k, 0)) >= SAFE_LIMIT
                         for k in scalar_names))
        if unsafe:  # never stored (it could overflow int64); the row stays zeros and flagged
            self._unsafe.add(i)
            vals = (0,) * len(vals)
            scalar_names = set()
        else:
            self._unsafe.discard(i)
        (self.alloc_cpu[i], self.alloc_mem[i], self.alloc_eph[i], self.alloc_pods[i], self.req_cpu[i],
         self.req_mem[i], self.req_eph[i], self.nz_cpu[i], self.nz_mem[i], self.nz_eph[i],
         self.npods[i]) = vals
        self.generation[i] = ni.generation
        lo, hi = NO_POD_MIN_PRIO, NO_POD_MAX_PRIO
        for p in ni.pods:
            prio = min(max(p.priority, -PRIO_LIMIT), PRIO_LIMIT)
            if prio < lo:
                lo = prio
            if prio > hi:
                hi = prio
        self.min_prio[i] = lo
        self.max_prio[i] = hi
        self.tainted[i] = bool(ni.taints)
        self.unschedulable[i] = ni.unschedulable
        self.has_images[i] = bool(ni.image_states)
        for k in scalar_names:
            col_a = self.scalar_alloc.get(k)
            if col_a is None:  # a resource no row had: a new pair of columns
                col_a = self.scalar_alloc[k] = np.zeros(self.n, dtype=np.int64)
                self.scalar_req[k] = np.zeros(self.n, dtype=np.int64)
            col_a[i] = a.scalar.get(k, 0)
            self.scalar_req[k][i] = r.scalar.get(k, 0)
        # a resource the node no longer lists reads 0 (the scalar code's `.get(name, 0)`)
        for k, col_a in self.scalar_alloc.items():
            if k not in scalar_names:
                col_a[i] = 0
                self.scalar_req[k][i] = 0

    # ---- reads ---------------------------------------------------------------------------
    @property
    def safe(self) -> bool:
        """No row holds a value the int64 arithmetic could overflow on."""
        return not self._unsafe

    def scalar_columns(self, name: str) -> tuple[IntArray, IntArray]:
        """(allocatable, requested) of extended resource `name`; zeros when no node has it."""
        col = self.scalar_alloc.get(name)
        if col is None:
            zero = np.zeros(self.n, dtype=np.int64)
            return zero, zero
        return col, self.scalar_req[name]

    def window(self, start: int, offset: int, size: int) -> IntArray:
        """Rows visited `offset`..`offset+size-1` steps after `start`, wrapping (upstream's
        round-robin from nextStartNodeIndex)."""
        rows = np.arange(start + offset, start + offset + size, dtype=np.int64)
        n = self.n
        if n:
            rows %= n
        return rows
