"""ResourceQuota end to end on the real in-process API: the resourcequota controller fills
status.hard/used, the ResourceQuota admission plugin refuses what does not fit (upstream's 403
messages) and charges what does, deletions and terminal pods give the usage back."""

from __future__ import annotations

import asyncio

import pytest

from minik3s.api.errors import ForbiddenError, InvalidError
from minik3s.api.resources import CONFIGMAPS, PERSISTENTVOLUMECLAIMS, PODS, SERVICES, builtin_resources
from minik3s.controllers.resourcequota import ResourceQuotaController

QUOTAS = next(r for r in builtin_resources() if r.resource == "resourcequotas")


def pod(name: str, *, cpu: str | None = "100m", memory: str | None = "500Mi", limits: dict | None = None,
        deadline: int | None = None, priority_class: str | None = None) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources: dict = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    spec: dict = {"containers": [{"name": "app", "image": "nginx", "resources": resources}]}
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"metadata": {"name": name}, "spec": spec}


def quota(name: str, hard: dict, **spec: object) -> dict:
    return {"metadata": {"name": name}, "spec": {"hard": hard, **spec}}


async def start(harness) -> ResourceQuotaController:
    ctl = ResourceQuotaController(harness.client, harness.informers)
    harness.start(ctl.run)
    return ctl


async def used_is(harness, name: str, expected: dict, namespace: str = "default") -> dict:
    async def check():
        q = await harness.client.get(QUOTAS, name, namespace)
        st = q.get("status") or {}
        return q if st.get("used") == expected and st.get("hard") == q["spec"]["hard"] else None

    return await harness.eventually(check, what=f"quota {name} used == {expected}")


async def test_status_mirrors_hard_and_counts_existing_objects(harness):
    await harness.client.create(PODS, pod("before"), "default")
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "c1"}}, "default")
    await start(harness)
    await harness.client.create(QUOTAS, quota("q", {"pods": "10", "requests.cpu": "2", "requests.memory": "4Gi",
                                                    "limits.cpu": "4", "configmaps": "5", "count/configmaps": "5",
                                                    "services": "3"}), "default")
    # the bootstrap kube-root-ca.crt is not there (controllers off): one configmap; the
    # `kubernetes` Service of the default namespace counts
    q = await used_is(harness, "q", {"pods": "1", "requests.cpu": "100m", "requests.memory": "500Mi",
                                     "limits.cpu": "0", "configmaps": "1", "count/configmaps": "1", "services": "1"})
    assert q["status"]["hard"] == q["spec"]["hard"]


async def test_exceeded_quota_is_refused_with_upstreams_message_and_freed_by_delete(harness):
    await start(harness)
    await harness.client.create(QUOTAS, quota("compute", {"pods": "2", "requests.cpu": "1"}), "default")
    await used_is(harness, "compute", {"pods": "0", "requests.cpu": "0"})
    await harness.client.create(PODS, pod("a", cpu="300m"), "default")
    await harness.client.create(PODS, pod("b", cpu="300m"), "default")
    # admission charged both before they were stored
    q = await harness.client.get(QUOTAS, "compute", "default")
    assert q["status"]["used"] == {"pods": "2", "requests.cpu": "600m"}
    with pytest.raises(ForbiddenError) as e:
        await harness.client.create(PODS, pod("c", cpu="300m"), "default")
    assert str(e.value) == ('pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, '
                            'limited: pods=2')
    assert e.value.code == 403
    await harness.client.delete(PODS, "a", "default", grace_period_seconds=0)
    await used_is(harness, "compute", {"pods": "1", "requests.cpu": "300m"})
    with pytest.raises(ForbiddenError) as e:
        await harness.client.create(PODS, pod("d", cpu="800m"), "default")
    assert "exceeded quota: compute, requested: requests.cpu=800m, used: requests.cpu=300m, limited: requests.cpu=1" \
        in str(e.value)
    await harness.client.create(PODS, pod("e", cpu="700m"), "default")
    q = await harness.client.get(QUOTAS, "compute", "default")
    assert q["status"]["used"] == {"pods": "2", "requests.cpu": "1"}


async def test_cpu_quota_requires_every_container_to_state_it(harness):
    await start(harness)
    await harness.client.create(QUOTAS, quota("cq", {"requests.cpu": "2", "limits.memory": "2Gi"}), "default")
    await used_is(harness, "cq", {"requests.cpu": "0", "limits.memory": "0"})
    with pytest.raises(ForbiddenError) as e:
        await harness.client.create(PODS, pod("p", cpu=None), "default")
    assert str(e.value) == ('pods "p" is forbidden: failed quota: cq: must specify limits.memory for: app; '
                            'requests.cpu for: app')
    await harness.client.create(PODS, pod("ok", limits={"memory": "1Gi"}), "default")
    await used_is(harness, "cq", {"requests.cpu": "100m", "limits.memory": "1Gi"})


async def test_terminal_pods_give_their_usage_back(harness):
    await start(harness)
    await harness.client.create(QUOTAS, quota("q", {"pods": "1", "count/pods": "5"}), "default")
    await used_is(harness, "q", {"pods": "0", "count/pods": "0"})
    await harness.client.create(PODS, pod("job"), "default")

    def done(p):
        p["status"] = {**p.get("status", {}), "phase": "Succeeded"}

    cur = await harness.client.get(PODS, "job", "default")
    done(cur)
    await harness.client.update_status(PODS, cur)
    # a Succeeded pod is not charged as a pod, but still counted by count/pods
    await used_is(harness, "q", {"pods": "0", "count/pods": "1"})
    await harness.client.create(PODS, pod("next"), "default")


async def test_scoped_quotas_charge_only_their_pods(harness):
    await start(harness)
    await harness.client.create(QUOTAS, quota("be", {"pods": "1"}, scopes=["BestEffort"]), "default")
    await harness.client.create(QUOTAS, quota("term", {"pods": "1"}, scopes=["Terminating"]), "default")
    await harness.client.create(QUOTAS, quota("gold", {"pods": "1"}, scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["gold"]}]}), "default")
    for n in ("be", "term", "gold"):
        await used_is(harness, n, {"pods": "0"})
    await harness.client.create(PODS, pod("free1", cpu=None, memory=None), "default")
    with pytest.raises(ForbiddenError, match="exceeded quota: be,"):
        await harness.client.create(PODS, pod("free2", cpu=None, memory=None), "default")
    # pods with requests are not BestEffort, without a deadline not Terminating: no quota limits them
    await harness.client.create(PODS, pod("burst1"), "default")
    await harness.client.create(PODS, pod("burst2"), "default")
    await harness.client.create(PODS, pod("dl1", deadline=60), "default")
    with pytest.raises(ForbiddenError, match="exceeded quota: term,"):
        await harness.client.create(PODS, pod("dl2", deadline=60), "default")
    for n, expected in (("be", "1"), ("term", "1"), ("gold", "0")):
        q = await harness.client.get(QUOTAS, n, "default")
        assert q["status"]["used"] == {"pods": expected}, n


async def test_object_counts_services_and_claims(harness):
    await start(harness)
    await harness.client.create(QUOTAS, quota("objs", {
        "services": "3", "services.nodeports": "1", "services.loadbalancers": "0",
        "count/configmaps": "1", "persistentvolumeclaims": "2", "requests.storage": "10Gi",
        "gold.storageclass.storage.k8s.io/requests.storage": "1Gi"}), "default")
    await used_is(harness, "objs", {"services": "1", "services.nodeports": "0", "services.loadbalancers": "0",
                                    "count/configmaps": "0", "persistentvolumeclaims": "0", "requests.storage": "0",
                                    "gold.storageclass.storage.k8s.io/requests.storage": "0"})
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "one"}}, "default")
    with pytest.raises(ForbiddenError, match=r'configmaps "two" is forbidden: exceeded quota: objs, '
                                             r'requested: count/configmaps=1, used: count/configmaps=1, '
                                             r'limited: count/configmaps=1'):
        await harness.client.create(CONFIGMAPS, {"metadata": {"name": "two"}}, "default")
    svc = {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}], "selector": {"a": "b"}}}
    await harness.client.create(SERVICES, svc, "default")
    with pytest.raises(ForbiddenError, match="services.loadbalancers=1"):
        lb = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
        await harness.client.create(SERVICES, lb, "default")
    # an update that turns the Service into a NodePort one is charged its node port
    cur = await harness.client.get(SERVICES, "web", "default")
    cur["spec"]["type"] = "NodePort"
    await harness.client.update(SERVICES, cur)
    q = await harness.client.get(QUOTAS, "objs", "default")
    assert q["status"]["used"]["services.nodeports"] == "1" and q["status"]["used"]["services"] == "2"
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gold",
                                                    "resources": {"requests": {"storage": "2Gi"}}}}
    with pytest.raises(ForbiddenError, match=r"requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi"):
        await harness.client.create(PERSISTENTVOLUMECLAIMS, claim, "default")
    claim["spec"]["resources"]["requests"]["storage"] = "512Mi"
    await harness.client.create(PERSISTENTVOLUMECLAIMS, claim, "default")
    q = await harness.client.get(QUOTAS, "objs", "default")
    assert q["status"]["used"]["requests.storage"] == "512Mi"
    assert q["status"]["used"]["persistentvolumeclaims"] == "1"


async def test_concurrent_creates_never_exceed_the_quota(harness):
    await start(harness)
    await harness.client.create(QUOTAS, quota("five", {"pods": "5"}), "default")
    await used_is(harness, "five", {"pods": "0"})
    results = await asyncio.gather(*(harness.client.create(PODS, pod(f"p{i}"), "default") for i in range(12)),
                                   return_exceptions=True)
    ok = [r for r in results if isinstance(r, dict)]
    refused = [r for r in results if isinstance(r, ForbiddenError)]
    assert len(ok) == 5 and len(refused) == 7, results
    assert len(await harness.pods()) == 5
    q = await harness.client.get(QUOTAS, "five", "default")
    assert q["status"]["used"] == {"pods": "5"}


async def test_unsynced_quota_constrains_nothing_and_unknown_usage_is_refused(harness):
    # no controller: the quota has no status.hard yet, so nothing is constrained (as upstream)
    await harness.client.create(QUOTAS, quota("q", {"pods": "0"}), "default")
    await harness.client.create(PODS, pod("a"), "default")
    # a status that names pods in hard but has no used value for it: "status unknown"
    cur = await harness.client.get(QUOTAS, "q", "default")
    cur["status"] = {"hard": {"pods": "0"}}
    await harness.client.update_status(QUOTAS, cur)
    with pytest.raises(ForbiddenError) as e:
        await harness.client.create(PODS, pod("b"), "default")
    assert str(e.value) == 'pods "b" is forbidden: status unknown for quota: q, resources: pods'


async def test_dry_run_is_checked_but_not_charged(harness):
    await start(harness)
    await harness.client.create(QUOTAS, quota("q", {"pods": "1"}), "default")
    await used_is(harness, "q", {"pods": "0"})
    await harness.client.create(PODS, pod("a"), "default", dry_run=True)
    q = await harness.client.get(QUOTAS, "q", "default")
    assert q["status"]["used"] == {"pods": "0"}
    await harness.client.create(PODS, pod("a"), "default")
    with pytest.raises(ForbiddenError):
        await harness.client.create(PODS, pod("b"), "default", dry_run=True)


async def test_user_status_writes_through_the_main_resource_are_ignored(harness):
    await start(harness)
    body = quota("q", {"pods": "3"})
    body["status"] = {"hard": {"pods": "100"}, "used": {"pods": "0"}}
    created = await harness.client.create(QUOTAS, body, "default")
    assert "status" not in created
    await used_is(harness, "q", {"pods": "0"})
    cur = await harness.client.get(QUOTAS, "q", "default")
    cur["status"]["used"] = {"pods": "3"}
    cur["spec"]["hard"]["pods"] = "4"
    await harness.client.update(QUOTAS, cur)
    q = await used_is(harness, "q", {"pods": "0"})
    assert q["status"]["hard"] == {"pods": "4"}


@pytest.mark.parametrize(("spec", "messages"), [
    ({"hard": {"foo": "1"}}, ['spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully '
                              'qualified', 'spec.hard[foo]: Invalid value: "foo": must be a standard resource for '
                              'quota']),
    ({"hard": {"storage": "1Gi"}}, ['spec.hard[storage]: Invalid value: "storage": must be a standard resource for '
                                    'quota']),
    ({"hard": {"cpu": "-1"}}, ['spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0']),
    ({"hard": {"pods": "1500m"}}, ['spec.hard[pods]: Invalid value: resource.Quantity{i:resource.int64Amount'
                                   '{value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, '
                                   's:"1500m", Format:"DecimalSI"}: must be an integer']),
    ({"hard": {"pods": "1"}, "scopes": ["BestEffort", "NotBestEffort"]},
     ['spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes']),
    ({"hard": {"cpu": "1"}, "scopes": ["BestEffort"]},
     ['spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource']),
    ({"hard": {"pods": "1"}, "scopes": ["Everything"]},
     ['spec.scopes: Invalid value: []core.ResourceQuotaScope{"Everything"}: unsupported scope']),
    ({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In"}]}},
     ["spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is "
      "'In' or 'NotIn' for scope selector"]),
    ({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "Terminating", "operator": "In", "values": ["x"]}]}},
     ["spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope is any of "
      "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
      "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"]),
])
async def test_invalid_quotas_are_refused_with_field_paths(harness, spec, messages):
    with pytest.raises(InvalidError) as e:
        await harness.client.create(QUOTAS, {"metadata": {"name": "bad"}, "spec": spec}, "default")
    got = [f"{c['field']}: {c['message']}" for c in e.value.causes]
    assert got == messages


async def test_valid_names_and_immutable_scopes(harness):
    ok = quota("ok", {"count/deployments.apps": "3", "requests.nvidia.com/gpu": "1500m", "hugepages-2Mi": "1Gi",
                      "gold.storageclass.storage.k8s.io/persistentvolumeclaims": "2"})
    await harness.client.create(QUOTAS, ok, "default")
    await harness.client.create(QUOTAS, quota("s", {"pods": "1"}, scopes=["Terminating"]), "default")
    cur = await harness.client.get(QUOTAS, "s", "default")
    cur["spec"]["scopes"] = ["NotTerminating"]
    with pytest.raises(InvalidError, match=r'spec.scopes: Invalid value: \[\]core.ResourceQuotaScope'
                                           r'\{"NotTerminating"\}: field is immutable'):
        await harness.client.update(QUOTAS, cur)


async def test_the_plugin_can_be_disabled_as_kube_apiservers_flag_does(tmp_path):
    from minik3s.config import ServerConfig
    from minik3s.server import start as start_server
    from minik3s.server import stop

    cfg = ServerConfig(data_dir=tmp_path / "srv", port=0, disable={"scheduler", "controllers", "kubelet", "descheduler"},
                       disable_admission_plugins={"ResourceQuota"})
    rs = await start_server(cfg)
    try:
        await rs.client.create(QUOTAS, quota("none", {"pods": "0"}), "default")
        cur = await rs.client.get(QUOTAS, "none", "default")
        cur["status"] = {"hard": {"pods": "0"}, "used": {"pods": "0"}}
        await rs.client.update_status(QUOTAS, cur)
        await rs.client.create(PODS, pod("admitted"), "default")  # would be "exceeded quota" with the plugin on
        q = await rs.client.get(QUOTAS, "none", "default")
        assert q["status"]["used"] == {"pods": "0"}
    finally:
        await stop(rs)
    with pytest.raises(ValueError, match="cannot be disabled"):
        ServerConfig(data_dir=tmp_path / "x", disable_admission_plugins={"LimitRanger"})


async def test_a_deployment_over_quota_reports_replica_failure_until_the_quota_grows(harness):
    from minik3s.api.resources import DEPLOYMENTS
    from minik3s.controllers.deployment import DeploymentController
    from minik3s.controllers.replicaset import ReplicaSetController

    rq = ResourceQuotaController(harness.client, harness.informers)
    rs = ReplicaSetController(harness.client, harness.informers)
    dc = DeploymentController(harness.client, harness.informers)
    harness.start(rq.run, rs.run, dc.run)
    await harness.client.create(QUOTAS, quota("q", {"pods": "1"}), "default")
    await used_is(harness, "q", {"pods": "0"})
    await harness.client.create(DEPLOYMENTS, harness.deploy("web", 2), "default")

    async def failure():
        d = await harness.client.get(DEPLOYMENTS, "web", "default")
        conds = {c["type"]: c for c in (d.get("status") or {}).get("conditions") or []}
        return conds.get("ReplicaFailure")

    cond = await harness.eventually(failure, what="ReplicaFailure on the Deployment")
    assert cond["status"] == "True" and cond["reason"] == "FailedCreate"
    assert "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1" in cond["message"]
    await harness.mutate(QUOTAS, "q", lambda q: q["spec"]["hard"].update(pods="2"))

    async def cleared():
        return await failure() is None and len(await harness.pods(selector="app=web")) == 2

    await harness.eventually(cleared, what="ReplicaFailure gone, 2 pods")
