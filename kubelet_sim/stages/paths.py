"""jq-like field paths for stage selectors (layer L4, kubelet_sim.stages).

A path is a chain of `.field` and `["quoted key"]` segments (the quoted form is for keys holding
dots or slashes, such as annotation keys):
    .status.phase                                   → obj["status"]["phase"]
    .metadata.annotations["sim.minik3s.io/run-seconds"] → obj["metadata"]["annotations"][...]
    .spec.containers[0].name                         → integer index into a list
A missing segment yields `MISSING` (distinct from an explicit null, which is also "absent").
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

MISSING: Any = object()

_TOKEN = re.compile(r'\.([A-Za-z0-9_\-]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]')


@lru_cache(maxsize=256)
def compile_path(path: str) -> tuple[str | int, ...]:
    """Split a path into segments. Raises ValueError for anything else than the grammar above."""
    if not path.startswith((".", "[")):
        raise ValueError(f"path {path!r} must start with '.'")
    segs: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if not m:
            raise ValueError(f"invalid path {path!r} at offset {pos}")
        if m.group(1) is not None:
            segs.append(m.group(1))
        elif m.group(2) is not None:
            segs.append(m.group(2).replace('\\"', '"'))
        else:
            segs.append(int(m.group(3)))
        pos = m.end()
    return tuple(segs)


def get_path(obj: Any, path: str) -> Any:
    cur = obj
    for seg in compile_path(path):
        if isinstance(seg, int):
            if not isinstance(cur, list) or seg >= len(cur):
                return MISSING
            cur = cur[seg]
        else:
            if not isinstance(cur, dict) or seg not in cur:
                return MISSING
            cur = cur[seg]
    return cur
