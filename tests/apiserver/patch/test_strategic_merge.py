"""Strategic merge patch: the patches kubectl and the Python client really send, per upstream semantics."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.patch import PatchError
from apiserver.patch.strategic_merge import apply_strategic_merge_patch, patch_meta_for


def _pod(spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec,
        **extra,
    }


def _spec_of(result: dict[str, Any]) -> Any:
    return result["spec"]


POD_CASES = [
    pytest.param(
        {"containers": [{"name": "a", "image": "nginx:1", "args": ["x"]}, {"name": "b", "image": "busybox"}]},
        {"spec": {"containers": [{"name": "a", "image": "nginx:2"}]}},
        {"containers": [{"name": "a", "image": "nginx:2", "args": ["x"]}, {"name": "b", "image": "busybox"}]},
        id="containers-merge-by-name-keeping-other-fields-and-siblings",
    ),
    pytest.param(
        {"containers": [{"name": "a", "image": "nginx"}, {"name": "side", "image": "busybox"}]},
        {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}},
        {"containers": [{"name": "a", "image": "nginx"}]},
        id="patch-delete-removes-container-by-name",
    ),
    pytest.param(
        {"containers": [{"name": "a", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]},
        {"spec": {"containers": [{"name": "a", "env": [{"name": "B", "$patch": "delete"}]}]}},
        {"containers": [{"name": "a", "env": [{"name": "A", "value": "1"}]}]},
        id="env-var-removed-by-name",
    ),
    pytest.param(
        {"containers": [{"name": "a", "env": [{"name": "A", "value": "1"}]}]},
        {
            "spec": {
                "containers": [
                    {"name": "a", "env": [{"name": "A", "value": "2"}, {"name": "C", "value": "3"}]}
                ]
            }
        },
        {"containers": [{"name": "a", "env": [{"name": "A", "value": "2"}, {"name": "C", "value": "3"}]}]},
        id="env-var-changed-and-added",
    ),
    pytest.param(
        {
            "containers": [
                {"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}]}
            ]
        },
        {
            "spec": {
                "containers": [
                    {"name": "a", "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 8080}]}
                ]
            }
        },
        {
            "containers": [
                {
                    "name": "a",
                    "ports": [
                        {"containerPort": 80, "protocol": "TCP", "name": "http"},
                        {"containerPort": 8080},
                        {"containerPort": 443},
                    ],
                }
            ]
        },
        id="ports-merge-by-container-port-new-port-before-later-server-only-ports",
    ),
    pytest.param(
        {"containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 443}]}]},
        {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 443, "$patch": "delete"}]}]}},
        {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]},
        id="port-removed-by-container-port",
    ),
    pytest.param(
        {"containers": [{"name": "a", "image": "x"}], "tolerations": [{"key": "a", "operator": "Exists"}]},
        {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
        {"containers": [{"name": "a", "image": "x"}], "tolerations": [{"key": "b", "operator": "Exists"}]},
        id="tolerations-have-no-merge-key-so-are-replaced",
    ),
    pytest.param(
        {"containers": [{"name": "a", "command": ["sh", "-c"], "args": ["a", "b"]}]},
        {"spec": {"containers": [{"name": "a", "args": ["x"]}]}},
        {"containers": [{"name": "a", "command": ["sh", "-c"], "args": ["x"]}]},
        id="args-are-atomic-and-replaced",
    ),
    pytest.param(
        {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        {"spec": {"containers": [{"name": "c", "image": "i"}, {"name": "a", "image": "i"}]}},
        {"containers": [{"name": "b"}, {"name": "c", "image": "i"}, {"name": "a", "image": "i"}]},
        id="patched-items-keep-patch-order-server-only-items-interleave-by-server-position",
    ),
    pytest.param(
        {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}]}},
        {"containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}]},
        id="set-element-order-reorders-without-changing-items",
    ),
    pytest.param(
        {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}},
        {"containers": [{"name": "b"}, {"name": "a"}, {"name": "c"}]},
        id="set-element-order-leaves-unlisted-server-items-after-their-predecessors",
    ),
    pytest.param(
        {"containers": [{"name": "a"}]},
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "new"}, {"name": "a"}],
                "containers": [{"name": "new", "image": "n"}],
            }
        },
        {"containers": [{"name": "new", "image": "n"}, {"name": "a"}]},
        id="set-element-order-places-new-item-first",
    ),
    pytest.param(
        {"containers": [{"name": "a"}], "volumes": [{"name": "v", "emptyDir": {}}]},
        {
            "spec": {
                "volumes": [{"name": "v", "$retainKeys": ["name", "configMap"], "configMap": {"name": "cm"}}]
            }
        },
        {"containers": [{"name": "a"}], "volumes": [{"name": "v", "configMap": {"name": "cm"}}]},
        id="retain-keys-drops-the-old-volume-source",
    ),
    pytest.param(
        {"containers": [{"name": "a"}]},
        {"spec": {"containers": [{"$patch": "replace"}, {"name": "z", "image": "zz"}]}},
        {"containers": [{"name": "z", "image": "zz"}]},
        id="patch-replace-element-replaces-whole-keyed-list",
    ),
    pytest.param(
        {"containers": [{"name": "a"}], "nodeSelector": {"a": "1", "b": "2"}},
        {"spec": {"nodeSelector": {"$patch": "replace", "c": "3"}}},
        {"containers": [{"name": "a"}], "nodeSelector": {"c": "3"}},
        id="patch-replace-in-map-replaces-the-map",
    ),
    pytest.param(
        {"containers": [{"name": "a"}], "nodeSelector": {"a": "1"}},
        {"spec": {"nodeSelector": {"$patch": "delete"}}},
        {"containers": [{"name": "a"}], "nodeSelector": {}},
        id="patch-delete-in-map-empties-the-map",
    ),
    pytest.param(
        {"containers": [{"name": "a"}], "nodeName": "n1", "priority": 5},
        {"spec": {"nodeName": None, "priority": 7}},
        {"containers": [{"name": "a"}], "priority": 7},
        id="null-deletes-and-scalars-replace",
    ),
    pytest.param(
        {"containers": [{"name": "a"}]},
        {
            "spec": {
                "schedulingGates": [{"name": "g", "$patch": "delete"}],
                "initContainers": [{"name": "i", "x": None}],
            }
        },
        {"containers": [{"name": "a"}], "schedulingGates": [], "initContainers": [{"name": "i"}]},
        id="patching-absent-lists-processes-directives",
    ),
    pytest.param(
        {"containers": [{"name": "a"}]},
        {"spec": {"nodeSelector": {"$patch": "replace", "c": "3"}, "affinity": {"$patch": "delete"}}},
        {"containers": [{"name": "a"}]},
        id="absent-maps-carrying-patch-directives-are-dropped-as-upstream",
    ),
    pytest.param(
        {"containers": [{"name": "a"}], "schedulingGates": [{"name": "g1"}, {"name": "g2"}]},
        {"spec": {"schedulingGates": [{"name": "g1", "$patch": "delete"}]}},
        {"containers": [{"name": "a"}], "schedulingGates": [{"name": "g2"}]},
        id="scheduling-gate-removed-by-name",
    ),
    pytest.param(
        {"containers": [{"name": "a", "volumeMounts": [{"mountPath": "/a", "name": "v1"}]}]},
        {
            "spec": {
                "containers": [
                    {
                        "name": "a",
                        "volumeMounts": [
                            {"mountPath": "/a", "readOnly": True},
                            {"mountPath": "/b", "name": "v2"},
                        ],
                    }
                ]
            }
        },
        {
            "containers": [
                {
                    "name": "a",
                    "volumeMounts": [
                        {"mountPath": "/a", "name": "v1", "readOnly": True},
                        {"mountPath": "/b", "name": "v2"},
                    ],
                }
            ]
        },
        id="volume-mounts-merge-by-mount-path",
    ),
]


@pytest.mark.parametrize(("spec", "patch", "expected_spec"), POD_CASES)
def test_pod_spec_patches(spec: dict[str, Any], patch: dict[str, Any], expected_spec: dict[str, Any]) -> None:
    pod = _pod(spec)
    before = copy.deepcopy(pod)
    patch_before = copy.deepcopy(patch)
    result = apply_strategic_merge_patch(pod, patch, patch_meta_for("v1", "Pod"))  # type: ignore[arg-type]
    assert _spec_of(result) == expected_spec
    assert result["metadata"] == pod["metadata"]
    assert pod == before and patch == patch_before


def test_kubectl_apply_second_time_removes_container_env_port_and_replaces_args_and_tolerations() -> None:
    """The observed kubectl apply patch of api-and-kubectl.md §5.5, on a Deployment."""
    live = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "annotations": {"a": "1"}},
        "spec": {
            "replicas": 2,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx:1.25",
                            "args": ["x", "y"],
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            "ports": [
                                {"containerPort": 80, "protocol": "TCP"},
                                {"containerPort": 443, "protocol": "TCP"},
                            ],
                            "imagePullPolicy": "IfNotPresent",
                        },
                        {"name": "side", "image": "busybox"},
                    ],
                    "tolerations": [{"key": "a", "operator": "Exists"}],
                    "restartPolicy": "Always",
                },
            },
        },
    }
    patch = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {
            "replicas": 3,
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "c"}],
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx:1.26",
                            "$setElementOrder/env": [{"name": "A"}],
                            "$setElementOrder/ports": [{"containerPort": 80}],
                            "args": ["x"],
                            "env": [{"name": "B", "$patch": "delete"}],
                            "ports": [{"containerPort": 443, "$patch": "delete"}],
                        },
                        {"name": "side", "$patch": "delete"},
                    ],
                    "tolerations": [{"key": "b", "operator": "Exists"}],
                }
            },
        },
    }
    result = apply_strategic_merge_patch(live, patch, patch_meta_for("apps/v1", "Deployment"))  # type: ignore[arg-type]
    assert result == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "annotations": {"a": "1", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
        },
        "spec": {
            "replicas": 3,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx:1.26",
                            "args": ["x"],
                            "env": [{"name": "A", "value": "1"}],
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "imagePullPolicy": "IfNotPresent",
                        }
                    ],
                    "tolerations": [{"key": "b", "operator": "Exists"}],
                    "restartPolicy": "Always",
                },
            },
        },
    }


@pytest.mark.parametrize(
    ("api_version", "kind", "live", "patch", "expected"),
    [
        pytest.param(
            "v1",
            "Pod",
            {"metadata": {"finalizers": ["a", "b"]}},
            {"metadata": {"finalizers": ["c", "a"]}},
            {"metadata": {"finalizers": ["c", "a", "b"]}},
            id="finalizers-merge-as-an-ordered-set",
        ),
        pytest.param(
            "v1",
            "Pod",
            {"metadata": {"finalizers": ["a", "b", "c"]}},
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}},
            {"metadata": {"finalizers": ["a", "c"]}},
            id="delete-from-primitive-list-finalizers",
        ),
        pytest.param(
            "v1",
            "Pod",
            {"metadata": {"finalizers": ["a", "b"]}},
            {"metadata": {"$setElementOrder/finalizers": ["b", "a"]}},
            {"metadata": {"finalizers": ["b", "a"]}},
            id="set-element-order-on-primitive-list",
        ),
        pytest.param(
            "v1",
            "Pod",
            {"metadata": {"labels": {"app": "x", "tier": "web"}}},
            {"metadata": {"labels": {"tier": None, "zone": "a"}}},
            {"metadata": {"labels": {"app": "x", "zone": "a"}}},
            id="labels-merge-and-null-deletes",
        ),
        pytest.param(
            "v1",
            "Pod",
            {"metadata": {"ownerReferences": [{"uid": "1", "name": "rs", "controller": True}]}},
            {"metadata": {"ownerReferences": [{"uid": "1", "controller": False}, {"uid": "2", "name": "x"}]}},
            {
                "metadata": {
                    "ownerReferences": [
                        {"uid": "1", "name": "rs", "controller": False},
                        {"uid": "2", "name": "x"},
                    ]
                }
            },
            id="owner-references-merge-by-uid",
        ),
        pytest.param(
            "v1",
            "Pod",
            {
                "status": {
                    "phase": "Pending",
                    "conditions": [
                        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
                        {"type": "Ready", "status": "False"},
                    ],
                }
            },
            {"status": {"conditions": [{"type": "PodScheduled", "status": "True", "reason": None}]}},
            {
                "status": {
                    "phase": "Pending",
                    "conditions": [
                        {"type": "PodScheduled", "status": "True"},
                        {"type": "Ready", "status": "False"},
                    ],
                }
            },
            id="pod-conditions-merge-by-type",
        ),
        pytest.param(
            "v1",
            "Pod",
            {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
            {
                "status": {
                    "conditions": [
                        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
                    ]
                }
            },
            {
                "status": {
                    "conditions": [
                        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
                        {"type": "Ready", "status": "True"},
                    ]
                }
            },
            id="new-condition-type-goes-before-server-only-ones-without-set-element-order",
        ),
        pytest.param(
            "v1",
            "Node",
            {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}},
            {"spec": {"taints": [{"effect": "NoSchedule", "key": "key", "value": "value"}]}},
            {"spec": {"taints": [{"effect": "NoSchedule", "key": "key", "value": "value"}]}},
            id="kubectl-taint-replaces-whole-taint-list",
        ),
        pytest.param(
            "v1",
            "Node",
            {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}},
            {"spec": {"taints": None}},
            {"spec": {}},
            id="kubectl-taint-removing-last-sends-null",
        ),
        pytest.param(
            "v1",
            "Node",
            {"spec": {"podCIDR": "10.0.0.0/24"}},
            {"spec": {"unschedulable": True}},
            {"spec": {"podCIDR": "10.0.0.0/24", "unschedulable": True}},
            id="kubectl-cordon",
        ),
        pytest.param(
            "v1",
            "Node",
            {"spec": {"podCIDR": "10.0.0.0/24", "unschedulable": True}},
            {"spec": {"unschedulable": None}},
            {"spec": {"podCIDR": "10.0.0.0/24"}},
            id="kubectl-uncordon-null-deletes",
        ),
        pytest.param(
            "v1",
            "Node",
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "True"},
                        {"type": "MemoryPressure", "status": "False"},
                    ],
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                }
            },
            {
                "status": {
                    "conditions": [{"type": "Ready", "status": "Unknown"}],
                    "addresses": [{"type": "Hostname", "address": "n1"}],
                }
            },
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "Unknown"},
                        {"type": "MemoryPressure", "status": "False"},
                    ],
                    "addresses": [
                        {"type": "Hostname", "address": "n1"},
                        {"type": "InternalIP", "address": "10.0.0.1"},
                    ],
                }
            },
            id="node-conditions-and-addresses-merge-by-type",
        ),
        pytest.param(
            "v1",
            "Service",
            {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}},
            {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}},
            {"spec": {"ports": [{"port": 80, "targetPort": 9090}, {"port": 443}]}},
            id="service-ports-merge-by-port",
        ),
        pytest.param(
            "apps/v1",
            "Deployment",
            {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
            {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
            {"spec": {"strategy": {"type": "Recreate"}}},
            id="deployment-strategy-retain-keys",
        ),
        pytest.param(
            "apps/v1",
            "Deployment",
            {
                "status": {
                    "conditions": [
                        {"type": "Available", "status": "True"},
                        {"type": "Progressing", "status": "True"},
                    ]
                }
            },
            {"status": {"conditions": [{"type": "Progressing", "status": "False"}]}},
            {
                "status": {
                    "conditions": [
                        {"type": "Available", "status": "True"},
                        {"type": "Progressing", "status": "False"},
                    ]
                }
            },
            id="deployment-status-conditions-by-type",
        ),
        pytest.param(
            "apps/v1",
            "ReplicaSet",
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}}},
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}},
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}},
            id="replicaset-template-containers-by-name",
        ),
        pytest.param(
            "batch/v1",
            "CronJob",
            {
                "spec": {
                    "jobTemplate": {
                        "spec": {
                            "template": {
                                "spec": {
                                    "containers": [{"name": "c", "image": "a"}, {"name": "d", "image": "d"}]
                                }
                            }
                        }
                    }
                }
            },
            {
                "spec": {
                    "jobTemplate": {
                        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}
                    }
                }
            },
            {
                "spec": {
                    "jobTemplate": {
                        "spec": {
                            "template": {
                                "spec": {
                                    "containers": [{"name": "c", "image": "b"}, {"name": "d", "image": "d"}]
                                }
                            }
                        }
                    }
                }
            },
            id="cronjob-job-template-containers-by-name",
        ),
        pytest.param(
            "policy/v1",
            "PodDisruptionBudget",
            {"spec": {"selector": {"matchLabels": {"a": "1", "b": "2"}}}},
            {"spec": {"selector": {"matchLabels": {"c": "3"}}}},
            {"spec": {"selector": {"matchLabels": {"c": "3"}}}},
            id="pdb-selector-has-replace-strategy",
        ),
        pytest.param(
            "v1",
            "ConfigMap",
            {"data": {"a": "1", "b": "2"}},
            {"data": {"a": None, "c": "3"}},
            {"data": {"b": "2", "c": "3"}},
            id="configmap-data-merges",
        ),
    ],
)
def test_kind_specific_patches(
    api_version: str, kind: str, live: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]
) -> None:
    meta = patch_meta_for(api_version, kind)
    assert meta is not None
    assert apply_strategic_merge_patch(live, patch, meta) == expected


@pytest.mark.parametrize(
    ("api_version", "kind", "known"),
    [
        pytest.param("v1", "Pod", True, id="pod-is-built-in"),
        pytest.param("coordination.k8s.io/v1", "Lease", True, id="lease-is-built-in"),
        pytest.param("scheduling.k8s.io/v1", "PriorityClass", True, id="priorityclass-is-built-in"),
        pytest.param("scheduling.x-k8s.io/v1alpha1", "PodGroup", False, id="crd-has-no-patch-meta-so-415"),
        pytest.param("apps/v1beta9", "Deployment", False, id="unknown-version-has-no-patch-meta"),
    ],
)
def test_patch_meta_only_for_built_in_kinds(api_version: str, kind: str, known: bool) -> None:
    assert (patch_meta_for(api_version, kind) is not None) is known


@pytest.mark.parametrize(
    ("patch", "code"),
    [
        pytest.param(["not", "an", "object"], 400, id="list-body-is-bad-request"),
        pytest.param(
            {"spec": {"containers": [{"image": "no-name"}]}}, 500, id="keyed-item-without-merge-key"
        ),
        pytest.param(
            {"spec": {"containers": [{"image": "x", "$patch": "delete"}]}},
            500,
            id="delete-directive-without-merge-key",
        ),
        pytest.param(
            {"spec": {"volumes": [{"name": "v", "$retainKeys": ["name"], "secret": {}}]}},
            400,
            id="content-outside-retain-keys",
        ),
        pytest.param(
            {"spec": {"$setElementOrder/containers": {"name": "a"}}}, 500, id="set-element-order-not-a-list"
        ),
    ],
)
def test_malformed_patches_are_rejected(patch: Any, code: int) -> None:
    pod = _pod({"containers": [{"name": "a"}], "volumes": [{"name": "v", "emptyDir": {}}]})
    with pytest.raises(PatchError) as info:
        apply_strategic_merge_patch(pod, patch, patch_meta_for("v1", "Pod"))  # type: ignore[arg-type]
    assert info.value.code == code
