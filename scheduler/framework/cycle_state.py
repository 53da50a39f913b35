"""CycleState: per-attempt scratch space plugins share (upstream framework.CycleState).

PreFilter/PreScore write precomputed data under keys like f"PreFilter{NAME}" /
f"PreScore{NAME}"; Filter/Score read it. `clone()` is shallow per key but calls a value's
own `clone()` when it has one (preemption mutates cloned state while simulating).
"""

from __future__ import annotations

from typing import Any

# Written by the scheduler's vector path before PreScore: (NodeArrays, rows, nodes), the
# feasible nodes as snapshot rows, `nodes` the very list PreScore and Score are given (a plugin
# checks it is that list before reading the rows for it). Absent on the scalar path.
FEASIBLE_ROWS_KEY = "minik3s.io/feasible-rows"


class StateNotFoundError(KeyError):
    pass


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins", "record_plugin_metrics")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.record_plugin_metrics = False

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise StateNotFoundError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.items():
            cl = getattr(v, "clone", None)
            c._data[k] = cl() if callable(cl) else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        return c
