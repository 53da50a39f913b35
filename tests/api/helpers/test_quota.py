"""What each object is charged against a ResourceQuota (minik3s.api.helpers.quota), as
upstream's quota evaluators count it: sums in the first operand's format, init containers and
sidecars, overhead, terminal and long-deleted pods, services' node ports, claims' storage."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from minik3s.api.helpers import quota as q

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def c(name: str, requests: dict | None = None, limits: dict | None = None, **extra: object) -> dict:
    res: dict = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": "x", "resources": res, **extra}


def usage(pod_spec: dict, *names: str, **meta: object) -> dict:
    obj = {"metadata": {"name": "p", "namespace": "d", **meta}, "spec": pod_spec}
    u = q.usage_of("", "pods", obj, NOW)
    return q.as_resource_list(q.mask(u, names) if names else u)


def test_pod_usage_names_and_formats():
    spec = {"containers": [c("a", {"cpu": "100m", "memory": "500Mi"}, {"cpu": "200m"}),
                           c("b", {"cpu": "250m", "memory": "500Mi", "nvidia.com/gpu": "1",
                                   "hugepages-2Mi": "4Mi"})]}
    assert usage(spec) == {
        "count/pods": "1", "pods": "1", "cpu": "350m", "requests.cpu": "350m", "limits.cpu": "200m",
        "memory": "1000Mi", "requests.memory": "1000Mi", "requests.nvidia.com/gpu": "1",
        "hugepages-2Mi": "4Mi", "requests.hugepages-2Mi": "4Mi"}


def test_init_containers_sidecars_and_overhead():
    spec = {"initContainers": [c("init", {"cpu": "1"}), c("side", {"cpu": "200m"}, restartPolicy="Always")],
            "containers": [c("app", {"cpu": "300m"}, {"memory": "1Gi"})],
            "overhead": {"cpu": "50m", "memory": "64Mi"}}
    # max(app + side = 500m, init = 1 (the sidecar starts after it)) + 50m overhead; the
    # overhead adds to a limit only where one is set
    assert usage(spec, "requests.cpu", "limits.memory", "limits.cpu") == {
        "requests.cpu": "1050m", "limits.memory": "1088Mi"}


@pytest.mark.parametrize(("status", "meta", "charged"), [
    ({"phase": "Running"}, {}, True),
    ({"phase": "Succeeded"}, {}, False),
    ({"phase": "Failed"}, {}, False),
    ({"phase": "Running"}, {"deletionTimestamp": "2026-01-01T11:59:50Z", "deletionGracePeriodSeconds": 30}, True),
    ({"phase": "Running"}, {"deletionTimestamp": "2026-01-01T11:59:00Z", "deletionGracePeriodSeconds": 30}, False),
])
def test_terminal_and_long_deleted_pods_keep_only_their_count(status, meta, charged):
    obj = {"metadata": {"name": "p", **meta}, "status": status,
           "spec": {"containers": [c("a", {"cpu": "1"})]}}
    u = q.as_resource_list(q.usage_of("", "pods", obj, NOW))
    assert u["count/pods"] == "1"
    assert ("pods" in u and u.get("requests.cpu") == "1") is charged


def test_scopes_select_pods():
    be = {"metadata": {}, "spec": {"containers": [c("a")]}}
    burst = {"metadata": {}, "spec": {"containers": [c("a", {"cpu": "1"})], "activeDeadlineSeconds": 5,
                                      "priorityClassName": "gold"}}
    cross = {"metadata": {}, "spec": {"containers": [c("a")], "affinity": {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {
            "topologyKey": "k", "namespaceSelector": {}}}]}}}}

    def sel(*reqs: dict) -> list[dict]:
        return list(reqs)

    exists = {"operator": "Exists"}
    assert q.matches_scopes("", "pods", be, sel({"scopeName": "BestEffort", **exists}))
    assert not q.matches_scopes("", "pods", burst, sel({"scopeName": "BestEffort", **exists}))
    assert q.matches_scopes("", "pods", burst, sel({"scopeName": "Terminating", **exists},
                                                   {"scopeName": "NotBestEffort", **exists}))
    assert q.matches_scopes("", "pods", burst, sel({"scopeName": "PriorityClass", "operator": "In",
                                                    "values": ["gold", "silver"]}))
    assert not q.matches_scopes("", "pods", be, sel({"scopeName": "PriorityClass", **exists}))
    assert q.matches_scopes("", "pods", be, sel({"scopeName": "PriorityClass", "operator": "DoesNotExist"}))
    assert q.matches_scopes("", "pods", cross, sel({"scopeName": "CrossNamespacePodAffinity", **exists}))
    assert not q.matches_scopes("", "pods", be, sel({"scopeName": "CrossNamespacePodAffinity", **exists}))
    # scoped quotas never charge other kinds
    assert not q.matches_scopes("", "services", {}, sel({"scopeName": "BestEffort", **exists}))
    assert q.matches_scopes("", "services", {}, [])


@pytest.mark.parametrize(("spec", "nodeports", "lbs"), [
    ({"type": "ClusterIP", "ports": [{"port": 80}]}, "0", "0"),
    ({"type": "NodePort", "ports": [{"port": 80}, {"port": 443}]}, "2", "0"),
    ({"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443}]}, "2", "1"),
    ({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": False,
      "ports": [{"port": 80, "nodePort": 30080}, {"port": 443}]}, "1", "1"),
])
def test_service_usage(spec, nodeports, lbs):
    u = q.as_resource_list(q.usage_of("", "services", {"spec": spec}))
    assert u == {"services": "1", "count/services": "1", "services.nodeports": nodeports,
                 "services.loadbalancers": lbs}


def test_claim_usage_takes_the_larger_of_request_and_allocation():
    pvc = {"metadata": {}, "spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "1Gi"}}},
           "status": {"allocatedResources": {"storage": "2Gi"}}}
    assert q.as_resource_list(q.usage_of("", "persistentvolumeclaims", pvc)) == {
        "persistentvolumeclaims": "1", "count/persistentvolumeclaims": "1", "requests.storage": "2Gi",
        "gold.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
        "gold.storageclass.storage.k8s.io/requests.storage": "2Gi"}


def test_object_counts_and_tracked_names():
    assert q.as_resource_list(q.usage_of("", "configmaps", {})) == {"configmaps": "1", "count/configmaps": "1"}
    assert q.as_resource_list(q.usage_of("apps", "deployments", {})) == {"count/deployments.apps": "1"}
    assert q.matching_names("", "pods", ["pods", "requests.storage", "requests.nvidia.com/gpu", "services",
                                         "requests.hugepages-1Gi", "count/pods"]) == [
        "pods", "requests.nvidia.com/gpu", "requests.hugepages-1Gi", "count/pods"]
    assert q.matching_names("", "persistentvolumeclaims", ["requests.storage", "requests.cpu"]) == ["requests.storage"]


def test_constraint_message_lists_containers_per_missing_resource():
    pod = {"spec": {"initContainers": [c("init")], "containers": [c("app", {"cpu": "1"}), c("side", {"memory": "1"})]}}
    assert q.pod_constraint_error(pod, ["requests.cpu", "limits.memory", "pods"]) == (
        "must specify limits.memory for: app,init,side; requests.cpu for: init,side")
    assert q.pod_constraint_error(pod, ["pods", "count/pods"]) == ""
