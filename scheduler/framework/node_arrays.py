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

import itertools
import weakref
from collections.abc import Callable, Collection, Hashable, Iterable
from typing import Any, Protocol

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
_BOOL_COLUMNS = ("tainted", "unschedulable", "has_images", "untainted", "schedulable")
# rows the write log keeps before it drops its older half
_LOG_LIMIT = 4096


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
    untainted: BoolArray  # ~tainted, kept for the filters' fast accept (one gather)
    schedulable: BoolArray  # ~unschedulable, likewise

    __slots__ = (*_INT_COLUMNS, *_BOOL_COLUMNS, "n", "index", "scalar_alloc", "scalar_req", "_unsafe",
                 "_list", "_seq", "rebuilds", "_twice", "_ones", "_log", "_log_start", "_objs", "_ints", "_bools", "__weakref__")

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
        # rows rewritten since the last rebuild, in order (RowMemo's staleness); _log[0] is write
        # number _log_start (the log keeps its newer half when it grows long)
        self._log: list[int] = []
        self._log_start = 0
        self._twice: IntArray = np.zeros(0, dtype=np.int64)
        self._ones: BoolArray = np.zeros(0, dtype=np.bool_)
        self._alloc(0)

    def _alloc(self, n: int) -> None:
        self._objs: npt.NDArray[np.object_] = np.empty(n, dtype=object)  # row -> its NodeInfo
        # the columns are the rows of one matrix per dtype (each contiguous), so a node's values
        # are written with one strided assignment: _ints[:, i] = (...)
        self._ints: npt.NDArray[np.int64] = np.zeros((len(_INT_COLUMNS), n), dtype=np.int64)
        self._bools: npt.NDArray[np.bool_] = np.zeros((len(_BOOL_COLUMNS), n), dtype=np.bool_)
        for k, c in enumerate(_INT_COLUMNS):
            setattr(self, c, self._ints[k])
        for k, c in enumerate(_BOOL_COLUMNS):
            setattr(self, c, self._bools[k])

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
        self._log_start += len(self._log)
        self._log = []
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
            log = self._log
            log.append(i)
            if len(log) > _LOG_LIMIT:
                drop = len(log) // 2
                del log[:drop]
                self._log_start += drop
        self._objs[i] = ni
        a, r, z = ni.allocatable, ni.requested, ni.non_zero_requested
        a_sc, r_sc = a.scalar, r.scalar
        pods = ni.pods
        vals = [a.milli_cpu, a.memory, a.ephemeral_storage, a.allowed_pod_number, r.milli_cpu, r.memory,
                r.ephemeral_storage, z.milli_cpu, z.memory, z.ephemeral_storage, len(pods)]
        scalar_names = (a_sc.keys() | r_sc.keys()) if a_sc or r_sc else ()
        unsafe = max(vals) >= SAFE_LIMIT or min(vals) <= -SAFE_LIMIT
        if scalar_names and not unsafe:
            unsafe = any(abs(a_sc.get(k, 0)) >= SAFE_LIMIT or abs(r_sc.get(k, 0)) >= SAFE_LIMIT
                         for k in scalar_names)
        if unsafe:  # never stored (it could overflow int64); the row stays zeros and flagged
            self._unsafe.add(i)
            vals = [0] * len(vals)
            scalar_names = ()
        elif self._unsafe:
            self._unsafe.discard(i)
        if pods:  # clamping is monotonic: the clamped min / max are the min / max clamped
            prios = [p.priority for p in pods]
            lo = min(max(min(prios), -PRIO_LIMIT), PRIO_LIMIT)
            hi = min(max(max(prios), -PRIO_LIMIT), PRIO_LIMIT)
        else:
            lo, hi = NO_POD_MIN_PRIO, NO_POD_MAX_PRIO
        vals += (ni.generation, lo, hi)  # _INT_COLUMNS' order
        self._ints[:, i] = vals
        tainted = bool(ni.taints)
        cordoned = ni.unschedulable
        self._bools[:, i] = (tainted, cordoned, bool(ni.image_states), not tainted, not cordoned)  # _BOOL_COLUMNS'
        if scalar_names or self.scalar_alloc:
            self._write_scalars(i, a_sc, r_sc, scalar_names)

    def _write_scalars(self, i: int, a_sc: dict[str, int], r_sc: dict[str, int],
                       scalar_names: Iterable[str]) -> None:
        for k in scalar_names:
            col_a = self.scalar_alloc.get(k)
            if col_a is None:  # a resource no row had: a new pair of columns
                col_a = self.scalar_alloc[k] = np.zeros(self.n, dtype=np.int64)
                self.scalar_req[k] = np.zeros(self.n, dtype=np.int64)
            col_a[i] = a_sc.get(k, 0)
            self.scalar_req[k][i] = r_sc.get(k, 0)
        # a resource the node no longer lists reads 0 (the scalar code's `.get(name, 0)`)
        names = set(scalar_names)
        for k, col_a in self.scalar_alloc.items():
            if k not in names:
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

    def writes_since(self, mark: int) -> list[int] | None:
        """Rows rewritten after write number `mark` (`write_mark()` at the time), in order, with
        repeats; None when the log no longer reaches back that far."""
        at = mark - self._log_start
        if at < 0:
            return None
        return self._log[at:]

    def write_mark(self) -> int:
        """The number of row writes so far (since the arrays were created; a rebuild's writes
        are not counted)."""
        return self._log_start + len(self._log)

    @property
    def row_updates(self) -> int:
        """Rows rewritten one by one so far (the write mark)."""
        return self.write_mark()

    def nodes_at(self, rows: IntArray) -> list[NodeInfo]:
        """The NodeInfos of `rows`, in their order (one gather, no per-row Python lookup)."""
        out: list[NodeInfo] = self._objs[rows].tolist()
        return out

    def node(self, row: int) -> NodeInfo:
        """The NodeInfo row `row` was written from (the snapshot's list entry)."""
        ni: NodeInfo = self._objs[row]
        return ni

    def window(self, start: int, offset: int, size: int) -> IntArray:
        """Rows visited `offset`..`offset+size-1` steps after `start`, wrapping (upstream's
        round-robin from nextStartNodeIndex). A read-only view of 0..n-1 laid out twice, when the
        window fits in it (size <= n, start < n: the filter walk's case)."""
        n = self.n
        lo = start + offset
        twice = self._twice
        if 0 <= lo < n and 0 <= size <= n and start < n:
            if len(twice) != 2 * n:
                twice = self._twice = np.concatenate((np.arange(n, dtype=np.int64),) * 2)
                twice.flags.writeable = False
            out: IntArray = twice[lo:lo + size]
            return out
        rows = np.arange(lo, lo + size, dtype=np.int64)
        if n:
            rows %= n
        return rows

    def all_true(self, size: int) -> BoolArray:
        """A read-only boolean vector of `size` Trues (a fast accept of a whole window)."""
        ones = self._ones
        if len(ones) < size:
            ones = self._ones = np.ones(max(size, 2 * len(ones)), dtype=np.bool_)
            ones.flags.writeable = False
        out: BoolArray = ones[:size]
        return out


class RowMemo:
    """Per-row values of a pure function of (a node's row, a key), kept across cycles.

    A scorer's raw score or a filter's fast accept for a node depends only on the node's numbers
    (its row) and on a few numbers of the pod (its requests): the `key`. When pod after pod
    carries the same key (a Deployment's replicas), only the rows rewritten since the previous
    cycle (one bound pod: one or two rows) need computing again. An entry holds the values of
    every row and the arrays' write mark when it was last brought up to date; `values`
    recomputes the rows the arrays' write log lists after that mark and gathers the rows asked
    for. A rebuild of the arrays (nodes added or removed), another arrays object or a log that no
    longer reaches back starts the entry from scratch. Up to `size` keys are kept, least recently
    used first out. A key enters on its second sighting: a pod whose requests no recent pod had
    gets `compute(rows)` for just its rows, as without the memo (a stream of all-different pods
    costs nothing more).

    `compute(rows)` gives the values of `rows` as a vector; `compute_one(row)`, when given, the
    value of one row (cheaper than NumPy's per-call overhead when only a few rows are stale).
    Both must be the same function of the row's node and the key: callers pass the vector and
    scalar forms the table tests prove equal."""

    __slots__ = ("_arrays", "_rebuilds", "_entries", "_seen", "_size", "hits", "misses")

    # up to this many stale rows are recomputed one by one with `compute_one`
    SCALAR_ROWS = 8

    def __init__(self, size: int = 4) -> None:
        self._arrays: weakref.ref[NodeArrays] | None = None
        self._rebuilds = -1
        self._entries: dict[Hashable, list[Any]] = {}
        self._seen: dict[Hashable, None] = {}  # keys sighted once, oldest first
        self._size = size
        self.hits = 0
        self.misses = 0

    def values(self, arrays: NodeArrays, key: Hashable, rows: IntArray,
               compute: Callable[[IntArray], npt.NDArray[Any]],
               compute_one: Callable[[int], Any] | None = None) -> npt.NDArray[Any]:
        """`compute(rows)`, from the memo where the rows' nodes did not change."""
        owner = self._arrays() if self._arrays is not None else None
        if owner is not arrays or self._rebuilds != arrays.rebuilds:
            self._seen.update(dict.fromkeys(self._entries))  # known keys: filled again on next use
            self._entries.clear()
            self._arrays = weakref.ref(arrays)
            self._rebuilds = arrays.rebuilds
        entries = self._entries
        entry = entries.pop(key, None)
        stale = arrays.writes_since(entry[1]) if entry is not None else None
        if entry is None or stale is None or len(entry[0]) != arrays.n:
            self.misses += 1
            if entry is None and key not in self._seen:
                seen = self._seen
                seen[key] = None
                if len(seen) > 4 * self._size:
                    del seen[next(iter(seen))]
                return np.asarray(compute(rows))
            self._seen.pop(key, None)
            entry = [np.asarray(compute(np.arange(arrays.n, dtype=np.int64))), arrays.write_mark()]
            if len(entries) >= self._size:
                old = next(iter(entries))
                del entries[old]
                self._seen[old] = None
        else:
            self.hits += 1
            if stale:
                vals = entry[0]
                if compute_one is not None and len(stale) <= self.SCALAR_ROWS:
                    for r in set(stale):
                        vals[r] = compute_one(r)
                else:
                    changed = np.unique(np.asarray(stale, dtype=np.int64))
                    vals[changed] = compute(changed)
                entry[1] = arrays.write_mark()
        entries[key] = entry
        out: npt.NDArray[Any] = entry[0][rows]
        return out


class LabelCodes:
    """Per row: a node's value of a label key as a small integer, kept across cycles.

    Codes are given out per key in first-seen order (`codes`, `names`); a row's code is -1
    when its node lacks the label. The per-row codes are a RowMemo (rewritten rows only are read
    again). The codes of a key only grow; past four per node they start again, and the rows
    remembered under the old codes with them. An array indexed by code (`table`) stays right
    while `is_current(key, stamp)` holds for the `stamp(key)` taken when it was built."""

    __slots__ = ("_codes", "_names", "_rows")

    def __init__(self) -> None:
        self._codes: dict[str, dict[str, int]] = {}
        self._names: dict[str, list[str]] = {}
        self._rows = RowMemo(size=8)

    def rows(self, arrays: NodeArrays, rows: IntArray, key: str) -> IntArray:
        """The code of each row's `key` value (-1 without the label)."""
        codes = self._codes.get(key)
        if codes is None or len(codes) > 4 * arrays.n + 64:
            codes = self._codes[key] = {}
            self._names[key] = []
            self._rows = RowMemo(size=8)
        names = self._names[key]

        def code(n: NodeInfo) -> int:
            v = n.labels.get(key)
            if v is None:
                return -1
            got = codes.get(v)
            if got is None:
                got = codes[v] = len(codes)
                names.append(v)
            return got

        def compute(r: IntArray) -> IntArray:
            return np.fromiter((code(n) for n in arrays.nodes_at(r)), dtype=np.int64, count=len(r))

        out: IntArray = self._rows.values(arrays, key, rows, compute, lambda row: code(arrays.node(row)))
        return out

    @property
    def hits(self) -> int:
        """Lookups the remembered rows answered (RowMemo.hits)."""
        return self._rows.hits

    def codes(self, key: str) -> dict[str, int]:
        """value -> code for `key`, as far as `rows` has seen values (read-only)."""
        return self._codes.get(key) or {}

    def names(self, key: str) -> list[str]:
        """code -> value for `key` (read-only)."""
        return self._names.get(key) or []

    def stamp(self, key: str) -> tuple[dict[str, int], int]:
        """What `is_current` compares: the key's codes as they are now."""
        codes = self.codes(key)
        return codes, len(codes)

    def is_current(self, key: str, stamp: tuple[dict[str, int], int]) -> bool:
        """No code of `key` was given out or taken back since `stamp` (a table built then is
        still indexed right and misses no value)."""
        codes = self._codes.get(key)
        return codes is stamp[0] and len(codes) == stamp[1]

    def table(self, key: str, values: Collection[str], counts: Iterable[int] | None = None) -> IntArray:
        """A fresh array indexed by `key`'s codes, plus a last 0 slot (what a row's -1, no
        label, reads): at the code of each of `values` its count (1 without `counts`), 0
        elsewhere; values no row has shown are left out."""
        n = len(values)
        codes = self.codes_of(key, values, n)
        have = codes >= 0
        out: IntArray = np.zeros(len(self.codes(key)) + 1, dtype=np.int64)
        if counts is None:
            out[codes[have]] = 1
        else:
            out[codes[have]] = np.fromiter(counts, dtype=np.int64, count=n)[have]
        return out

    def codes_of(self, key: str, values: Iterable[str], count: int) -> IntArray:
        """The codes of `count` values of `key`, -1 for a value no row has shown (one C-level
        pass: a few thousand values cost tens of microseconds)."""
        get = self.codes(key).get
        return np.fromiter(map(get, values, itertools.repeat(-1, count)), dtype=np.int64, count=count)
