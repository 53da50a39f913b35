"""ReplicationController controller (layer L4), after kube-controller-manager's
`pkg/controller/replication`: upstream runs the ReplicaSet loop over core/v1
ReplicationControllers, whose `spec.selector` is a plain equality map; so does this.

Data flow: as the ReplicaSet controller, over `replicationcontrollers` and pods.
"""

from __future__ import annotations

from minik3s.api.resources import REPLICATIONCONTROLLERS
from minik3s.api.selectors import LabelSelector, selector_from_set
from minik3s.api.types import JsonDict
from minik3s.controllers.replicaset import ReplicaSetController


class ReplicationManager(ReplicaSetController):
    NAME = "replication-controller"
    RESOURCE = REPLICATIONCONTROLLERS
    API_VERSION = "v1"
    KIND = "ReplicationController"

    @staticmethod
    def selector_of(rs: JsonDict) -> LabelSelector:
        sel = (rs.get("spec") or {}).get("selector")
        if sel is not None and not isinstance(sel, dict):
            raise ValueError("spec.selector must be a map")
        return selector_from_set({str(k): str(v) for k, v in (sel or {}).items()})
