"""kube-apiserver's API Priority and Fairness bootstrap configuration, as of Kubernetes 1.33
(layer L2, upstream k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap): 8 PriorityLevelConfigurations
and 13 FlowSchemas, each created with `apf.kubernetes.io/autoupdate-spec: "true"`. Plain data (no
models), so the server's start does not load the wire types.
"""

from __future__ import annotations

from typing import Any

from minik3s.api.types import JsonDict

AUTO_UPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"
API_VERSION = "flowcontrol.apiserver.k8s.io/v1"


ALL_RESOURCES: JsonDict = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"],
                           "clusterScope": True}
ALL_NON_RESOURCES: JsonDict = {"verbs": ["*"], "nonResourceURLs": ["*"]}


def _user(name: str) -> JsonDict:
    return {"kind": "User", "user": {"name": name}}


def _group(name: str) -> JsonDict:
    return {"kind": "Group", "group": {"name": name}}


def _kube_system_sa(name: str = "*") -> JsonDict:
    return {"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": name}}


def _all(*subjects: JsonDict) -> list[JsonDict]:
    return [{"subjects": list(subjects), "resourceRules": [dict(ALL_RESOURCES)],
             "nonResourceRules": [dict(ALL_NON_RESOURCES)]}]


def _queued(shares: int, lendable: int, queues: int, hand: int, length: int = 50) -> JsonDict:
    return {"type": "Limited", "limited": {
        "nominalConcurrencyShares": shares, "lendablePercent": lendable,
        "limitResponse": {"type": "Queue", "queuing": {"queues": queues, "handSize": hand,
                                                       "queueLengthLimit": length}}}}


MANDATORY_PRIORITY_LEVELS: dict[str, JsonDict] = {
    "exempt": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
    "catch-all": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
                                                 "limitResponse": {"type": "Reject"}}},
}
SUGGESTED_PRIORITY_LEVELS: dict[str, JsonDict] = {
    "system": _queued(30, 33, 64, 6),
    "node-high": _queued(40, 25, 64, 6),
    "leader-election": _queued(10, 0, 16, 4),
    "workload-high": _queued(40, 50, 128, 6),
    "workload-low": _queued(100, 90, 128, 6),
    "global-default": _queued(20, 50, 128, 6),
}

_AUTHENTICATED = (_group("system:unauthenticated"), _group("system:authenticated"))
MANDATORY_FLOW_SCHEMAS: dict[str, JsonDict] = {
    "exempt": {"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "exempt"},
               "rules": _all(_group("system:masters"))},
    "catch-all": {"matchingPrecedence": 10000, "priorityLevelConfiguration": {"name": "catch-all"},
                  "distinguisherMethod": {"type": "ByUser"}, "rules": _all(*_AUTHENTICATED)},
}
_LEASES_RULE: JsonDict = {"verbs": ["get", "create", "update"], "apiGroups": ["coordination.k8s.io"],
                          "resources": ["leases"], "namespaces": ["*"], "clusterScope": False}
SUGGESTED_FLOW_SCHEMAS: dict[str, JsonDict] = {
    "probes": {"matchingPrecedence": 2, "priorityLevelConfiguration": {"name": "exempt"}, "rules": [{
        "subjects": list(_AUTHENTICATED),
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]},
    "system-leader-election": {
        "matchingPrecedence": 100, "priorityLevelConfiguration": {"name": "leader-election"},
        "distinguisherMethod": {"type": "ByUser"}, "rules": [{
            "subjects": [_user("system:kube-controller-manager"), _user("system:kube-scheduler"), _kube_system_sa()],
            "resourceRules": [dict(_LEASES_RULE)]}]},
    "endpoint-controller": {
        "matchingPrecedence": 150, "priorityLevelConfiguration": {"name": "workload-high"},
        "distinguisherMethod": {"type": "ByUser"}, "rules": [{
            "subjects": [_user("system:kube-controller-manager"), _kube_system_sa("endpoint-controller"),
                         _kube_system_sa("endpointslicemirroring-controller")],
            "resourceRules": [{"verbs": ["get", "create", "update"], "apiGroups": [""], "resources": ["endpoints"],
                               "namespaces": ["*"], "clusterScope": False}]}]},
    "workload-leader-election": {
        "matchingPrecedence": 200, "priorityLevelConfiguration": {"name": "leader-election"},
        "distinguisherMethod": {"type": "ByUser"}, "rules": [{
            "subjects": [_kube_system_sa()],
            "resourceRules": [{"verbs": ["get", "create", "update"], "apiGroups": [""],
                               "resources": ["endpoints", "configmaps"], "namespaces": ["*"], "clusterScope": False},
                              dict(_LEASES_RULE)]}]},
    "system-node-high": {
        "matchingPrecedence": 400, "priorityLevelConfiguration": {"name": "node-high"},
        "distinguisherMethod": {"type": "ByUser"}, "rules": [{
            "subjects": [_group("system:nodes")],
            "resourceRules": [{"verbs": ["*"], "apiGroups": [""], "resources": ["nodes", "nodes/status"],
                               "namespaces": ["*"], "clusterScope": True},
                              {"verbs": ["*"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                               "namespaces": ["*"], "clusterScope": False}]}]},
    "system-nodes": {"matchingPrecedence": 500, "priorityLevelConfiguration": {"name": "system"},
                     "distinguisherMethod": {"type": "ByUser"}, "rules": _all(_group("system:nodes"))},
    "kube-controller-manager": {"matchingPrecedence": 800, "priorityLevelConfiguration": {"name": "workload-high"},
                                "distinguisherMethod": {"type": "ByNamespace"},
                                "rules": _all(_user("system:kube-controller-manager"))},
    "kube-scheduler": {"matchingPrecedence": 800, "priorityLevelConfiguration": {"name": "workload-high"},
                       "distinguisherMethod": {"type": "ByNamespace"}, "rules": _all(_user("system:kube-scheduler"))},
    "kube-system-service-accounts": {"matchingPrecedence": 900,
                                     "priorityLevelConfiguration": {"name": "workload-high"},
                                     "distinguisherMethod": {"type": "ByNamespace"}, "rules": _all(_kube_system_sa())},
    "service-accounts": {"matchingPrecedence": 9000, "priorityLevelConfiguration": {"name": "workload-low"},
                         "distinguisherMethod": {"type": "ByUser"},
                         "rules": _all(_group("system:serviceaccounts"))},
    "global-default": {"matchingPrecedence": 9900, "priorityLevelConfiguration": {"name": "global-default"},
                       "distinguisherMethod": {"type": "ByUser"}, "rules": _all(*_AUTHENTICATED)},
}


def bootstrap_object(kind: str, name: str, spec: JsonDict) -> JsonDict:
    """A bootstrap FlowSchema or PriorityLevelConfiguration as the ensurer creates it."""
    return {"apiVersion": API_VERSION, "kind": kind,
            "metadata": {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}}, "spec": _copy(spec)}


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v
