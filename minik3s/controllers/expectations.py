"""Controller expectations (layer L4), after kube-controller-manager's
`pkg/controller/controller_utils.go` ControllerExpectations / UIDTrackingControllerExpectations.

Why: a controller that just created 5 pods must not create 5 more while its pod informer
has not yet seen them. Before writing, a controller records how many creations (and which
deletions) it expects for a key; informer events lower the counts; `satisfied(key)` is what
gates the next manage step. Entries expire after 5 minutes so a lost event cannot wedge a key.

Data flow: controller sync -> expect_*; informer handlers -> *_observed; sync -> satisfied.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minik3s.utils.clock import Clock

EXPECTATIONS_TIMEOUT = 5 * 60.0


@dataclass(slots=True)
class _Entry:
    add: int
    dele: int
    timestamp: float
    deleting: set[str] = field(default_factory=set)


class Expectations:
    """Create counts plus the pod keys expected to be deleted, per controller key."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or Clock()
        self._entries: dict[str, _Entry] = {}

    def satisfied(self, key: str) -> bool:
        """True when nothing is pending, the entry expired, or there is no entry."""
        e = self._entries.get(key)
        if e is None:
            return True
        if e.add <= 0 and e.dele <= 0:
            return True
        return self._clock.monotonic() - e.timestamp > EXPECTATIONS_TIMEOUT

    def expect_creations(self, key: str, adds: int) -> None:
        self._entries[key] = _Entry(adds, 0, self._clock.monotonic())

    def expect_deletions(self, key: str, pod_keys: list[str]) -> None:
        self._entries[key] = _Entry(0, len(pod_keys), self._clock.monotonic(), set(pod_keys))

    def creation_observed(self, key: str) -> None:
        e = self._entries.get(key)
        if e is not None:
            e.add -= 1

    def lower_creations(self, key: str, n: int) -> None:
        e = self._entries.get(key)
        if e is not None:
            e.add -= n

    def deletion_observed(self, key: str, pod_key: str) -> None:
        e = self._entries.get(key)
        if e is not None and pod_key in e.deleting:
            e.deleting.discard(pod_key)
            e.dele -= 1

    def delete(self, key: str) -> None:
        self._entries.pop(key, None)

    def pending(self, key: str) -> tuple[int, int]:
        e = self._entries.get(key)
        return (e.add, e.dele) if e else (0, 0)
