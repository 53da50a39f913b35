"""Raw JSON aliases used everywhere objects travel as dicts (layer L2).

Objects move through minik3s as plain JSON dicts (what kube-apiserver stores and serves):
pydantic models validate them at the edge, but the stored object is the user's dict with
defaults applied, so fields the server does not act on round-trip exactly.
"""

from typing import Any, TypeAlias

JsonDict: TypeAlias = dict[str, Any]
