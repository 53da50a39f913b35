"""ImageLocality (PreScore, Score): prefer nodes that already hold the pod's images, scaled by how
widely each image is spread (upstream plugins/imagelocality).

sum = Σ over init+regular containers whose normalized image is on the node of
      trunc(size * numNodes/totalNodes); clamp to [23Mi, 1000Mi * #containers];
score = 100 * (clamped − 23Mi) // (max − 23Mi).
Example: a 2000Mi image on 1 of 3 nodes, one container -> trunc(2097152000/3) = 699050666 -> 65.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import MAX_NODE_SCORE, PreScorePlugin, ScorePlugin, Status
from scheduler.framework.node_arrays import IntArray, NodeArrays
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.plugins import names
from scheduler.plugins.helpers import SUCCESS

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
PRE_SCORE_STATE_KEY = "PreScore" + names.IMAGE_LOCALITY


def normalized_image_name(name: str) -> str:
    """Append ":latest" when the image has no tag: `nginx` -> `nginx:latest`, `reg:5000/app` ->
    `reg:5000/app:latest`, `nginx:1.25` unchanged."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


@dataclass(slots=True)
class _PreScoreState:
    images: list[str]
    num_containers: int
    total_nodes: int


class ImageLocality(PreScorePlugin, ScorePlugin):
    NAME = names.IMAGE_LOCALITY

    def _state(self, pod: PodInfo, fallback_total: int) -> _PreScoreState:
        spec = pod.spec
        containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
        images = [normalized_image_name(c.get("image") or "") for c in containers]
        total = fallback_total
        if self.handle is not None:
            snap = self.handle.snapshot()
            if snap is not None:
                total = len(snap.node_infos())
        return _PreScoreState(images, len(containers), max(total, 1))

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        state.write(PRE_SCORE_STATE_KEY, self._state(pod, len(nodes)))
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            s = self._state(pod, 1)
        if s.num_containers == 0:
            return 0, SUCCESS
        total = 0
        states = node.image_states
        if states:
            for img in s.images:
                st = states.get(img)
                if st is not None:
                    total += int(st.size * (st.num_nodes / s.total_nodes))
        return calculate_priority(total, s.num_containers), SUCCESS

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[int], Status]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            s = self._state(pod, 1)
        if s.num_containers == 0:
            return [0] * len(nodes), SUCCESS
        n_containers = s.num_containers
        empty = calculate_priority(0, n_containers)  # a node holding none of the images
        images, total_nodes = s.images, s.total_nodes
        out: list[int] = []
        append = out.append
        for node in nodes:
            states = node.image_states
            if not states:
                append(empty)
                continue
            total = 0
            for img in images:
                st = states.get(img)
                if st is not None:
                    total += int(st.size * (st.num_nodes / total_nodes))
            append(calculate_priority(total, n_containers))
        return out, SUCCESS

    def score_rows(self, state: CycleState, pod: PodInfo, arrays: NodeArrays, rows: IntArray,
                   nodes: Sequence[NodeInfo]) -> IntArray | None:
        """Rows of nodes without images score `calculate_priority(0, n)` without a look."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None or s.num_containers == 0:
            return None
        out = np.empty(len(rows), dtype=np.int64)
        out.fill(calculate_priority(0, s.num_containers))
        with_images = arrays.has_images[rows].nonzero()[0]
        if len(with_images):
            idx = with_images.tolist()
            scores, _ = self.score_nodes(state, pod, [nodes[i] for i in idx])
            out[with_images] = scores
        return out
