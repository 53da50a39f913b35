"""Pods made from templates by the StatefulSet and DaemonSet controllers carry what upstream's
controller.GetPodFromTemplate copies (labels, annotations, finalizers, spec, one controller
ownerReference) plus each controller's own identity."""

from __future__ import annotations

from minik3s.controllers.daemonset import new_daemon_pod
from minik3s.controllers.statefulset import new_pod

TEMPLATE = {
    "metadata": {"labels": {"app": "db"}, "annotations": {"a": "1"}, "finalizers": ["example.com/keep"]},
    "spec": {"containers": [{"name": "c", "image": "img"}]},
}


def test_statefulset_pod_keeps_template_metadata_and_gets_its_identity():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "db", "namespace": "ns", "uid": "u1"},
           "spec": {"serviceName": "db-svc", "template": TEMPLATE}}
    revision = {"metadata": {"name": "db-abc"}, "data": {"spec": {"template": TEMPLATE}}}
    pod = new_pod(sts, revision, 2)
    m = pod["metadata"]
    assert m["name"] == "db-2" and "generateName" not in m and m["namespace"] == "ns"
    assert m["labels"] == {"app": "db", "statefulset.kubernetes.io/pod-name": "db-2",
                           "apps.kubernetes.io/pod-index": "2", "controller-revision-hash": "db-abc"}
    assert m["annotations"] == {"a": "1"} and m["finalizers"] == ["example.com/keep"]
    assert [(r["kind"], r["name"], r["controller"]) for r in m["ownerReferences"]] == [("StatefulSet", "db", True)]
    assert pod["spec"]["hostname"] == "db-2" and pod["spec"]["subdomain"] == "db-svc"
    assert TEMPLATE["metadata"]["labels"] == {"app": "db"}  # the template is not changed


def test_daemon_pod_keeps_template_metadata_and_is_pinned():
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
          "metadata": {"name": "agent", "namespace": "ns", "uid": "u2", "generation": 3},
          "spec": {"template": TEMPLATE}}
    pod = new_daemon_pod(ds, "n1", "h1")
    m = pod["metadata"]
    assert m["generateName"] == "agent-"
    assert m["labels"] == {"app": "db", "controller-revision-hash": "h1", "pod-template-generation": "3"}
    assert m["annotations"] == {"a": "1"} and m["finalizers"] == ["example.com/keep"]
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n1"]
    assert TEMPLATE["spec"] == {"containers": [{"name": "c", "image": "img"}]}
