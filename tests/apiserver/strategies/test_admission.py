"""Admission: namespace lifecycle, priority, default tolerations, one global default class."""

import pytest

from apiserver.strategies import admit
from minik3s.api.errors import ForbiddenError, NotFoundError


class Store:
    """A lookup over a dict of (resource, namespace, name) -> object, with listing."""

    def __init__(self, *objs):
        self.objs = {}
        for resource, ns, obj in objs:
            self.objs[(resource, ns, obj["metadata"]["name"])] = obj

    def __call__(self, group, resource, namespace, name):
        return self.objs.get((resource, namespace, name))

    def list(self, group, resource, namespace):
        return [o for (r, ns, _), o in self.objs.items() if r == resource]


def ns(name, phase="Active"):
    return ("namespaces", None, {"metadata": {"name": name}, "status": {"phase": phase}})


def pc(name, value, *, default=False, policy="PreemptLowerPriority"):
    return ("priorityclasses", None, {"metadata": {"name": name}, "value": value, "globalDefault": default,
                                      "preemptionPolicy": policy})


def pod(name="p", **spec):
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


async def test_pod_without_class_gets_priority_zero_and_default_tolerations():
    p = pod()
    await admit("", "Pod", "CREATE", p, None, Store(ns("default")))
    assert p["spec"]["priority"] == 0
    assert p["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    assert "priorityClassName" not in p["spec"]
    assert p["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    ]
    # the ServiceAccount plugin is not given here (as --disable-admission-plugins=ServiceAccount):
    # no default account (test_service_account_admission.py covers the plugin)
    assert "serviceAccountName" not in p["spec"]


@pytest.mark.parametrize(
    "spec, store, priority, policy, class_name",
    [
        pytest.param({"priorityClassName": "high"}, [pc("high", 1000)], 1000, "PreemptLowerPriority", "high",
                     id="named-class-resolves-value"),
        pytest.param({"priorityClassName": "batch"}, [pc("batch", 10, policy="Never")], 10, "Never", "batch",
                     id="class-preemption-policy-copied"),
        pytest.param({}, [pc("dflt", 50, default=True)], 50, "PreemptLowerPriority", "dflt",
                     id="global-default-applies"),
        pytest.param({}, [pc("d2", 70, default=True), pc("d1", 60, default=True)], 60, "PreemptLowerPriority", "d1",
                     id="racing-defaults-lowest-wins"),
        pytest.param({"priorityClassName": "system-node-critical"}, [], 2000001000, "PreemptLowerPriority",
                     "system-node-critical", id="system-class-always-exists"),
        pytest.param({"priorityClassName": "system-cluster-critical"}, [], 2000000000, "PreemptLowerPriority",
                     "system-cluster-critical", id="system-cluster-critical"),
        pytest.param({"priorityClassName": "high", "priority": 1000}, [pc("high", 1000)], 1000, "PreemptLowerPriority",
                     "high", id="matching-user-priority-accepted"),
    ],
)
async def test_priority_resolution(spec, store, priority, policy, class_name):
    p = pod(**spec)
    await admit("", "Pod", "CREATE", p, None, Store(ns("default"), *store))
    assert (p["spec"]["priority"], p["spec"]["preemptionPolicy"], p["spec"].get("priorityClassName")) == (
        priority, policy, class_name)


async def test_unknown_priority_class_forbidden():
    with pytest.raises(ForbiddenError) as e:
        await admit("", "Pod", "CREATE", pod("x", priorityClassName="foo"), None, Store(ns("default")))
    assert e.value.code == 403
    assert e.value.message == 'pods "x" is forbidden: no PriorityClass with name foo was found'
    assert e.value.to_status()["details"] == {"name": "x", "kind": "pods"}


async def test_user_priority_disagreeing_with_class_forbidden():
    with pytest.raises(ForbiddenError) as e:
        await admit("", "Pod", "CREATE", pod("x", priorityClassName="high", priority=5), None,
                    Store(ns("default"), pc("high", 1000)))
    assert e.value.message == ('pods "x" is forbidden: the integer value of priority (5) must not be provided in pod '
                               "spec; priority admission controller computed 1000 from the given PriorityClass name")


async def test_user_preemption_policy_disagreeing_with_class_forbidden():
    with pytest.raises(ForbiddenError) as e:
        await admit("", "Pod", "CREATE", pod("x", priorityClassName="b", preemptionPolicy="PreemptLowerPriority"), None,
                    Store(ns("default"), pc("b", 1, policy="Never")))
    assert "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided" in e.value.message


@pytest.mark.parametrize(
    "tolerations, added",
    [
        pytest.param([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                       "tolerationSeconds": 10}], ["node.kubernetes.io/unreachable"], id="own-not-ready-kept"),
        pytest.param([{"operator": "Exists"}], [], id="tolerate-everything-needs-nothing"),
        pytest.param([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}],
                     ["node.kubernetes.io/not-ready"], id="empty-effect-counts"),
        pytest.param([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoSchedule"}],
                     ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"],
                     id="noschedule-toleration-does-not-count"),
    ],
)
async def test_default_toleration_seconds(tolerations, added):
    p = pod(tolerations=[dict(t) for t in tolerations])
    await admit("", "Pod", "CREATE", p, None, Store(ns("default")))
    new = p["spec"]["tolerations"][len(tolerations):]
    assert [t["key"] for t in new] == added
    assert all(t["tolerationSeconds"] == 300 and t["effect"] == "NoExecute" for t in new)


async def test_pod_update_is_not_mutated():
    p = pod()
    await admit("", "Pod", "UPDATE", p, pod(), Store(ns("default")))
    assert "priority" not in p["spec"] and "tolerations" not in p["spec"]


async def test_create_in_missing_namespace_not_found():
    with pytest.raises(NotFoundError) as e:
        await admit("", "ConfigMap", "CREATE", {"metadata": {"name": "c", "namespace": "nope"}}, None, Store())
    assert e.value.message == 'namespaces "nope" not found'
    assert e.value.code == 404


async def test_create_in_terminating_namespace_forbidden():
    with pytest.raises(ForbiddenError) as e:
        await admit("apps", "Deployment", "CREATE", {"metadata": {"name": "d", "namespace": "gone"}}, None,
                    Store(ns("gone", "Terminating")))
    assert e.value.message == ('deployments.apps "d" is forbidden: unable to create new content in namespace gone '
                               "because it is being terminated")
    assert e.value.causes == [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                               "message": "namespace gone is being terminated"}]


async def test_updates_in_terminating_namespace_allowed():
    await admit("", "ConfigMap", "UPDATE", {"metadata": {"name": "c", "namespace": "gone"}}, {}, Store(ns("gone", "Terminating")))


async def test_immortal_namespace_delete_forbidden():
    with pytest.raises(ForbiddenError) as e:
        await admit("", "Namespace", "DELETE", {"metadata": {"name": "default"}}, None, Store())
    assert e.value.message == 'namespaces "default" is forbidden: this namespace may not be deleted'


@pytest.mark.parametrize(
    "operation, name, allowed",
    [
        pytest.param("CREATE", "second", False, id="second-default-create-forbidden"),
        pytest.param("UPDATE", "second", False, id="marking-another-default-forbidden"),
        pytest.param("UPDATE", "first", True, id="re-marking-the-default-allowed"),
    ],
)
async def test_only_one_global_default(operation, name, allowed):
    store = Store(pc("first", 10, default=True))
    obj = {"metadata": {"name": name}, "value": 20, "globalDefault": True}
    if allowed:
        await admit("scheduling.k8s.io", "PriorityClass", operation, obj, None, store)
        return
    with pytest.raises(ForbiddenError) as e:
        await admit("scheduling.k8s.io", "PriorityClass", operation, obj, None, store)
    assert e.value.message == ('priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is '
                               "already marked as default. Only one default can exist")


async def test_lookup_without_list_method_uses_name_none():
    objs = {"default": {"metadata": {"name": "default"}, "status": {"phase": "Active"}}}
    pcs = [{"metadata": {"name": "d"}, "value": 7, "globalDefault": True}]

    def lookup(group, resource, namespace, name):
        if resource == "priorityclasses":
            return pcs if name is None else next((p for p in pcs if p["metadata"]["name"] == name), None)
        return objs.get(name)

    p = pod()
    await admit("", "Pod", "CREATE", p, None, lookup)
    assert p["spec"]["priority"] == 7
