"""Namespace controller: deleting a namespace empties it, then finalizes it."""

from __future__ import annotations

from minik3s.api.resources import CONFIGMAPS, NAMESPACES, PODS
from minik3s.controllers.namespace import NamespaceController


async def test_namespace_deletion_waits_for_content_then_finalizes(harness):
    ctl = NamespaceController(harness.client, harness.informers, recheck_delay=0.05)
    harness.start(ctl.run, harness.kubelet)
    await harness.client.create(NAMESPACES, {"metadata": {"name": "team"}})
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "plain"}}, "team")
    await harness.client.create(CONFIGMAPS, {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}, "team")
    await harness.client.create(PODS, {"metadata": {"name": "p"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}}, "team")
    await harness.client.delete(NAMESPACES, "team")

    async def waiting_on_finalizer():
        ns = await harness.client.get(NAMESPACES, "team")
        conds = {c["type"]: c for c in (ns.get("status") or {}).get("conditions") or []}
        c = conds.get("NamespaceFinalizersRemaining")
        return ns if c and c["status"] == "True" else None

    ns = await harness.eventually(waiting_on_finalizer, what="NamespaceFinalizersRemaining")
    assert ns["status"]["phase"] == "Terminating"
    conds = {c["type"]: c for c in ns["status"]["conditions"]}
    assert conds["NamespaceFinalizersRemaining"]["message"] == (
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances")
    assert conds["NamespaceContentRemaining"]["reason"] == "SomeResourcesRemain"
    assert conds["NamespaceDeletionDiscoveryFailure"]["status"] == "False"
    assert [c["metadata"]["name"] for c in (await harness.client.list(CONFIGMAPS, "team"))["items"]] == ["held"]
    await harness.client.patch(CONFIGMAPS, "held", {"metadata": {"finalizers": None}}, "team")

    await harness.eventually(lambda: harness.gone(NAMESPACES, "team", None), what="namespace removed")
